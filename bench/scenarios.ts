// Scenarios 1 to 4: each runs its contenders in alternation (A B C, A B C, ...) and returns a section
// of RESULTS.md. Every n8n contender is a real workflow created through the public API and run as a
// real (production) execution: a Webhook-started workflow, or an active trigger.
import axios from 'axios';

import type { N8nHandle } from '../tools/n8n/start';
import {
	errorText,
	executionsAfter,
	fmtMs,
	fmtNum,
	lastExecutionId,
	log,
	median,
	n8nPid,
	percentile,
	PERSON,
	pool,
	QUEUE_ID,
	ratio,
	RawClient,
	sampleMemory,
	SANDBOX_API_KEY,
	sleep,
	table,
	waitForExecutions,
	type Execution,
	type SandboxProcess,
} from './lib';
import { DEFAULT_CONCURRENCY } from '../nodes/TaskQueue/actions/task/create.operation';
import { PAGES_IN_FLIGHT } from '../nodes/TaskQueue/reader/pages';
import * as wf from './workflows';
import type { WorkflowJson } from '../tools/n8n/provision';

export interface BenchContext {
	n8n: N8nHandle;
	sandbox: SandboxProcess;
	creds: wf.Credentials;
	rounds: number;
	/** Fewer rounds where one run is long (trigger, poll). */
	shortRounds: number;
}

export interface Goal {
	goal: string;
	measured: string;
	met: boolean | null;
}

export interface Section {
	title: string;
	body: string;
	goals: Goal[];
	notes: string[];
	/** One-line summary for the console. */
	summary: string[];
}

const workflowIds = new Map<string, string>();

export async function ensureWorkflow(
	n8n: N8nHandle,
	json: WorkflowJson,
	activate: boolean,
): Promise<string> {
	let id = workflowIds.get(json.name);
	if (!id) {
		const res = await n8n.api.post('/workflows', json);
		id = String(res.data.id);
		workflowIds.set(json.name, id);
		if (activate) {
			await n8n.api.post(`/workflows/${id}/activate`, {});
			await sleep(1500); // n8n registers the webhook asynchronously after activation
		}
	}
	return id;
}

async function deactivate(n8n: N8nHandle, id: string): Promise<void> {
	await n8n.api.post(`/workflows/${id}/deactivate`, {}).catch(() => undefined);
}

/** POSTs to a production webhook that answers when the workflow has finished; returns wall ms. */
export async function callWebhook(n8n: N8nHandle, path: string, body: unknown): Promise<number> {
	const t0 = performance.now();
	const res = await axios.post(`${n8n.webhookBase}/${path}`, body, {
		timeout: 600_000,
		validateStatus: () => true,
		maxBodyLength: Infinity,
		maxContentLength: Infinity,
	});
	const wall = performance.now() - t0;
	if (res.status >= 400)
		throw new Error(
			`webhook ${path}: HTTP ${res.status} ${JSON.stringify(res.data).slice(0, 300)}`,
		);
	return wall;
}

/** The one execution of `workflowId` after `afterId`, once it has stopped. */
export async function theExecution(
	n8n: N8nHandle,
	workflowId: string,
	afterId: number,
	keepJson: string[] = [],
): Promise<Execution> {
	const deadline = Date.now() + 120_000;
	for (;;) {
		const list = await executionsAfter(n8n, workflowId, afterId, { keepJson });
		const done = list.find((e) => e.stoppedAt !== null);
		if (done) return done;
		if (Date.now() > deadline) throw new Error(`no finished execution of workflow ${workflowId}`);
		await sleep(100);
	}
}

export function nodeError(exec: Execution): string | undefined {
	if (exec.error) return exec.error;
	for (const [name, run] of Object.entries(exec.nodes))
		if (run.error) return `${name}: ${run.error}`;
	if (exec.status !== 'success') return `execution ${exec.id} ended "${exec.status}"`;
	return undefined;
}

interface Run {
	contender: string;
	round: number;
	/** Time of the work itself: the contender node's executionTime in n8n, or the raw client's time. */
	workMs: number;
	/** Execution startedAt -> stoppedAt (n8n contenders). */
	execMs?: number;
	/** From outside: webhook call to its answer (n8n), or the raw client's time. */
	wallMs: number;
	[k: string]: unknown;
}

function collect(runs: Run[], contender: string, key: string): number[] {
	return runs.filter((r) => r.contender === contender && !r.error).map((r) => Number(r[key]));
}

function errorsOf(runs: Run[], contender: string): string | undefined {
	const errs = runs.filter((r) => r.contender === contender && r.error).map((r) => String(r.error));
	return errs.length ? `${errs.length} failed run(s): ${errs[0]}` : undefined;
}

// ---- 1. bulk create ------------------------------------------------------------------------------

