// Shared parts of the benchmark runner: the sandbox in its own process, a raw keep-alive HTTP
// client, n8n executions read through the public API, memory sampling of the n8n process, stats.
import { spawn, type ChildProcess } from 'child_process';
import { readFileSync, writeFileSync } from 'fs';
import http from 'http';
import { join } from 'path';

import { SandboxClient } from '../sandbox/client';
import { loadDefaultSeed } from '../sandbox/index';
import { REPO_ROOT } from '../tools/n8n/package';
import { CREDENTIAL_NAME, ensureCredential } from '../tools/n8n/provision';
import { freePort, type N8nHandle } from '../tools/n8n/start';
import type { Credentials } from './workflows';

/** The seed's API key (alice@example.com, admin of organization 1). */
export const SANDBOX_API_KEY = loadDefaultSeed().apiKeys[0].key;
const BENCH_ADMIN_SECRET = `bench-admin-${process.pid}-${Date.now()}`;
export const ORG_ID = 1;
export const QUEUE_ID = 101;
export const PERSON = 'alice@example.com';
/** Another member of the sandbox's organization 1: a second approver. */
export const SECOND_PERSON = 'bob@example.com';

export const sleep = async (ms: number) => await new Promise((r) => setTimeout(r, ms));
export const log = (s: string) => console.log(`[bench] ${s}`);

// ---- sandbox in its own process (so that it does not share an event loop with the raw client) ----

export interface SandboxProcess {
	baseUrl: string;
	client: SandboxClient;
	pid: number;
	stop(): Promise<void>;
}

export async function startSandboxProcess(): Promise<SandboxProcess> {
	const port = await freePort();
	const baseUrl = `http://127.0.0.1:${port}`;
	const child: ChildProcess = spawn(
		process.execPath,
		[
			require.resolve('tsx/cli'),
			join(REPO_ROOT, 'sandbox', 'cli.ts'),
			'--port',
			String(port),
			'--host',
			'127.0.0.1',
			// the command line makes both secrets per start unless given: the benchmark uses the seed's key
			'--api-key',
			SANDBOX_API_KEY,
			'--admin-secret',
			BENCH_ADMIN_SECRET,
		],
		{ cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'inherit'] },
	);
	const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
	const client = new SandboxClient(baseUrl, BENCH_ADMIN_SECRET);
	const started = Date.now();
	for (;;) {
		try {
			await client.faults();
			break;
		} catch {
			if (child.exitCode !== null) throw new Error('the sandbox exited during start-up');
			if (Date.now() - started > 60_000)
				throw new Error(`the sandbox did not answer on ${baseUrl}`);
			await sleep(200);
		}
	}
	return {
		baseUrl,
		client,
		pid: child.pid ?? 0,
		stop: async () => {
			client.close();
			if (child.exitCode === null) {
				child.kill('SIGTERM');
				await Promise.race([exited, sleep(5000)]);
				if (child.exitCode === null) child.kill('SIGKILL');
			}
		},
	};
}

// ---- a raw keep-alive HTTP client: what the wire allows ------------------------------------------

export class RawClient {
	readonly agent: http.Agent;

	constructor(
		readonly baseUrl: string,
		readonly apiKey: string,
		maxSockets: number,
	) {
		this.agent = new http.Agent({ keepAlive: true, maxSockets });
	}

	async request(
		method: string,
		path: string,
		body?: unknown,
	): Promise<{ status: number; body: unknown }> {
		const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
		const url = new URL(path, this.baseUrl);
		return await new Promise((resolve, reject) => {
			const req = http.request(
				url,
				{
					method,
					agent: this.agent,
					headers: {
						Authorization: `Token ${this.apiKey}`,
						Accept: 'application/json',
						...(payload
							? { 'Content-Type': 'application/json', 'Content-Length': payload.length }
							: {}),
					},
				},
				(res) => {
					const chunks: Buffer[] = [];
					res.on('data', (c: Buffer) => chunks.push(c));
					res.on('end', () => {
						const text = Buffer.concat(chunks).toString('utf8');
						let parsed: unknown = text;
						try {
							parsed = text ? JSON.parse(text) : undefined;
						} catch {
							// not JSON
						}
						resolve({ status: res.statusCode ?? 0, body: parsed });
					});
					res.on('error', reject);
				},
			);
			req.on('error', reject);
			req.end(payload);
		});
	}

