// Scenario 6, Create and Wait: (a) a completion to the end of the resumed execution, against n8n's
// own Wait node resumed by a POST to its resume address on the same n8n; (b) 1,000 items waiting in
// one execution; (c) n8n's memory with 200 waiting executions of each.
import axios from 'axios';

import type { WorkflowJson } from '../tools/n8n/provision';
import type { N8nHandle } from '../tools/n8n/start';
import {
	executionsAfter,
	fmtMs,
	fmtNum,
	lastExecutionId,
	log,
	median,
	n8nPid,
	percentile,
	PERSON,
	readMemKb,
	SECOND_PERSON,
	sleep,
	table,
	type Execution,
} from './lib';
import type { BenchContext, Section } from './scenarios';
import { PKG } from './workflows';

const MEMORY_NOISE_MB = 20;
const ENDED = new Set(['success', 'error', 'crashed', 'canceled']);

const QUEUE = 104;
const TRIGGER_WEBHOOK_ID = 'bench-caw-route-back';

export function hook(path: string) {
	return {
		name: 'Start',
		type: 'n8n-nodes-base.webhook',
		typeVersion: 2.1,
		position: [0, 0],
		webhookId: `bench-${path}`,
		parameters: { httpMethod: 'POST', path, responseMode: 'onReceived', options: {} },
	};
}

export const items = {
	name: 'Items',
	type: 'n8n-nodes-base.code',
	typeVersion: 2,
	position: [220, 0],
	parameters: {
		jsCode:
			'const n = $input.first().json.body.count ?? 1;\nreturn Array.from({ length: n }, (_, i) => ({ json: { message: `bench ${i}` } }));',
	},
};

export const done = {
	name: 'Done',
	type: 'n8n-nodes-base.noOp',
	typeVersion: 1,
	position: [660, 0],
	parameters: {},
};

export function chain(names: string[]): WorkflowJson['connections'] {
	return Object.fromEntries(
		names
			.slice(0, -1)
			.map((name, i) => [name, { main: [[{ node: names[i + 1], type: 'main', index: 0 }]] }]),
	);
}

/** The Approval on the Decision field, with these options of Create and Wait. */
export const approval = (options: Record<string, unknown>) => ({
	responseType: 'approval',
	approvalField: 'decision',
	approveOption: 'approve',
	options,
});

/** A workflow: a webhook at `path`, its items, Create and Wait on Refund Decisions with `parameters`. */
export function askingWorkflow(
	ctx: BenchContext,
	name: string,
	path: string,
	parameters: Record<string, unknown>,
): WorkflowJson {
	return {
		name,
		nodes: [
			hook(path),
			items,
			{
				name: 'Ask a person',
				type: `${PKG}.taskQueue`,
				typeVersion: 1,
				position: [440, 0],
				parameters: {
					resource: 'task',
					operation: 'sendAndWait',
					queue: { __rl: true, mode: 'id', value: String(QUEUE) },
					taskData: {
						mappingMode: 'defineBelow',
						value: { customer_message: '={{ $json.message }}' },
						matchingColumns: [],
						schema: [],
					},
					resumeField: 'resume_url',
					options: {},
					...parameters,
				},
				credentials: { taskQueueApi: ctx.creds.taskQueue },
			},
			done,
		],
		connections: chain(['Start', 'Items', 'Ask a person', 'Done']),
		settings: { executionOrder: 'v1' },
	};
}

/** Create and Wait; with `people`, Several People per Item (All Must Approve by that many people). */
function createAndWaitWorkflow(ctx: BenchContext, people?: number): WorkflowJson {
	if (!people) return askingWorkflow(ctx, 'bench: Create and Wait', 'bench-create-and-wait', {});
	return askingWorkflow(
		ctx,
		`bench: Create and Wait, ${people} people`,
		'bench-create-and-wait-people',
		approval({ severalPeople: { values: { people, decideWhen: 'allApprove' } } }),
	);
}