const CREATE_COUNT = 1000;
/** The raw client's concurrency the issue quotes for orientation. */
const RAW_LOW = 8;
/** The node's default cap (it starts at 8 and adapts), and so the concurrency it is compared at. */
const NODE_CAP = DEFAULT_CONCURRENCY;
/** Max Concurrency raised: the lever the README names for a distant service. */
const RAISED_CAP = 256;

function createItems(tag: string, count: number) {
	return Array.from({ length: count }, (_, i) => ({
		customer_message: `bench ${tag} #${i}`,
		order_total: 10 + (i % 90) + 0.5,
		receipt: `https://example.com/receipts/${i}.png`,
		// the node refuses a task without the queue's required "decision" (the service does not): every
		// contender sends the same four fields
		decision: 'escalate',
	}));
}

async function countCreated(
	sandbox: SandboxProcess,
	tag: string,
): Promise<{ created: number; duplicates: number }> {
	const tasks = await sandbox.client.tasks(QUEUE_ID);
	const prefix = `bench ${tag} #`;
	const seen = new Map<string, number>();
	for (const t of tasks) {
		const m = t.data?.customer_message;
		if (typeof m === 'string' && m.startsWith(prefix)) seen.set(m, (seen.get(m) ?? 0) + 1);
	}
	let duplicates = 0;
	for (const n of seen.values()) duplicates += n - 1;
	return { created: seen.size, duplicates };
}

