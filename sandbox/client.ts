// SandboxClient: typed test control of a running sandbox (the /_sandbox/ endpoints).
import axios, { type AxiosInstance } from 'axios';
import http from 'http';

import type {
	Block,
	FaultConfig,
	FaultRule,
	Queue,
	RequestLogEntry,
	SeedData,
	Task,
	WebhookCall,
	WebhookObject,
} from './types';
import type { Realism } from './realism';

export type {
	Block,
	FaultConfig,
	FaultRule,
	Queue,
	RequestLogEntry,
	SeedData,
	Task,
	WebhookCall,
	WebhookObject,
} from './types';

export interface FaultsState {
	rules: Array<FaultRule & { remaining: number | null }>;
	latencyMs: number;
	capacity: number | null;
	legacyDefect: boolean;
}

export class SandboxError extends Error {
	constructor(
		readonly status: number,
		message: string,
	) {
		super(message);
	}
}

export class SandboxClient {
	private readonly http: AxiosInstance;
	// Idle sockets are closed here after 20 s, before the sandbox's keep-alive timeout (65 s) closes
	// them: a request sent on a socket the server is closing at that moment fails with ECONNRESET.
	private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 16, timeout: 20_000 });

	constructor(
		readonly baseUrl: string,
		readonly adminSecret = 'sandbox-admin',
	) {
		this.http = axios.create({
			baseURL: `${baseUrl.replace(/\/+$/, '')}/_sandbox`,
			headers: { 'x-sandbox-admin': adminSecret },
			httpAgent: this.agent,
			maxBodyLength: Infinity,
			maxContentLength: Infinity,
			validateStatus: () => true,
			proxy: false,
		});
	}

	private async call<T>(
		method: 'GET' | 'POST' | 'PUT' | 'DELETE',
		path: string,
		data?: unknown,
	): Promise<T> {
		const request = async () => await this.http.request({ method, url: path, data });
		const res = await request().catch(
			async (error: { code?: string; request?: { reusedSocket?: boolean } }) => {
				// a kept-alive socket the server closed before it read the request: sent again, as Node advises
				if (error.code === 'ECONNRESET' && error.request?.reusedSocket) return await request();
				throw error;
			},
		);
		if (res.status >= 400) {
			const body = res.data as { errors?: Array<{ message?: string }> } | undefined;
			const message = body?.errors?.[0]?.message ?? `HTTP ${res.status}`;
			throw new SandboxError(res.status, `sandbox ${method} ${path}: ${message}`);
		}
		return res.data as T;
	}

	/** Back to the seed (the default one, or the one given); clears logs and faults. */
	async reset(seed?: SeedData): Promise<void> {
		await this.call('POST', '/reset', seed ? { seed } : {});
	}

	/** The whole state, in the seed file's shape. */
	async state(): Promise<SeedData> {
		return await this.call('GET', '/state');
	}

	async createQueue(input: {
		name: string;
		blocks: Block[];
		organizationId?: number;
		description?: string;
	}): Promise<Queue> {
		return await this.call('POST', '/queues', input);
	}

	/** An admin edits the queue's fields (as in the service's UI); tasks keep their data. */
	async setBlocks(queueId: number, blocks: Block[]): Promise<Queue> {
		return await this.call('PUT', `/queues/${queueId}/blocks`, { blocks });
	}

	async getQueue(queueId: number): Promise<Queue> {
		return await this.call('GET', `/queues/${queueId}`);
	}

	/** Creates `count` empty tasks, or one task per data object, server-side. */
	async createTasks(
		queueId: number,
		spec: number | Array<Record<string, unknown>>,
		options: { source?: string } = {},
	): Promise<{ count: number; ids: number[] }> {
		const body = typeof spec === 'number' ? { count: spec } : { datas: spec };
		return await this.call('POST', `/queues/${queueId}/tasks`, { ...body, ...options });
	}

	/** All tasks of the queue, any status, in creation order. */
	async tasks(queueId: number): Promise<Task[]> {
		return await this.call('GET', `/queues/${queueId}/tasks`);
	}

	/** The person takes the next task: it becomes in_progress and theirs. */
	async takeNext(queueId: number, email: string): Promise<Task> {
		return await this.call('POST', `/queues/${queueId}/take`, { email });
	}

	/**
	 * Completes a task as a person (taskId undefined: the next pending one), the same code
	 * path as the page; fires the webhook.
	 */
	async complete(
		queueId: number,
		taskId: number | undefined,
		options: {
			by: string;
			data?: Record<string, unknown>;
			completedAt?: string;
			/**
			 * a late commit: listed and delivered this much later, below completions made meanwhile;
			 * -1: when commitHeld() is called
			 */
			commitAfterMs?: number;
		},
	): Promise<Task> {
		return await this.call('POST', `/queues/${queueId}/complete`, {
			taskId: taskId ?? null,
			by: options.by,
			data: options.data,
			completedAt: options.completedAt,
			commitAfterMs: options.commitAfterMs,
		});
	}

	/** Completes up to `count` pending tasks (oldest first), one webhook per task. */
	async completeMany(
		queueId: number,
		count: number,
		options: { by: string },
	): Promise<{ count: number; ids: number[] }> {
		return await this.call('POST', `/queues/${queueId}/complete-many`, { count, by: options.by });
	}

	/** Forced re-completion: same id, new completed_at, the webhook fires again. */
	async recomplete(
		taskId: number,
		options: { by?: string; data?: Record<string, unknown> } = {},
	): Promise<Task> {
		return await this.call('POST', `/tasks/${taskId}/recomplete`, options);
	}

	/** Sets the queue's webhook as a person does on the Connections screen ('' removes it). */
	async setWebhook(
		queueId: number,
		target: string,
		options: { by?: string } = {},
	): Promise<{ status: 200 | 201 | 204; webhook: WebhookObject | { target: '' } }> {
		return await this.call('PUT', `/queues/${queueId}/webhook`, { target, by: options.by });
	}

	/** Every value the queue's webhook target took since the last reset, in order (null: none). */
	async webhookHistory(queueId: number): Promise<Array<string | null>> {
		return await this.call('GET', `/queues/${queueId}/webhook-history`);
	}

	/** API requests received (test control and page calls are not logged). */
	async requests(options: { since?: number } = {}): Promise<RequestLogEntry[]> {
		return await this.call('GET', `/requests${options.since ? `?since=${options.since}` : ''}`);
	}

	async clearRequests(): Promise<void> {
		await this.call('DELETE', '/requests');
	}

	/** Webhook deliveries made (and dropped), oldest first. */
	async webhookCalls(): Promise<WebhookCall[]> {
		return await this.call('GET', '/webhook-calls');
	}

	async clearWebhookCalls(): Promise<void> {
		await this.call('DELETE', '/webhook-calls');
	}

	/** How many deliveries were made, and how many of them finished (or were dropped). */
	async webhookCallCount(): Promise<{ total: number; finished: number }> {
		return await this.call('GET', '/webhook-calls?count=1');
	}

	/**
	 * Polls until at least `count` deliveries have finished (or were dropped), then returns them all.
	 * Fails when none finishes for `stallMs`: a slow machine takes longer in all, a stalled delivery
	 * never ends.
	 */
	async waitForWebhookCalls(count: number, stallMs = 10_000): Promise<WebhookCall[]> {
		await this.waitForWebhookCount(count, stallMs);
		return await this.webhookCalls();
	}

	/** As waitForWebhookCalls, without reading the calls (a backlog's are hundreds of thousands). */
	async waitForWebhookCount(count: number, stallMs = 10_000): Promise<void> {
		let deadline = Date.now() + stallMs;
		let finishedBefore = -1;
		for (;;) {
			const { total, finished } = await this.webhookCallCount();
			if (finished >= count) return;
			if (finished > finishedBefore) {
				finishedBefore = finished;
				deadline = Date.now() + stallMs;
			}
			if (Date.now() > deadline) {
				throw new Error(
					`expected ${count} finished webhook calls, got ${finished} of ${total}: none finished in the last ${stallMs} ms`,
				);
			}
			await new Promise((r) => setTimeout(r, total > 100 ? 100 : 20));
		}
	}

	/** Replaces the fault rules; a config may also set latencyMs and the PRNG seed. */
	async setFaults(rules: FaultRule[] | FaultConfig): Promise<FaultsState> {
		return await this.call('PUT', '/faults', rules);
	}

	/** Adds a delay to every API answer (keeps the rules). */
	async setLatency(latencyMs: number): Promise<FaultsState> {
		return await this.call('PUT', '/faults', { latencyMs });
	}

	/** Serves at most `capacity` API requests at once (null: no limit); the others wait their turn. */
	async setCapacity(capacity: number | null): Promise<FaultsState> {
		return await this.call('PUT', '/faults', { capacity });
	}

	async faults(): Promise<FaultsState> {
		return await this.call('GET', '/faults');
	}

	/** Removes every fault rule, the latency and the capacity (not the legacy defect). */
	async clearFaults(): Promise<void> {
		await this.call('DELETE', '/faults');
	}

	/** Imitates the self-hosted 1.0.x defect: HTML 500 on the /queues/ get, webhook and flush routes. */
	/** Turns the real deployments' harsher behaviours on or off (sandbox/realism.ts); reset() restores them. */
	async setRealism(realism: Partial<Realism>): Promise<Realism> {
		return await this.call('PUT', '/realism', realism);
	}

	async setLegacyDefect(on: boolean): Promise<void> {
		await this.call('PUT', '/legacy-defect', { on });
	}

	/** A new API key for the user (e.g. bob@example.com, not an admin). */
	async mintApiKey(email: string): Promise<string> {
		const { key } = await this.call<{ key: string }>('POST', '/api-keys', { email });
		return key;
	}

	/** Commits the completions made with `commitAfterMs: -1`; how many. */
	async commitHeld(): Promise<number> {
		return (await this.call<{ committed: number }>('POST', '/commit-held')).committed;
	}

	/** Revokes an API key: the service answers 401 to it from now on. */
	async revokeApiKey(key: string): Promise<boolean> {
		return (await this.call<{ revoked: boolean }>('POST', '/api-keys/revoke', { key })).revoked;
	}

	/** Frees the keep-alive sockets. */
	close(): void {
		this.agent.destroy();
	}
}