/** The floor (bench/floor): a do-nothing waiting node whose tasks carry `$execution.resumeUrl`. */
export function floorWaitWorkflow(ctx: BenchContext): WorkflowJson {
	return {
		name: "bench: n8n's floor of waiting for a person",
		nodes: [
			hook('bench-create-and-wait-floor'),
			items,
			{
				name: 'Floor wait',
				type: 'n8n-nodes-bench-floor.benchFloorWait',
				typeVersion: 1,
				position: [440, 0],
				parameters: { url: `${ctx.sandbox.baseUrl}/orgs/1/queues/${QUEUE}/tasks/create` },
				credentials: { taskQueueApi: ctx.creds.taskQueue },
			},
			done,
		],
		connections: chain(['Start', 'Items', 'Floor wait', 'Done']),
		settings: { executionOrder: 'v1' },
	};
}

/** The floor's route back: a do-nothing trigger forwarding each delivery to the address its task carries. */
export function floorRouteWorkflow(): WorkflowJson {
	return {
		name: "bench: n8n's floor of routing a completion back",
		nodes: [
			{
				name: 'Floor route',
				type: 'n8n-nodes-bench-floor.benchFloorRoute',
				typeVersion: 1,
				position: [0, 0],
				webhookId: 'bench-floor-route',
				parameters: {},
			},
		],
		connections: {},
		settings: { executionOrder: 'v1' },
	};
}

/** n8n's own Wait node, resumed by a POST to `$execution.resumeUrl` (kept by the Set node). */
function waitNodeWorkflow(): WorkflowJson {
	return {
		name: "bench: n8n's Wait node",
		nodes: [
			hook('bench-wait-node'),
			{
				name: 'Address',
				type: 'n8n-nodes-base.set',
				typeVersion: 3.4,
				position: [220, 0],
				parameters: {
					assignments: {
						assignments: [
							{ id: 'r', name: 'resume', value: '={{ $execution.resumeUrl }}', type: 'string' },
						],
					},
					options: {},
				},
			},
			{
				name: 'Wait',
				type: 'n8n-nodes-base.wait',
				typeVersion: 1.1,
				position: [440, 0],
				parameters: { resume: 'webhook', httpMethod: 'POST', options: {} },
			},
			done,
		],
		connections: chain(['Start', 'Address', 'Wait', 'Done']),
		settings: { executionOrder: 'v1' },
	};
}

export function routeBackWorkflow(
	ctx: BenchContext,
	queue = QUEUE,
	webhookId = TRIGGER_WEBHOOK_ID,
): WorkflowJson {
	return {
		name: `bench: completions of queue ${queue}`,
		nodes: [
			{
				name: 'Task completed',
				type: `${PKG}.taskQueueTrigger`,
				typeVersion: 1,
				position: [0, 0],
				webhookId,
				parameters: {
					event: 'taskCompleted',
					queue: { __rl: true, mode: 'id', value: String(queue) },
					options: {},
				},
				credentials: { taskQueueApi: ctx.creds.taskQueue },
			},
		],
		connections: {},
		settings: { executionOrder: 'v1' },
	};
}

export async function post(n8n: N8nHandle, path: string, body: unknown): Promise<void> {
	const res = await axios.post(`${n8n.webhookBase}/${path}`, body, {
		validateStatus: () => true,
		timeout: 60_000,
	});
	if (res.status >= 400) throw new Error(`webhook ${path}: HTTP ${res.status}`);
}

export async function until<T>(
	what: string,
	probe: () => Promise<T | undefined>,
	timeoutMs: number,
	everyMs = 50,
): Promise<T> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const value = await probe();
		if (value !== undefined) return value;
		if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
		await sleep(everyMs);
	}
}