export async function scenarioCreate(ctx: BenchContext, latencyMs: number): Promise<Section> {
	const { n8n, sandbox } = ctx;
	const contenders = {
		node: 'Task Queue node (fields mapped with expressions)',
		http: 'HTTP Request node (JSON body expression)',
		rawLow: `raw client (keep-alive, ${RAW_LOW} in flight)`,
		raw: `raw client (keep-alive, ${NODE_CAP} in flight)`,
		floor: `n8n's floor (bench node, ${NODE_CAP} in flight)`,
		auto: 'Task Queue node (Map Automatically)',
		raised: `Task Queue node (Map Automatically, Max Concurrency ${RAISED_CAP})`,
	};
	const workflows: Record<string, [id: string, path: string, work: string]> = {
		[contenders.node]: [
			await ensureWorkflow(n8n, wf.createWithNode(ctx.creds), true),
			'bench-create-node',
			wf.WORK.node,
		],
		[contenders.http]: [
			await ensureWorkflow(n8n, wf.createWithHttp(ctx.creds, sandbox.baseUrl), true),
			'bench-create-http',
			wf.WORK.http,
		],
		[contenders.floor]: [
			await ensureWorkflow(n8n, wf.createWithFloor(ctx.creds, sandbox.baseUrl, NODE_CAP), true),
			`bench-create-floor-${NODE_CAP}`,
			wf.WORK.floor,
		],
		[contenders.auto]: [
			await ensureWorkflow(n8n, wf.createWithNodeAutoMap(ctx.creds), true),
			'bench-create-node-auto',
			wf.WORK.node,
		],
		[contenders.raised]: [
			await ensureWorkflow(n8n, wf.createWithNodeAutoMapConcurrent(ctx.creds, RAISED_CAP), true),
			`bench-create-node-auto-${RAISED_CAP}`,
			wf.WORK.node,
		],
	};
	const order = Object.values(contenders);
	const runs: Run[] = [];

	const runOne = async (contender: string, round: number, count = CREATE_COUNT): Promise<Run> => {
		await sandbox.client.reset();
		if (latencyMs) await sandbox.client.setLatency(latencyMs);
		await sandbox.client.clearRequests();
		const tag = `l${latencyMs}-${order.indexOf(contender)}-r${round}`;
		const items = createItems(tag, count);
		const run: Run = { contender, round, workMs: NaN, wallMs: NaN };
		try {
			if (contender === contenders.raw || contender === contenders.rawLow) {
				const inFlight = contender === contenders.raw ? NODE_CAP : RAW_LOW;
				const raw = new RawClient(sandbox.baseUrl, SANDBOX_API_KEY, inFlight);
				const t0 = performance.now();
				let failed = 0;
				await pool(items.length, inFlight, async (i) => {
					const res = await raw.request('POST', `/orgs/1/queues/${QUEUE_ID}/tasks/create`, {
						data: items[i],
					});
					if (res.status !== 201 && res.status !== 200) failed++;
				});
				run.workMs = run.wallMs = performance.now() - t0;
				raw.close();
				if (failed) run.error = `${failed} requests failed`;
			} else {
				const [id, path, work] = workflows[contender];
				const after = await lastExecutionId(n8n);
				const called = await callWebhook(n8n, path, { items }).catch((e: unknown) => e as Error);
				if (typeof called === 'number') run.wallMs = called;
				const exec = await theExecution(n8n, id, after);
				run.execMs = exec.durationMs ?? NaN;
				run.workMs = exec.nodes[work]?.executionTime ?? NaN;
				run.error = nodeError(exec) ?? (typeof called === 'number' ? undefined : errorText(called));
			}
			const { created, duplicates } = await countCreated(sandbox, tag);
			run.created = created;
			run.duplicates = duplicates;
			const log = await sandbox.client.requests();
			run.requests = log.length;
			run.peakInFlight = Math.max(0, ...log.map((r) => r.inFlight));
		} catch (error) {
			run.error = errorText(error);
		}
		return run;
	};

	// one small warm-up per contender (n8n loads node code lazily on first use), not counted
	for (const c of order) await runOne(c, 0, 20);
	for (let round = 1; round <= ctx.rounds; round++) {
		for (const c of order) {
			const run = await runOne(c, round);
			runs.push(run);
			log(
				`create (${latencyMs} ms) round ${round} ${c}: work ${fmtMs(run.workMs)}, wall ${fmtMs(run.wallMs)}, created ${run.created}, dup ${run.duplicates}, peak in flight ${run.peakInFlight}${run.error ? `, ERROR ${run.error}` : ''}`,
			);
		}
	}
	await sandbox.client.clearFaults();

	const med = (c: string, k: string) => median(collect(runs, c, k));
	const rawContender = (c: string) => c === contenders.raw || c === contenders.rawLow;
	const rows = order.map((c) => [
		c,
		fmtMs(med(c, 'workMs')),
		rawContender(c) ? '-' : fmtMs(med(c, 'execMs')),
		fmtMs(med(c, 'wallMs')),
		fmtNum(med(c, 'requests')),
		latencyMs ? fmtNum(Math.max(...collect(runs, c, 'peakInFlight'))) : '-',
		`${fmtNum(Math.min(...collect(runs, c, 'created')))} to ${fmtNum(Math.max(...collect(runs, c, 'created')))}`,
		fmtNum(collect(runs, c, 'duplicates').reduce((a, b) => a + b, 0)),
		c === contenders.raw ? '1.00x' : ratio(med(c, 'workMs'), med(contenders.raw, 'workMs')),
		c === contenders.floor ? '1.00x' : ratio(med(c, 'workMs'), med(contenders.floor, 'workMs')),
		c === contenders.http ? '1.00x' : ratio(med(contenders.http, 'workMs'), med(c, 'workMs')),
		errorsOf(runs, c) ?? '',
	]);
	const title = `1. Bulk create, ${CREATE_COUNT} items into queue ${QUEUE_ID}, ${latencyMs ? `${latencyMs} ms latency per request` : 'instant sandbox'}`;
	const goals: Goal[] = [];
	for (const [label, c] of [
		['', contenders.node],
		[', Map Automatically', contenders.auto],
	] as const) {
		const speedup = med(contenders.http, 'workMs') / med(c, 'workMs');
		const vsRaw = med(c, 'workMs') / med(contenders.raw, 'workMs');
		goals.push(
			{
				goal: `${title}${label}: at least 4x faster than HTTP Request`,
				measured: `${fmtNum(speedup, 2)}x`,
				met: Number.isFinite(speedup) ? speedup >= 4 : null,
			},
			{
				goal: `${title}${label}: within 1.5x of the raw client at the node's concurrency (${NODE_CAP})`,
				measured: `${fmtNum(vsRaw, 2)}x (n8n's floor: ${fmtNum(med(contenders.floor, 'workMs') / med(contenders.raw, 'workMs'), 2)}x)`,
				met: Number.isFinite(vsRaw) ? vsRaw <= 1.5 : null,
			},
		);
	}
	return {
		title,
		body: table(
			[
				'contender',
				'work (median)',
				'execution',
				'wall (outside)',
				'requests',
				'peak in flight',
				'tasks created',
				'duplicates (all runs)',
				`vs raw (${NODE_CAP})`,
				"vs n8n's floor",
				'HTTP Request / this',
				'errors',
			],
			rows,
		),
		goals,
		notes: [
			"Same four fields for every contender (`customer_message`, `order_total`, `receipt`, `decision`): the node refuses a task without the queue's required `decision` block, the service does not check it.",
			"The node's default mapping mode (Map Each Field Below) is set with one expression per field (`{{ $json.customer_message }}`, ...), as the editor's drag and drop writes it; the node reads such references from the item itself (n8n would evaluate each in its expression isolate). The HTTP Request node gets one JSON body expression. Map Automatically needs no expression.",
			`The node starts with 8 creates in flight and adapts up to its Max Concurrency (default ${NODE_CAP}); the raw client runs at that cap and, for orientation, at ${RAW_LOW}. The last row raises Max Concurrency to ${RAISED_CAP} (not a goal).`,
			`n8n's floor is a bench-only node (bench/floor): one POST per item through n8n's own \`httpRequestWithAuthentication\` with the Task Queue credential, ${NODE_CAP} in flight, nothing else. What it takes beyond the raw client is n8n's HTTP stack (a new connection per request, axios); what the node takes beyond it is the node's own work.`,
			'Peak in flight: the most API requests the sandbox was serving at once (the sandbox records it per request); with an instant sandbox each request is answered before the next is read, so it is not shown.',
		],
		summary: [
			`${title}: node ${fmtMs(med(contenders.node, 'workMs'))}, auto-map ${fmtMs(med(contenders.auto, 'workMs'))}, floor ${fmtMs(med(contenders.floor, 'workMs'))}, HTTP Request ${fmtMs(med(contenders.http, 'workMs'))}, raw ${NODE_CAP} ${fmtMs(med(contenders.raw, 'workMs'))}`,
		],
	};
}