	close(): void {
		this.agent.destroy();
	}
}

/** Runs `worker(i)` for i in 0..count-1 with at most `concurrency` in flight. */
export async function pool(
	count: number,
	concurrency: number,
	worker: (i: number) => Promise<void>,
): Promise<void> {
	let next = 0;
	const lane = async () => {
		while (next < count) await worker(next++);
	};
	await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane));
}

// ---- n8n executions ------------------------------------------------------------------------------

export interface NodeRun {
	startTime: number;
	executionTime: number;
	items: number;
	error?: string;
	json?: Array<Record<string, unknown>>;
}

export interface Execution {
	id: number;
	status: string;
	startedAt: string;
	stoppedAt: string | null;
	durationMs: number | null;
	nodes: Record<string, NodeRun>;
	error?: string;
}

type RawExecution = {
	id: string | number;
	status?: string;
	finished?: boolean;
	startedAt: string;
	stoppedAt?: string | null;
	data?: {
		resultData?: {
			error?: { message?: string };
			runData?: Record<
				string,
				Array<{
					startTime: number;
					executionTime: number;
					error?: { message?: string };
					data?: { main?: Array<Array<{ json: Record<string, unknown> }> | null> };
				}>
			>;
		};
	};
};

function toExecution(raw: RawExecution, keepJson: Set<string>): Execution {
	const nodes: Record<string, NodeRun> = {};
	for (const [name, runs] of Object.entries(raw.data?.resultData?.runData ?? {})) {
		const run = runs[runs.length - 1];
		if (!run) continue;
		const out = run?.data?.main?.[0] ?? [];
		nodes[name] = {
			startTime: run.startTime,
			executionTime: run.executionTime,
			items: out?.length ?? 0,
			error: run.error?.message,
			json: keepJson.has(name) ? (out ?? []).map((i) => i.json) : undefined,
		};
	}
	const started = Date.parse(raw.startedAt);
	const stopped = raw.stoppedAt ? Date.parse(raw.stoppedAt) : NaN;
	return {
		id: Number(raw.id),
		status: raw.status ?? (raw.finished ? 'success' : 'unknown'),
		startedAt: raw.startedAt,
		stoppedAt: raw.stoppedAt ?? null,
		durationMs: Number.isFinite(stopped) ? stopped - started : null,
		nodes,
		error: raw.data?.resultData?.error?.message,
	};
}

/** Executions of a workflow with an id above `afterId`, newest first, data included. */
export async function executionsAfter(
	n8n: N8nHandle,
	workflowId: string,
	afterId: number,
	options: { keepJson?: string[]; includeData?: boolean } = {},
): Promise<Execution[]> {
	const out: Execution[] = [];
	const keep = new Set(options.keepJson ?? []);
	let cursor: string | undefined;
	for (;;) {
		const res = await n8n.api.get('/executions', {
			params: { workflowId, includeData: options.includeData ?? true, limit: 100, cursor },
			maxContentLength: Infinity,
			maxBodyLength: Infinity,
			timeout: 300_000,
		});
		const page = (res.data?.data ?? []) as RawExecution[];
		let done = false;
		for (const raw of page) {
			if (Number(raw.id) <= afterId) {
				done = true;
				break;
			}
			out.push(toExecution(raw, keep));
		}
		cursor = res.data?.nextCursor ?? undefined;
		if (done || !cursor || page.length === 0) return out;
	}
}

/** The highest execution id so far (of any workflow), so that later runs can be told apart. */
export async function lastExecutionId(n8n: N8nHandle): Promise<number> {
	const res = await n8n.api.get('/executions', { params: { limit: 1 } });
	const first = (res.data?.data ?? [])[0] as { id?: string | number } | undefined;
	return first ? Number(first.id) : 0;
}

/** Waits until `count` executions of the workflow past `afterId` have finished (or progress stops). */
export async function waitForExecutions(
	n8n: N8nHandle,
	workflowId: string,
	afterId: number,
	count: number,
	options: { idleTimeoutMs?: number; totalTimeoutMs?: number } = {},
): Promise<number> {
	const idle = options.idleTimeoutMs ?? 15_000;
	const total = options.totalTimeoutMs ?? 180_000;
	const started = Date.now();
	let seen = -1;
	let lastProgress = Date.now();
	for (;;) {
		const list = await executionsAfter(n8n, workflowId, afterId, { includeData: false });
		const finished = list.filter((e) => e.stoppedAt !== null).length;
		if (finished >= count) return finished;
		if (finished !== seen) {
			seen = finished;
			lastProgress = Date.now();
		}
		if (Date.now() - lastProgress > idle || Date.now() - started > total) return finished;
		await sleep(count > 50 ? 500 : 100);
	}
}