export async function executionIn(
	n8n: N8nHandle,
	workflowId: string,
	after: number,
	status: 'waiting' | 'stopped',
	timeoutMs = 120_000,
	keepJson: string[] = [],
): Promise<Execution> {
	return await until(
		`an execution of ${workflowId} ${status}`,
		async () =>
			(
				await executionsAfter(n8n, workflowId, after, {
					includeData: keepJson.length > 0,
					keepJson,
				})
			).find((x) =>
				// a resumed execution keeps the stoppedAt of its wait while it runs again: only an end status counts
				status === 'waiting' ? x.status === 'waiting' : x.stoppedAt !== null && ENDED.has(x.status),
			),
		timeoutMs,
	);
}

export async function scenarioWaiting(
	ctx: BenchContext,
	rounds: number,
	bulk: number,
	concurrentWaits: number,
): Promise<Section> {
	const created: string[] = [];
	try {
		return await measureWaiting(ctx, created, rounds, bulk, concurrentWaits);
	} finally {
		// also after a failure: a retry activates workflows with the same webhook paths
		for (const id of created)
			await ctx.n8n.api.post(`/workflows/${id}/deactivate`, {}).catch(() => undefined);
	}
}

async function measureWaiting(
	ctx: BenchContext,
	created: string[],
	rounds: number,
	bulk: number,
	concurrentWaits: number,
): Promise<Section> {
	const { n8n, sandbox } = ctx;
	const client = sandbox.client;
	const create = async (json: WorkflowJson, activate: boolean) => {
		const id = String((await n8n.api.post('/workflows', json)).data.id);
		created.push(id);
		if (activate) await n8n.api.post(`/workflows/${id}/activate`, {});
		return id;
	};
	await create(routeBackWorkflow(ctx), true);
	await until(
		'the route back registered',
		async () =>
			(await client.getQueue(QUEUE)).webhook?.target?.includes(TRIGGER_WEBHOOK_ID)
				? true
				: undefined,
		30_000,
	);
	const ours = await create(createAndWaitWorkflow(ctx), true);
	const twoPeople = await create(createAndWaitWorkflow(ctx, 2), true);
	const theirs = await create(waitNodeWorkflow(), true);
	const floor = await create(floorWaitWorkflow(ctx), true);
	await create(floorRouteWorkflow(), true);
	await sleep(1500); // production webhooks register asynchronously
	const ourTarget = String((await client.getQueue(QUEUE)).webhook?.target ?? '');

	const tasksOf = async (executionId: number, count: number) =>
		await until(
			`${count} tasks of execution ${executionId}`,
			async () => {
				const found = (await client.tasks(QUEUE)).filter(
					(t) =>
						t.status !== 'completed' &&
						String(t.data.resume_url).includes(`/webhook-waiting/${executionId}/`),
				);
				return found.length === count ? found : undefined;
			},
			300_000,
			200,
		);

	// (a) one item: completion -> end of the resumed execution
	const latency = {
		ours: [] as number[],
		people: [] as number[],
		theirs: [] as number[],
		floor: [] as number[],
	};
	const oneOurs = async () => {
		const after = await lastExecutionId(n8n);
		await post(n8n, 'bench-create-and-wait', { count: 1 });
		const waiting = await executionIn(n8n, ours, after, 'waiting');
		const [task] = await tasksOf(waiting.id, 1);
		await sleep(200);
		const t0 = Date.now();
		await client.complete(QUEUE, task.id, { by: PERSON, data: { decision: 'approve' } });
		const end = await executionIn(n8n, ours, after, 'stopped', 60_000, ['Ask a person']);
		if (end.status !== 'success')
			throw new Error(`Create and Wait execution ${end.id} ended ${end.status}`);
		const delivery = (await client.webhookCalls()).find((c) => c.taskId === task.id);
		const read = (await client.requests())
			.filter((r) => r.path.endsWith('/tasks/completed'))
			.at(-1);
		breakdown.push({
			sent: Date.parse(String(delivery?.sentAt)) - t0,
			read: read ? Date.parse(read.timestamp) - t0 : NaN,
			resumed: (end.nodes['Ask a person']?.startTime ?? NaN) - t0,
			delivered: Date.parse(String(delivery?.finishedAt)) - t0,
			end: Date.parse(String(end.stoppedAt)) - t0,
		});
		return Date.parse(String(end.stoppedAt)) - t0;
	};
	const breakdown: Array<Record<string, number>> = [];
	// two people, All Must Approve: from the deciding (second) approval to the end of the execution
	const onePeople = async () => {
		const after = await lastExecutionId(n8n);
		await post(n8n, 'bench-create-and-wait-people', { count: 1 });
		const waiting = await executionIn(n8n, twoPeople, after, 'waiting');
		const [first, second] = await tasksOf(waiting.id, 2);
		await client.complete(QUEUE, first.id, { by: PERSON, data: { decision: 'approve' } });
		await until(
			'the first approval passed on',
			async () =>
				(await client.webhookCalls()).find((c) => c.taskId === first.id && c.finishedAt !== null),
			30_000,
			50,
		);
		await sleep(200);
		const t0 = Date.now();
		await client.complete(QUEUE, second.id, { by: SECOND_PERSON, data: { decision: 'approve' } });
		const end = await executionIn(n8n, twoPeople, after, 'stopped', 60_000, ['Ask a person']);
		if (end.status !== 'success')
			throw new Error(`two-people execution ${end.id} ended ${end.status}`);
		return Date.parse(String(end.stoppedAt)) - t0;
	};
	const oneFloor = async () => await floorRound(ctx, floor, ourTarget);
	const oneTheirs = async () => {
		const after = await lastExecutionId(n8n);
		await post(n8n, 'bench-wait-node', {});
		const waiting = await executionIn(n8n, theirs, after, 'waiting', 60_000, ['Address']);
		const resume = String(waiting.nodes.Address?.json?.[0]?.resume);
		await sleep(200);
		const t0 = Date.now();
		const res = await axios.post(resume, {}, { validateStatus: () => true });
		if (res.status >= 400) throw new Error(`the Wait node's resume address answered ${res.status}`);
		const end = await executionIn(n8n, theirs, after, 'stopped', 60_000);
		if (end.status !== 'success') throw new Error(`Wait execution ${end.id} ended ${end.status}`);
		return Date.parse(String(end.stoppedAt)) - t0;
	};
	await oneOurs(); // warm-up
	await onePeople();
	await oneTheirs();
	await oneFloor();
	for (let round = 1; round <= rounds; round++) {
		latency.ours.push(await oneOurs());
		latency.people.push(await onePeople());
		latency.theirs.push(await oneTheirs());
		latency.floor.push(await oneFloor());
	}
	const step = (key: string) => fmtMs(median(breakdown.map((b) => b[key]).filter(Number.isFinite)));
	const steps = `delivery sent ${step('sent')}, the waiting node's read of the service ${step('read')}, node resumed ${step('resumed')}, delivery answered ${step('delivered')}, execution end ${step('end')}`;
	log(`create and wait, medians after the completion: ${steps}`);
	log(
		`create and wait latency: ours ${latency.ours.map((ms) => fmtMs(ms)).join(' ')}; Wait node ${latency.theirs.map((ms) => fmtMs(ms)).join(' ')}; floor ${latency.floor.map((ms) => fmtMs(ms)).join(' ')}`,
	);
	const p = (values: number[], q: number) => (q === 50 ? median(values) : percentile(values, q));
	const r50 = p(latency.ours, 50) / p(latency.theirs, 50);
	const r95 = p(latency.ours, 95) / p(latency.theirs, 95);
	const f50 = p(latency.ours, 50) / p(latency.floor, 50);
	const f95 = p(latency.ours, 95) / p(latency.floor, 95);
	log(`create and wait, two people: ${latency.people.map((ms) => fmtMs(ms)).join(' ')}`);

	// (b) many items waiting in one execution
	const after = await lastExecutionId(n8n);
	const t0 = Date.now();
	await post(n8n, 'bench-create-and-wait', { count: bulk });
	const waiting = await executionIn(n8n, ours, after, 'waiting', 300_000);
	const tasks = await tasksOf(waiting.id, bulk);
	const createdIn = Date.now() - t0;
	await client.clearRequests();
	await client.completeMany(QUEUE, bulk, { by: PERSON });
	const end = await executionIn(n8n, ours, after, 'stopped', 600_000, ['Ask a person']);
	const completed = (await client.tasks(QUEUE)).filter((t) => tasks.some((w) => w.id === t.id));
	const lastCompletion = Math.max(...completed.map((t) => Date.parse(String(t.completed_at))));
	const resumeAfterLast = Date.parse(String(end.stoppedAt)) - lastCompletion;
	const requests = (await client.requests()).length;
	const ids = new Set(tasks.map((t) => t.id));
	const deliveries = await until(
		`the ${bulk} deliveries answered`,
		async () => {
			const calls = (await client.webhookCalls()).filter((c) => ids.has(c.taskId));
			return calls.length >= bulk && calls.every((c) => c.finishedAt !== null) ? calls : undefined;
		},
		300_000,
		500,
	);
	const deliveriesDone = Math.max(...deliveries.map((c) => Date.parse(String(c.finishedAt))));
	const firstSent = Math.min(...deliveries.map((c) => Date.parse(String(c.sentAt))));
	const deliveriesSpan = deliveriesDone - firstSent;
	const resumedAfterFirstDelivery = Date.parse(String(end.stoppedAt)) - firstSent;
	const executions = (await executionsAfter(n8n, ours, after, { includeData: false })).length;
	const outItems = end.nodes['Ask a person']?.json ?? [];
	const paired = outItems.every(
		(json, i) =>
			(json.data as { customer_message?: string } | undefined)?.customer_message === `bench ${i}`,
	);
	log(
		`${bulk} items: created and waiting in ${fmtMs(createdIn)}, ${executions} execution(s), resumed ${fmtMs(resumeAfterLast)} after the last completion, ${requests} service requests for ${bulk} completions`,
	);

	// (c) memory with many waiting executions of each (n8n keeps them in its database; the RSS moves by
	// tens of MB with garbage collection alone, and often falls)
	const pid = n8nPid(n8n);
	const rssMb = () => readMemKb(pid).rss / 1024;
	const settle = async () => {
		await sleep(3000);
		return rssMb();
	};
	const memory: Record<string, { before: number; after: number }> = {};
	for (const [name, workflowId, path, body] of [
		["n8n's Wait node", theirs, 'bench-wait-node', {}],
		['Create and Wait', ours, 'bench-create-and-wait', { count: 1 }],
	] as const) {
		const before = await settle();
		const mark = await lastExecutionId(n8n);
		for (let i = 0; i < concurrentWaits; i++) await post(n8n, path, body);
		await until(
			`${concurrentWaits} waiting executions of ${name}`,
			async () =>
				(await executionsAfter(n8n, workflowId, mark, { includeData: false })).filter(
					(x) => x.status === 'waiting',
				).length >= concurrentWaits
					? true
					: undefined,
			300_000,
			500,
		);
		memory[name] = { before, after: await settle() };
		log(
			`${concurrentWaits} waiting ${name}: n8n RSS ${fmtNum(memory[name].before)} -> ${fmtNum(memory[name].after)} MB`,
		);
	}
	// let them all go: the people answer every Create and Wait
	await client.completeMany(QUEUE, concurrentWaits, { by: PERSON });

	const growth = (name: string) => memory[name].after - memory[name].before;
	const title = '6. Create and Wait';
	return {
		title,
		body: [
			table(
				[
					'contender',
					'completion to execution end p50',
					'p95',
					'rounds',
					'vs floor p50',
					'p95',
					'vs Wait node p50',
					'p95',
				],
				[
					[
						'Create and Wait (Task Queue Trigger forwards the completion)',
						fmtMs(p(latency.ours, 50)),
						fmtMs(p(latency.ours, 95)),
						String(rounds),
						`${fmtNum(f50, 2)}x`,
						`${fmtNum(f95, 2)}x`,
						`${fmtNum(r50, 2)}x`,
						`${fmtNum(r95, 2)}x`,
					],
					[
						'Create and Wait, 2 people (All Must Approve), from the deciding approval',
						fmtMs(p(latency.people, 50)),
						fmtMs(p(latency.people, 95)),
						String(rounds),
						`${fmtNum(p(latency.people, 50) / p(latency.floor, 50), 2)}x`,
						`${fmtNum(p(latency.people, 95) / p(latency.floor, 95), 2)}x`,
						`${fmtNum(p(latency.people, 50) / p(latency.theirs, 50), 2)}x`,
						`${fmtNum(p(latency.people, 95) / p(latency.theirs, 95), 2)}x`,
					],
					[
						"n8n's floor (bench/floor: a do-nothing trigger forwards the delivery to a do-nothing waiting node)",
						fmtMs(p(latency.floor, 50)),
						fmtMs(p(latency.floor, 95)),
						String(rounds),
						'1.00x',
						'1.00x',
						`${fmtNum(p(latency.floor, 50) / p(latency.theirs, 50), 2)}x`,
						`${fmtNum(p(latency.floor, 95) / p(latency.theirs, 95), 2)}x`,
					],
					[
						"n8n's Wait node, POST to its resume address (no service, no trigger)",
						fmtMs(p(latency.theirs, 50)),
						fmtMs(p(latency.theirs, 95)),
						String(rounds),
						'',
						'',
						'1.00x',
						'1.00x',
					],
				],
			),
			'',
			table(
				[
					'items waiting in one execution',
					'created and waiting in',
					'executions',
					'resumed after the last completion',
					'service requests per completion',
					'output paired in input order',
				],
				[
					[
						fmtNum(bulk),
						fmtMs(createdIn),
						String(executions),
						fmtMs(resumeAfterLast),
						fmtNum(requests / bulk, 3),
						paired && outItems.length === bulk ? 'yes' : `no (${outItems.length} items)`,
					],
				],
			),
			'',
			table(
				['waiting executions', 'n8n RSS before', 'after', 'growth'],
				Object.entries(memory).map(([name, m]) => [
					`${concurrentWaits} x ${name}`,
					`${fmtNum(m.before)} MB`,
					`${fmtNum(m.after)} MB`,
					`${fmtNum(m.after - m.before)} MB`,
				]),
			),
		].join('\n'),
		goals: [
			{
				goal: "Create and Wait: completion to the resumed execution's end within 1.2x of n8n's floor (a do-nothing trigger forwarding to a do-nothing waiting node; p50 / p95)",
				measured: `${fmtNum(f50, 2)}x / ${fmtNum(f95, 2)}x (${fmtMs(p(latency.ours, 50))} vs ${fmtMs(p(latency.floor, 50))} p50)`,
				met: f50 <= 1.2 && f95 <= 1.2,
			},
			{
				goal: "Create and Wait: completion to the resumed execution's end within 1.3x of n8n's Wait node (p50 / p95)",
				measured: `${fmtNum(r50, 2)}x / ${fmtNum(r95, 2)}x (${fmtMs(p(latency.ours, 50))} vs ${fmtMs(p(latency.theirs, 50))} p50)`,
				met: r50 <= 1.3 && r95 <= 1.3,
			},
			{
				goal: `${fmtNum(bulk)} items in one execution: resumes once, within 2 s of the last completion, at most 2 service requests per completion`,
				measured: `${executions} execution, ${fmtMs(resumeAfterLast)} (the execution ended ${fmtMs(resumedAfterFirstDelivery)} after the first delivery reached n8n; n8n took ${fmtMs(deliveriesSpan)} to answer all ${fmtNum(bulk)} deliveries), ${fmtNum(requests / bulk, 3)} requests per completion`,
				met:
					executions === 1 &&
					end.status === 'success' &&
					resumeAfterLast <= 2000 &&
					requests / bulk <= 2,
			},
			{
				goal: `${concurrentWaits} waiting executions: n8n's memory grows no more than with as many waiting Wait-node executions (a fall counts as none; ${MEMORY_NOISE_MB} MB of noise allowed)`,
				measured: `${fmtNum(growth('Create and Wait'))} MB vs ${fmtNum(growth("n8n's Wait node"))} MB growth`,
				met: growth('Create and Wait') <= Math.max(0, growth("n8n's Wait node")) + MEMORY_NOISE_MB,
			},
		],
		notes: [
			"Completion to execution end: from the moment the benchmark asks the sandbox to complete the task (or POSTs to the Wait node's `$execution.resumeUrl`) to the resumed execution's `stoppedAt` in n8n (same machine clock). For Create and Wait that includes the service's webhook delivery to the Task Queue Trigger, the trigger's call to the waiting address, and the waiting node's read of the completed list (it confirms every completion with the service).",
			`Service requests: every API request the sandbox logged while people completed the ${fmtNum(bulk)} tasks (the waiting node's reads of the completed list; the trigger itself makes none).`,
			`Where Create and Wait's time goes (medians, from the completion): ${steps}.`,
			'Memory: n8n keeps waiting executions in its database, not in memory; the figure is the RSS of the n8n process 3 s after the last execution started waiting, against the RSS before.',
		],
		summary: [
			`${title}: ${fmtNum(f50, 2)}x / ${fmtNum(f95, 2)}x of n8n's floor, ${fmtNum(r50, 2)}x / ${fmtNum(r95, 2)}x of the Wait node; ${fmtNum(bulk)} items resumed ${fmtMs(resumeAfterLast)} after the last completion with ${fmtNum(requests / bulk, 2)} requests each`,
		],
	};
}