// ---- 2. Get Completed, Return All ----------------------------------------------------------------

const COMPLETED_COUNT = 50_000;
const PAGE = 1000;

export async function scenarioGetCompleted(ctx: BenchContext, latencyMs: number): Promise<Section> {
	const { n8n, sandbox } = ctx;
	const nodeWf = await ensureWorkflow(n8n, wf.getWithNode(ctx.creds), true);
	const httpWf = await ensureWorkflow(n8n, wf.getWithHttp(ctx.creds, sandbox.baseUrl), true);
	const contenders = [
		'Task Queue node',
		'HTTP Request node (pagination) + Split Out',
		`raw client (limit ${PAGE})`,
		`raw client (limit ${PAGE}, ${PAGES_IN_FLIGHT} pages in flight as the node)`,
	];
	const [node, http, raw, rawAhead] = contenders;

	const t0 = Date.now();
	await sandbox.client.reset();
	await sandbox.client.createTasks(QUEUE_ID, COMPLETED_COUNT);
	await sandbox.client.completeMany(QUEUE_ID, COMPLETED_COUNT, { by: PERSON });
	const probe = new RawClient(sandbox.baseUrl, SANDBOX_API_KEY, 1);
	const first = await probe.request('GET', `/orgs/1/queues/${QUEUE_ID}/tasks/completed?limit=1`);
	probe.close();
	const expected = Number((first.body as { count?: number })?.count);
	log(
		`get completed: ${expected} completed tasks in queue ${QUEUE_ID} (set up in ${Date.now() - t0} ms)`,
	);
	if (latencyMs) await sandbox.client.setLatency(latencyMs);

	const runOne = async (contender: string, round: number): Promise<Run> => {
		await sandbox.client.clearRequests();
		const run: Run = { contender, round, workMs: NaN, wallMs: NaN };
		try {
			if (contender === raw || contender === rawAhead) {
				const inFlight = contender === raw ? 1 : PAGES_IN_FLIGHT;
				const client = new RawClient(sandbox.baseUrl, SANDBOX_API_KEY, inFlight);
				const getPage = async (offset: number) => {
					const res = await client.request(
						'GET',
						`/orgs/1/queues/${QUEUE_ID}/tasks/completed?limit=${PAGE}&offset=${offset}`,
					);
					return res.body as { count: number; tasks: unknown[] };
				};
				const started = performance.now();
				const tasks: unknown[] = [];
				if (contender === raw) {
					for (let offset = 0; ; offset += PAGE) {
						const page = (await getPage(offset)).tasks;
						tasks.push(...page);
						if (page.length < PAGE) break;
					}
				} else {
					// the first page's count says how many follow; nothing changes while the bench pages
					const first = await getPage(0);
					tasks.push(...first.tasks);
					const offsets: number[] = [];
					for (let offset = PAGE; offset < first.count; offset += PAGE) offsets.push(offset);
					const pages = new Array<unknown[]>(offsets.length);
					let next = 0;
					await Promise.all(
						Array.from({ length: inFlight }, async () => {
							while (next < offsets.length) {
								const i = next++;
								pages[i] = (await getPage(offsets[i])).tasks;
							}
						}),
					);
					for (const page of pages) tasks.push(...page);
				}
				run.workMs = run.wallMs = performance.now() - started;
				client.close();
				run.items = tasks.length;
			} else {
				const [id, path] =
					contender === node ? [nodeWf, 'bench-get-node'] : [httpWf, 'bench-get-http'];
				const after = await lastExecutionId(n8n);
				const mem = sampleMemory(n8nPid(n8n));
				const called = await callWebhook(n8n, path, {}).catch((e: unknown) => e as Error);
				if (typeof called === 'number') run.wallMs = called;
				const m = mem.stop();
				run.rssGrowthMb = m.growthMb;
				const exec = await theExecution(n8n, id, after);
				run.execMs = exec.durationMs ?? NaN;
				if (contender === node) {
					run.workMs = exec.nodes[wf.WORK.node]?.executionTime ?? NaN;
					run.items = exec.nodes[wf.WORK.node]?.items ?? 0;
				} else {
					run.httpMs = exec.nodes[wf.WORK.http]?.executionTime ?? NaN;
					run.splitMs = exec.nodes[wf.WORK.split]?.executionTime ?? NaN;
					run.workMs = Number(run.httpMs) + Number(run.splitMs);
					run.items = exec.nodes[wf.WORK.split]?.items ?? 0;
				}
				run.error = nodeError(exec) ?? (typeof called === 'number' ? undefined : errorText(called));
			}
			run.requests = (await sandbox.client.requests()).length;
			if (run.items !== expected && !run.error)
				run.error = `${run.items} items, expected ${expected}`;
		} catch (error) {
			run.error = errorText(error);
		}
		return run;
	};

	const runs: Run[] = [];
	for (let round = 1; round <= ctx.rounds; round++) {
		for (const c of contenders) {
			const run = await runOne(c, round);
			runs.push(run);
			log(
				`get completed round ${round} ${c}: work ${fmtMs(run.workMs)}, wall ${fmtMs(run.wallMs)}, items ${run.items}, requests ${run.requests}${run.rssGrowthMb !== undefined ? `, RSS +${fmtNum(Number(run.rssGrowthMb))} MB` : ''}${run.error ? `, ERROR ${run.error}` : ''}`,
			);
		}
	}

	const med = (c: string, k: string) => median(collect(runs, c, k));
	const rows = contenders.map((c) => [
		c,
		fmtMs(med(c, 'workMs')) +
			(c === http ? ` (${fmtMs(med(c, 'httpMs'))} + ${fmtMs(med(c, 'splitMs'))})` : ''),
		c === raw || c === rawAhead ? '-' : fmtMs(med(c, 'execMs')),
		fmtMs(med(c, 'wallMs')),
		fmtNum(med(c, 'items')),
		fmtNum(med(c, 'requests')),
		c === raw || c === rawAhead
			? '-'
			: `+${fmtNum(med(c, 'rssGrowthMb'))} MB (max +${fmtNum(Math.max(...collect(runs, c, 'rssGrowthMb')))})`,
		c === raw ? '1.00x' : ratio(med(c, 'workMs'), med(raw, 'workMs')),
		errorsOf(runs, c) ?? '',
	]);
	const vsRaw = med(node, 'workMs') / med(raw, 'workMs');
	if (latencyMs) await sandbox.client.setLatency(0);
	const title = `2. Get Completed, Return All, ${fmtNum(expected)} completed tasks${latencyMs ? `, ${latencyMs} ms latency per request` : ''}`;
	return {
		title,
		body: table(
			[
				'contender',
				'work (median)',
				'execution',
				'wall (outside)',
				'items',
				'requests',
				"n8n's peak RSS growth (median)",
				'vs raw',
				'errors',
			],
			rows,
		),
		goals: [
			{
				goal: `Get Completed${latencyMs ? ` (${latencyMs} ms latency)` : ''} within 1.3x of the raw client`,
				measured: `${fmtNum(vsRaw, 2)}x`,
				met: Number.isFinite(vsRaw) ? vsRaw <= 1.3 : null,
			},
		],
		notes: [
			`The goal compares with the raw client paging one request at a time, as asked. The node keeps ${PAGES_IN_FLIGHT} page requests in flight after the first (each page starting on the last task of the page before, to notice completions that would hide tasks); the last row is a raw client doing the same, the limit for that method.`,
			'HTTP Request is configured with its pagination option set to "Response Contains Next URL" (`{{ $response.body.next }}`, complete when `{{ !$response.body.next }}`) and query `limit=1000`; its figure is HTTP Request\'s time plus Split Out\'s (which turns the page items into one item per task).',
			"Peak RSS growth: n8n's VmRSS sampled every 20 ms during the webhook call (VmHWM reset through /proc/<pid>/clear_refs first), minus VmRSS before; garbage left by earlier runs makes it noisy.",
		],
		summary: [
			`${title}: node ${fmtMs(med(node, 'workMs'))}, HTTP Request+Split Out ${fmtMs(med(http, 'workMs'))}, raw ${fmtMs(med(raw, 'workMs'))}, raw with ${PAGES_IN_FLIGHT} in flight ${fmtMs(med(rawAhead, 'workMs'))}`,
		],
	};
}

