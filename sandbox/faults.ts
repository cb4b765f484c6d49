// Fault injection: per-route faults, webhook delivery faults, global latency, legacy defect mode.
import type { FaultConfig, FaultRule, RouteFaultRule, WebhookFaultRule } from './types';

const ROUTE_KINDS = new Set(['429', '503', 'reset', 'html500', 'slow', 'truncated', 'longPage']);
const WEBHOOK_KINDS = new Set(['drop', 'duplicate', 'delay']);
const ROUTES = new Set([
	'createTask',
	'completed',
	'listQueues',
	'getQueue',
	'flush',
	'getWebhook',
	'setWebhook',
	'*',
]);

/** mulberry32: a small seeded PRNG, so fault tests are reproducible. */
export function mulberry32(seed: number): () => number {
	let a = seed >>> 0;
	return () => {
		a = (a + 0x6d2b79f5) >>> 0;
		let t = a;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
}

interface Counted<T> {
	rule: T;
	remaining: number;
	/** matching requests let through so far (the rule's `after`) */
	passed: number;
}

export class Faults {
	private routeRules: Array<Counted<RouteFaultRule>> = [];
	private webhookRules: Array<Counted<WebhookFaultRule>> = [];
	private rng = mulberry32(1);
	latencyMs = 0;
	capacity: number | null = null;
	legacyDefect = false;
	private serving = 0;
	private waiting: Array<() => void> = [];

	/** Replaces the rules (and latency / seed when given). Throws on a malformed rule. */
	set(input: FaultConfig | FaultRule[]): void {
		const config: FaultConfig = Array.isArray(input) ? { rules: input } : (input ?? {});
		if (config.rules !== undefined) {
			if (!Array.isArray(config.rules)) throw new Error('rules must be an array');
			const routeRules: Array<Counted<RouteFaultRule>> = [];
			const webhookRules: Array<Counted<WebhookFaultRule>> = [];
			for (const rule of config.rules) {
				if (rule && 'webhook' in rule) {
					if (!WEBHOOK_KINDS.has(rule.webhook))
						throw new Error(`unknown webhook fault ${rule.webhook}`);
					webhookRules.push({ rule, remaining: rule.count ?? Infinity, passed: 0 });
				} else if (rule && ROUTE_KINDS.has(rule.kind)) {
					if (rule.route !== undefined && !ROUTES.has(rule.route)) {
						throw new Error(`unknown route ${rule.route}`);
					}
					if (rule.after !== undefined && !(Number.isInteger(rule.after) && rule.after >= 0))
						throw new Error('after must be a whole number of at least 0');
					routeRules.push({ rule, remaining: rule.count ?? Infinity, passed: 0 });
				} else {
					throw new Error(`malformed fault rule ${JSON.stringify(rule)}`);
				}
			}
			this.routeRules = routeRules;
			this.webhookRules = webhookRules;
		}
		if (config.latencyMs !== undefined) this.latencyMs = Math.max(0, Number(config.latencyMs) || 0);
		if (config.capacity !== undefined) {
			const capacity = config.capacity === null ? null : Number(config.capacity);
			if (capacity !== null && !(Number.isInteger(capacity) && capacity >= 1)) {
				throw new Error('capacity must be a whole number of at least 1, or null');
			}
			this.capacity = capacity;
			this.admitWaiting();
		}
		this.rng = mulberry32(config.seed ?? 1);
	}

	clear(): void {
		this.routeRules = [];
		this.webhookRules = [];
		this.latencyMs = 0;
		this.capacity = null;
		this.admitWaiting();
		this.rng = mulberry32(1);
	}

	/** Waits for a free worker when `capacity` is set; call `release` when the answer is sent. */
	async admit(): Promise<void> {
		if (this.capacity === null || this.serving < this.capacity) {
			this.serving++;
			return;
		}
		await new Promise<void>((resolve) => this.waiting.push(resolve));
	}

	release(): void {
		this.serving--;
		this.admitWaiting();
	}

	private admitWaiting(): void {
		while (this.waiting.length > 0 && (this.capacity === null || this.serving < this.capacity)) {
			this.serving++;
			this.waiting.shift()!();
		}
	}

	private pick<T extends { probability?: number; after?: number }>(
		list: Array<Counted<T>>,
		matches: (r: T) => boolean,
	): T | null {
		for (const entry of list) {
			if (entry.remaining <= 0 || !matches(entry.rule)) continue;
			if (entry.passed < (entry.rule.after ?? 0)) {
				entry.passed++;
				continue;
			}
			const p = entry.rule.probability ?? 1;
			if (p < 1 && this.rng() >= p) continue;
			entry.remaining--;
			return entry.rule;
		}
		return null;
	}

	forRoute(route: string): RouteFaultRule | null {
		if (this.routeRules.length === 0) return null;
		return this.pick(
			this.routeRules,
			(r) => r.route === undefined || r.route === '*' || r.route === route,
		);
	}

	forWebhook(): WebhookFaultRule | null {
		if (this.webhookRules.length === 0) return null;
		return this.pick(this.webhookRules, () => true);
	}

	describe(): {
		rules: FaultRule[];
		latencyMs: number;
		capacity: number | null;
		legacyDefect: boolean;
	} {
		return {
			rules: [
				...this.routeRules.map((e) => ({
					...e.rule,
					remaining: e.remaining === Infinity ? null : e.remaining,
				})),
				...this.webhookRules.map((e) => ({
					...e.rule,
					remaining: e.remaining === Infinity ? null : e.remaining,
				})),
			],
			latencyMs: this.latencyMs,
			capacity: this.capacity,
			legacyDefect: this.legacyDefect,
		};
	}
}