// ---- n8n's memory ---------------------------------------------------------------------------------

export function readMemKb(pid: number): { rss: number; hwm: number } {
	const text = readFileSync(`/proc/${pid}/status`, 'utf8');
	const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? 0);
	return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
}

/** Samples VmRSS every 20 ms (and resets VmHWM first, where the kernel allows it). */
export function sampleMemory(pid: number): {
	stop(): { baseMb: number; peakMb: number; growthMb: number };
} {
	try {
		writeFileSync(`/proc/${pid}/clear_refs`, '5');
	} catch {
		// not allowed: the sampled peak still counts
	}
	const base = readMemKb(pid).rss;
	let peak = base;
	const timer = setInterval(() => {
		try {
			peak = Math.max(peak, readMemKb(pid).rss);
		} catch {
			// process gone
		}
	}, 20);
	return {
		stop: () => {
			clearInterval(timer);
			try {
				const now = readMemKb(pid);
				peak = Math.max(peak, now.rss, now.hwm);
			} catch {
				// gone
			}
			return { baseMb: base / 1024, peakMb: peak / 1024, growthMb: (peak - base) / 1024 };
		},
	};
}

/** The pid of the node process that runs `n8n start` (the handle's child). */
export function n8nPid(n8n: N8nHandle): number {
	const pid = n8n.pid();
	if (!pid) throw new Error('n8n is not running');
	return pid;
}

// ---- statistics and formatting -------------------------------------------------------------------

export function median(values: number[]): number {
	const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
	if (v.length === 0) return NaN;
	const mid = Math.floor(v.length / 2);
	return v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

export function percentile(values: number[], p: number): number {
	const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
	if (v.length === 0) return NaN;
	const rank = Math.ceil((p / 100) * v.length) - 1;
	return v[Math.min(v.length - 1, Math.max(0, rank))];
}

export function fmtMs(ms: number): string {
	if (!Number.isFinite(ms)) return 'n/a';
	if (ms >= 10_000) return `${(ms / 1000).toFixed(1)} s`;
	if (ms >= 1000) return `${(ms / 1000).toFixed(2)} s`;
	return `${ms.toFixed(ms < 10 ? 1 : 0)} ms`;
}

export function fmtNum(n: number, digits = 0): string {
	return Number.isFinite(n) ? n.toFixed(digits) : 'n/a';
}

export function ratio(a: number, b: number): string {
	if (!Number.isFinite(a) || !Number.isFinite(b) || b === 0) return 'n/a';
	return `${(a / b).toFixed(2)}x`;
}

export function table(header: string[], rows: string[][]): string {
	const lines = [`| ${header.join(' | ')} |`, `| ${header.map(() => '---').join(' | ')} |`];
	for (const r of rows) lines.push(`| ${r.join(' | ')} |`);
	return lines.join('\n');
}

export function errorText(error: unknown): string {
	const e = error as { response?: { status?: number; data?: unknown }; message?: string };
	if (e?.response)
		return `HTTP ${e.response.status} ${JSON.stringify(e.response.data).slice(0, 300)}`;
	return (e?.message ?? String(error)).split('\n')[0].slice(0, 300);
}

/** The Task Queue credential and the HTTP Request/Webhook contenders' header credential, in this n8n. */
export async function benchCredentials(
	n8n: N8nHandle,
	sandbox: SandboxProcess,
): Promise<Credentials> {
	const taskQueueId = await ensureCredential(n8n, {
		baseUrl: sandbox.baseUrl,
		apiKey: SANDBOX_API_KEY,
		organizationId: ORG_ID,
	});
	const header = await n8n.api.post('/credentials', {
		name: 'Task Queue (Header Auth)',
		type: 'httpHeaderAuth',
		data: { name: 'Authorization', value: `Token ${SANDBOX_API_KEY}` },
	});
	return {
		taskQueue: { id: taskQueueId, name: CREDENTIAL_NAME },
		headerAuth: { id: String(header.data.id), name: 'Task Queue (Header Auth)' },
	};
}