// ---- 3. trigger latency --------------------------------------------------------------------------

const BURST = 500;

export async function waitForTarget(
	sandbox: SandboxProcess,
	predicate: (target: string) => boolean,
	timeoutMs = 15_000,
): Promise<string> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const q = await sandbox.client.getQueue(QUEUE_ID);
		const target = q.webhook?.target ?? '';
		if (predicate(target)) return target;
		if (Date.now() > deadline)
			throw new Error(
				`the queue's webhook target did not change (it is "${target.replace(/secret=[^&]+/, 'secret=***')}")`,
			);
		await sleep(50);
	}
}

/** `queueMode`: the same burst in n8n's queue mode (scenario 7), both contenders in that n8n. */
export async function scenarioTrigger(
	ctx: BenchContext,
	queueMode?: { describe: string },
): Promise<Section> {
	const { n8n, sandbox } = ctx;
	const nodeWf = await ensureWorkflow(n8n, wf.triggerWithNode(ctx.creds), false);
	const hookWf = await ensureWorkflow(n8n, wf.triggerWithWebhook(), false);
	const contenders = ['Task Queue Trigger', "n8n's Webhook node (URL set by hand)"];
	const [node, hook] = contenders;

	const runOne = async (contender: string, round: number, burst = BURST): Promise<Run> => {
		const run: Run = { contender, round, workMs: NaN, wallMs: NaN };
		const id = contender === node ? nodeWf : hookWf;
		try {
			await sandbox.client.reset();
			await sandbox.client.createTasks(QUEUE_ID, burst);
			await n8n.api.post(`/workflows/${id}/activate`, {});
			if (contender === node) {
				await waitForTarget(sandbox, (t) => t.includes('/webhook/'));
			} else {
				const url = `${n8n.webhookBase}/${wf.HOOK_PATH}`;
				await sandbox.client.setWebhook(QUEUE_ID, url, { by: PERSON });
				// a trigger deactivated just before may still restore its previous target
				await sleep(2000);
				if ((await sandbox.client.getQueue(QUEUE_ID)).webhook?.target !== url) {
					await sandbox.client.setWebhook(QUEUE_ID, url, { by: PERSON });
				}
			}
			// n8n 2.x registers webhooks asynchronously after activation: under load, 300 ms was not
			// enough and one run's deliveries to the Webhook node all got 404
			await sleep(2000);
			const after = await lastExecutionId(n8n);
			const t0 = performance.now();
			const { ids } = await sandbox.client.completeMany(QUEUE_ID, burst, { by: PERSON });
			const finished = await waitForExecutions(n8n, id, after, ids.length, {
				idleTimeoutMs: 20_000,
				totalTimeoutMs: 240_000,
			});
			run.wallMs = performance.now() - t0;
			const execs = await executionsAfter(n8n, id, after, {
				keepJson: [wf.WORK.trigger, wf.WORK.hook],
			});
			const latencies: number[] = [];
			const doneLatencies: number[] = [];
			const seen = new Map<number, number>();
			let failed = 0;
			for (const e of execs) {
				if (e.status !== 'success') failed++;
				const out = e.nodes[wf.WORK.trigger]?.json ?? e.nodes[wf.WORK.hook]?.json ?? [];
				for (const json of out) {
					const task = (contender === node ? json : json.body) as
						| { id?: number; completed_at?: string }
						| undefined;
					if (!task?.id) continue;
					seen.set(task.id, (seen.get(task.id) ?? 0) + 1);
					if (task.completed_at) {
						latencies.push(Date.parse(e.startedAt) - Date.parse(task.completed_at));
						if (e.stoppedAt)
							doneLatencies.push(Date.parse(e.stoppedAt) - Date.parse(task.completed_at));
					}
				}
			}
			let duplicated = 0;
			for (const n of seen.values()) duplicated += n - 1;
			const calls = await sandbox.client.webhookCalls();
			run.started = execs.length;
			run.finished = finished;
			run.failed = failed;
			run.lost = ids.filter((t) => !seen.has(t)).length;
			run.duplicated = duplicated;
			run.p50 = percentile(latencies, 50);
			run.p95 = percentile(latencies, 95);
			run.max = Math.max(...latencies);
			run.doneP50 = percentile(doneLatencies, 50);
			run.doneP95 = percentile(doneLatencies, 95);
			run.workMs = Number(run.p50);
			const failedCalls = calls.filter(
				(c) => c.state === 'failed' || (c.status !== null && c.status >= 400),
			);
			run.deliveryFailures = failedCalls.length;
			if (failedCalls.length) {
				const reasons = new Map<string, number>();
				for (const c of failedCalls) {
					const why = c.error ?? `HTTP ${c.status}`;
					reasons.set(why, (reasons.get(why) ?? 0) + 1);
				}
				run.failureReasons = [...reasons].map(([k, v]) => `${v}x ${k}`).join(', ');
			}
		} catch (error) {
			run.error = errorText(error);
		} finally {
			await deactivate(n8n, id);
			// n8n 2.x deactivates asynchronously: wait until the trigger has removed its target
			if (contender === node)
				await waitForTarget(sandbox, (t) => !t.includes('secret='), 30_000).catch(() => undefined);
			if (contender === hook) await sandbox.client.setWebhook(QUEUE_ID, '').catch(() => undefined);
			await sleep(300);
		}
		return run;
	};

	for (const c of contenders) await runOne(c, 0, 20); // warm-up, not counted
	const runs: Run[] = [];
	for (let round = 1; round <= ctx.shortRounds; round++) {
		for (const c of contenders) {
			const run = await runOne(c, round);
			runs.push(run);
			log(
				`trigger round ${round} ${c}: p50 ${fmtMs(Number(run.p50))}, p95 ${fmtMs(Number(run.p95))}, finished p50 ${fmtMs(Number(run.doneP50))}, p95 ${fmtMs(Number(run.doneP95))}, started ${run.started}, lost ${run.lost}, duplicated ${run.duplicated}, failed deliveries ${run.deliveryFailures}${run.failureReasons ? ` (${run.failureReasons})` : ''}, burst done in ${fmtMs(run.wallMs)}${run.error ? `, ERROR ${run.error}` : ''}`,
			);
		}
	}
	const med = (c: string, k: string) => median(collect(runs, c, k));
	const sum = (c: string, k: string) => collect(runs, c, k).reduce((a, b) => a + b, 0);
	const rows = contenders.map((c) => [
		c,
		fmtMs(med(c, 'p50')),
		fmtMs(med(c, 'p95')),
		fmtMs(med(c, 'max')),
		`${fmtMs(med(c, 'doneP50'))} / ${fmtMs(med(c, 'doneP95'))}`,
		fmtMs(med(c, 'wallMs')),
		fmtNum(sum(c, 'started')),
		fmtNum(sum(c, 'lost')),
		fmtNum(sum(c, 'duplicated')),
		fmtNum(sum(c, 'failed')),
		`${fmtNum(sum(c, 'deliveryFailures'))}${
			runs.some((r) => r.contender === c && r.failureReasons)
				? ` (${runs
						.filter((r) => r.contender === c && r.failureReasons)
						.map((r) => String(r.failureReasons))
						.join('; ')})`
				: ''
		}`,
		c === hook ? '1.00x' : ratio(med(c, 'p50'), med(hook, 'p50')),
		c === hook ? '1.00x' : ratio(med(c, 'p95'), med(hook, 'p95')),
		errorsOf(runs, c) ?? '',
	]);
	const p50r = med(node, 'p50') / med(hook, 'p50');
	const p95r = med(node, 'p95') / med(hook, 'p95');
	const lost = sum(node, 'lost');
	const dup = sum(node, 'duplicated');
	const title = queueMode
		? `7. Trigger in queue mode (${queueMode.describe}), ${BURST} completions in a burst`
		: `3. Trigger, ${BURST} completions in a burst`;
	const where = queueMode ? ' in queue mode' : '';
	return {
		title,
		body: table(
			[
				'contender',
				'latency p50',
				'p95',
				'max',
				'to execution end p50 / p95',
				'burst to last execution',
				`executions started (${ctx.shortRounds} runs)`,
				'lost',
				'duplicated',
				'failed executions',
				'deliveries the sandbox saw fail',
				'p50 vs Webhook',
				'p95 vs Webhook',
				'errors',
			],
			rows,
		),
		goals: [
			{
				goal: `Trigger latency within 1.1x of n8n's Webhook node${where} (p50 / p95)`,
				measured: `${fmtNum(p50r, 2)}x / ${fmtNum(p95r, 2)}x (to execution end: ${fmtNum(med(node, 'doneP50') / med(hook, 'doneP50'), 2)}x / ${fmtNum(med(node, 'doneP95') / med(hook, 'doneP95'), 2)}x)`,
				met: Number.isFinite(p50r) ? p50r <= 1.1 && p95r <= 1.1 : null,
			},
			{
				goal: `Trigger${where}: zero lost, zero duplicated`,
				measured: `${lost} lost, ${dup} duplicated`,
				met: runs.some((r) => r.contender === node && !r.error) ? lost === 0 && dup === 0 : null,
			},
		],
		notes: [
			"Latency: the execution's startedAt (n8n) minus the task's completed_at (sandbox), same clock; per run p50/p95/max over the burst, then the median over runs. 'To execution end' uses the execution's stoppedAt instead: when the workflow has done its work. Both contenders get the same deliveries from the sandbox (one POST per completion, up to 64 in flight, no retry and no timeout, as the real service). With 500 at once the figure is mostly n8n's queueing: how fast it turns deliveries into executions.",
			'Lost: completed tasks with no execution 20 s after executions stopped appearing; a delivery the sandbox saw fail is lost for good (the service never retries).',
		],
		summary: [
			`${title}: trigger p50 ${fmtMs(med(node, 'p50'))} p95 ${fmtMs(med(node, 'p95'))}; Webhook p50 ${fmtMs(med(hook, 'p50'))} p95 ${fmtMs(med(hook, 'p95'))}`,
		],
	};
}