/**
 * One round of n8n's floor (bench/floor): a person completes the floor's task; its delivery goes to
 * the do-nothing route for the round, then the queue's webhook goes back to `ourTarget`. Returns the
 * time from the completion to the end of the resumed execution.
 */
export async function floorRound(
	ctx: BenchContext,
	floorWorkflowId: string,
	ourTarget: string,
): Promise<number> {
	const { n8n } = ctx;
	const client = ctx.sandbox.client;
	const after = await lastExecutionId(n8n);
	await post(n8n, 'bench-create-and-wait-floor', { count: 1 });
	const waiting = await executionIn(n8n, floorWorkflowId, after, 'waiting');
	const [task] = await until(
		`the floor's task of execution ${waiting.id}`,
		async () => {
			const found = (await client.tasks(QUEUE)).filter(
				(t) =>
					t.status !== 'completed' &&
					new RegExp(`/webhook-waiting/${waiting.id}(\\?|$)`).test(String(t.data.resume_url)),
			);
			return found.length === 1 ? found : undefined;
		},
		60_000,
		100,
	);
	await client.setWebhook(QUEUE, `${n8n.webhookBase}/bench-floor-route`);
	try {
		await sleep(200);
		const t0 = Date.now();
		await client.complete(QUEUE, task.id, { by: PERSON, data: { decision: 'approve' } });
		const end = await executionIn(n8n, floorWorkflowId, after, 'stopped', 60_000);
		if (end.status !== 'success') throw new Error(`floor execution ${end.id} ended ${end.status}`);
		return Date.parse(String(end.stoppedAt)) - t0;
	} finally {
		await client.setWebhook(QUEUE, ourTarget);
	}
}