// ---- 4. poll trigger -----------------------------------------------------------------------------

const POLL_BURST = 5000;

/** Groups request timestamps into polls: a gap of more than a second starts a new poll. */
function groupPolls(times: number[]): number[][] {
	const polls: number[][] = [];
	for (const t of [...times].sort((a, b) => a - b)) {
		const last = polls[polls.length - 1];
		if (last && t - last[last.length - 1] < 1000) last.push(t);
		else polls.push([t]);
	}
	return polls;
}

export async function scenarioPoll(ctx: BenchContext): Promise<Section> {
	const { n8n, sandbox } = ctx;
	const id = await ensureWorkflow(n8n, wf.pollTrigger(ctx.creds), false);
	const title = '4. Poll trigger';
	const rows: string[][] = [];
	const notes: string[] = [
		"n8n refuses poll times under a minute, and it runs one poll when a workflow is activated. Each measured poll is that activation poll (the same poll function as a scheduled one, with the cursor kept in the workflow's static data): deactivate, change the queue, activate, read the sandbox's request log. Poll times are Every Minute; no scheduled poll fell inside a measurement (polls are told apart by a gap of more than a second between requests).",
		"Emit time: from the poll's first request to the sandbox to the start of the execution it emitted (n8n's startedAt); 'from activation' adds n8n's activation work.",
	];
	const activate = async (): Promise<{ t0: number; polls: number[][]; entries: number }> => {
		await sandbox.client.clearRequests();
		const t0 = Date.now();
		await n8n.api.post(`/workflows/${id}/activate`, {});
		// wait for the poll's requests, then one quiet second
		const deadline = Date.now() + 20_000;
		let count = 0;
		let quietSince = Date.now();
		for (;;) {
			const n = (await sandbox.client.requests()).length;
			if (n !== count) {
				count = n;
				quietSince = Date.now();
			}
			if ((count > 0 && Date.now() - quietSince > 1000) || Date.now() > deadline) break;
			await sleep(100);
		}
		const reqs = await sandbox.client.requests();
		return {
			t0,
			polls: groupPolls(reqs.map((r) => Date.parse(r.timestamp))),
			entries: reqs.length,
		};
	};
	let perPoll = NaN;
	try {
		await sandbox.client.reset();
		await deactivate(n8n, id);
		const firstPoll = await activate();
		rows.push([
			'first poll after activation (places the cursor)',
			`${firstPoll.polls[0]?.length ?? 0} request(s)`,
			'',
			'',
		]);
		await deactivate(n8n, id);
		const idle: number[] = [];
		for (let round = 1; round <= ctx.shortRounds; round++) {
			const after = await lastExecutionId(n8n);
			const poll = await activate();
			await deactivate(n8n, id);
			const execs = await executionsAfter(n8n, id, after, { includeData: false });
			idle.push(poll.polls[0]?.length ?? NaN);
			rows.push([
				`idle poll ${round}`,
				`${poll.polls[0]?.length ?? 0} request(s)`,
				`${execs.length} executions`,
				poll.polls.length > 1 ? `${poll.polls.length} polls seen` : '',
			]);
		}
		perPoll = median(idle);
		log(`poll idle: ${idle.join(', ')} requests per poll`);

		const emits: number[] = [];
		const fromActivation: number[] = [];
		for (let round = 1; round <= ctx.shortRounds; round++) {
			await sandbox.client.createTasks(QUEUE_ID, POLL_BURST);
			await sandbox.client.completeMany(QUEUE_ID, POLL_BURST, { by: PERSON });
			const after = await lastExecutionId(n8n);
			const poll = await activate();
			await waitForExecutions(n8n, id, after, 1, { idleTimeoutMs: 30_000 });
			await deactivate(n8n, id);
			const execs = await executionsAfter(n8n, id, after, { keepJson: [] });
			const items = execs.reduce((a, e) => a + (e.nodes[wf.WORK.trigger]?.items ?? 0), 0);
			const first = execs[execs.length - 1];
			if (!first) {
				rows.push([`burst ${round}`, 'no execution', '', '']);
				continue;
			}
			const startedAt = Date.parse(first.startedAt);
			const pollStart = poll.polls[0]?.[0] ?? NaN;
			emits.push(startedAt - pollStart);
			fromActivation.push(startedAt - poll.t0);
			rows.push([
				`burst ${round}: ${POLL_BURST} completions`,
				`${execs.length} execution(s), ${items} items, ${poll.polls[0]?.length ?? 0} requests`,
				`emitted ${fmtMs(startedAt - pollStart)} after the poll's first request`,
				`${fmtMs(startedAt - poll.t0)} from activation`,
			]);
			log(
				`poll burst ${round}: ${execs.length} executions, ${items} items, ${poll.polls[0]?.length ?? 0} requests, emit ${fmtMs(startedAt - pollStart)}`,
			);
		}
		rows.push([
			`emit time, median of ${emits.length}`,
			'',
			fmtMs(median(emits)),
			`${fmtMs(median(fromActivation))} from activation`,
		]);
	} catch (error) {
		rows.push(['error', errorText(error), '', '']);
	} finally {
		await deactivate(n8n, id);
	}
	return {
		title,
		body: table(['measure', 'count', 'figure', 'note'], rows),
		goals: [
			{
				goal: 'An idle poll costs one request',
				measured: `${fmtNum(perPoll, 2)} request(s)`,
				met: Number.isFinite(perPoll) ? perPoll <= 1 : null,
			},
		],
		notes,
		summary: [`${title}: ${fmtNum(perPoll, 2)} request(s) per idle poll`],
	};
}
