// n8n 2.41.1 in queue mode (tools/n8n/queue-mode.ts): PostgreSQL, Redis, a main, 2 workers and 2
// webhook processes behind nginx round-robin, the address the sandbox calls. What one process gives
// (test/e2e/n8n.e2e.test.ts) must hold here: each completion runs once, none is lost, whichever
// process takes the delivery and whichever worker runs the execution. Figures per case are printed
// (lost, duplicated, executions, the processes that took the calls) and kept in
// .tmp/reliability/queue-mode.json. Runs with `npm run test:queue-mode` (TQ_QUEUE_MODE=1).
import { mkdirSync, writeFileSync } from 'fs';
import { join } from 'path';

import type { ProxiedCall } from '../../tools/n8n/queue-mode';
import {
	activate,
	countsSettle,
	createWorkflow,
	deleteWorkflow,
	nodeOutput,
	executionsOfTrigger,
	queueLocator,
	runAction,
	setupE2E,
	triggerWorkflow,
	TYPES,
	uniq,
	waitFor,
	webhookTarget,
	type E2E,
	type Execution,
} from './helpers';

const ALICE = 'alice@example.com';
const BURST = Number(process.env.TQ_QUEUE_BURST ?? 500);
const QUEUE = 101;

let e: E2E;
const figures: Record<string, unknown> = {};

beforeAll(async () => {
	e = await setupE2E();
	if (!e.queueMode)
		throw new Error('queue-mode.e2e.test.ts needs TQ_QUEUE_MODE=1 (npm run test:queue-mode)');
}, 600_000);

afterAll(async () => {
	if (Object.keys(figures).length) {
		const dir = join(__dirname, '..', '..', '.tmp', 'reliability');
		mkdirSync(dir, { recursive: true });
		writeFileSync(join(dir, 'queue-mode.json'), JSON.stringify(figures, null, 2));
	}
	await e?.stop();
});

function record(name: string, value: Record<string, unknown>): void {
	figures[name] = value;
	console.log(`[queue-mode] ${name}: ${JSON.stringify(value)}`);
}

/** Every execution of a trigger workflow (all pages of the public API), with data, oldest first. */
async function allExecutions(workflowId: string): Promise<Execution[]> {
	return (await executionsOfTrigger(e, workflowId, { onlySaved: false })).sort(
		(a, b) => Number(a.id) - Number(b.id),
	);
}

function tally<T>(values: T[]): Record<string, number> {
	const out: Record<string, number> = {};
	for (const v of values) out[String(v)] = (out[String(v)] ?? 0) + 1;
	return out;
}

/** Completions emitted by the trigger across its executions: lost, duplicated, which processes. */
async function emitted(workflowId: string, completed: number[], since: number) {
	const xs = (await allExecutions(workflowId)).filter(
		(x) => x.status !== 'running' && x.status !== 'new',
	);
	const ids = xs.flatMap((x) => nodeOutput(x, 'Trigger')).map((t) => Number(t.id));
	const times = tally(ids);
	const calls = deliveriesSince(since);
	return {
		completions: completed.length,
		executions: xs.length,
		failed: xs.filter((x) => x.status !== 'success').length,
		emitted: ids.length,
		lost: completed.filter((id) => !times[id]).length,
		duplicated: Object.values(times).reduce((sum, n) => sum + n - 1, 0),
		strangers: Object.keys(times).filter((id) => !completed.includes(Number(id))).length,
		deliveriesByProcess: tally(calls.map((c) => c.role)),
		deliveryStatuses: tally(calls.map((c) => c.status)),
		executionsByWorker: tally(xs.map((x) => e.queueMode!.ranBy(x.id) ?? 'unknown')),
	};
}

function deliveriesSince(since: number): ProxiedCall[] {
	return (
		e
			.queueMode!.proxiedCalls()
			.slice(since)
			// the service's deliveries (the trigger's own check also calls its address: its record)
			.filter(
				(c) =>
					c.method === 'POST' &&
					c.path.includes('/task-completed') &&
					c.agent === 'task-queue-sandbox',
			)
	);
}

/** Runs `fn` with nginx routing each webhook address to one process, then back to round-robin. */
async function routedByUrl<T>(fn: () => Promise<T>): Promise<T> {
	await e.queueMode!.setRouting('by-path');
	try {
		return await fn();
	} finally {
		await e.queueMode!.setRouting('round-robin');
	}
}

async function triggerOn(
	queueId: number,
	options: Record<string, unknown> = {},
): Promise<{ id: string; webhookId: string }> {
	const webhookId = uniq('tq-qm');
	const id = await createWorkflow(
		e,
		triggerWorkflow(e, `e2e queue mode ${webhookId}`, {
			type: TYPES.trigger,
			webhookId,
			parameters: {
				event: 'taskCompleted',
				queue: queueLocator(queueId),
				options: { replaceExistingWebhook: true, ...options },
			},
		}),
	);
	await activate(e, id);
	await waitFor('the trigger registered', async () =>
		(await webhookTarget(e, queueId)).includes(webhookId),
	);
	return { id, webhookId };
}

/** Completes `count` new tasks of the queue one by one, as people do (each its own delivery). */
async function completeEach(queueId: number, count: number): Promise<number[]> {
	await e.client.createTasks(queueId, count);
	const ids: number[] = [];
	for (let i = 0; i < count; i++)
		ids.push((await e.client.complete(queueId, undefined, { by: ALICE })).id);
	return ids;
}

/** Every delivery the sandbox queued has been answered (or has failed). */
async function deliveriesDone(timeoutMs = 180_000): Promise<void> {
	await waitFor(
		'the deliveries answered',
		async () => {
			const calls = await e.client.webhookCalls();
			const pending = calls.filter((c) => c.state === 'pending');
			if (pending.length === 0) return true;
			// said when the wait times out: how many, and whether they were sent at all
			const unsent = pending.filter((c) => c.sentAt === null).length;
			throw new Error(
				`${pending.length} of ${calls.length} pending (${unsent} not sent yet; the oldest sent at ${pending.find((c) => c.sentAt)?.sentAt ?? '-'})`,
			);
		},
		timeoutMs,
		500,
	);
}

/**
 * The deliveries answered and at least `expected` executions ended; with `completed`, also every one
 * of those completions emitted (Catch Up emits a lost delivery's completion with a later delivery, in
 * an execution that can end after the ones counted), each within `timeoutMs`. What is still missing
 * then is for the test's assertions to report.
 */
async function settled(
	workflowId: string,
	expected: number,
	timeoutMs = 180_000,
	completed: number[] = [],
): Promise<void> {
	await deliveriesDone(timeoutMs);
	await waitFor(
		`${expected} executions of ${workflowId} finished, ${completed.length} completions emitted`,
		async () => {
			const ended = (await allExecutions(workflowId)).filter(
				(x) => x.status !== 'running' && x.status !== 'new',
			);
			if (ended.length < expected) return false;
			const ids = new Set(ended.flatMap((x) => nodeOutput(x, 'Trigger')).map((t) => Number(t.id)));
			return completed.every((id) => ids.has(id));
		},
		timeoutMs,
		1000,
	).catch(() => undefined);
	// anything more (a duplicate) shows up before the executions stop changing
	await countsSettle(async () =>
		(await allExecutions(workflowId)).map((x) => `${x.id}:${x.status}`).join(','),
	);
}

test('the processes: a main, 2 webhook processes, 2 workers; nginx in front of the webhook processes', () => {
	const pids = e.queueMode!.processes();
	expect(Object.keys(pids).sort()).toEqual([
		'main',
		'webhook-1',
		'webhook-2',
		'worker-1',
		'worker-2',
	]);
	expect(new Set(Object.values(pids)).size).toBe(5);
	expect(e.n8n.webhookBase).toBe(e.queueMode!.webhookBase);
});

test('bulk create of 1,000 items runs on a worker; every task created once, every item paired', async () => {
	await e.client.reset();
	await e.client.clearRequests();
	const { items, execution } = await runAction(
		e,
		{
			resource: 'task',
			operation: 'create',
			queue: queueLocator(102, 'id'),
			taskData: { mappingMode: 'autoMapInputData', value: {}, matchingColumns: [], schema: [] },
			options: {},
		},
		{
			code: 'return Array.from({ length: 1000 }, (_, i) => ({ json: { title: `bulk ${i}`, word_count: i } }));',
		},
	);
	const creates = (await e.client.requests()).filter(
		(r) => r.method === 'POST' && r.path.endsWith('/queues/102/tasks/create'),
	);
	const held = await e.client.tasks(102);
	const titles = items.map((i) => (i.data as Record<string, unknown>).title);
	record('bulk create 1,000', {
		items: items.length,
		createRequests: creates.length,
		ranBy: e.queueMode!.ranBy(execution.id),
	});
	expect(items).toHaveLength(1000);
	expect(creates).toHaveLength(1000);
	expect(titles).toEqual(Array.from({ length: 1000 }, (_, i) => `bulk ${i}`));
	expect(items.map((i) => held.find((t) => t.id === i.id))).toEqual(items);
	expect(e.queueMode!.ranBy(execution.id)).toMatch(/^worker-\d$/);
});

describe('Task Queue Trigger', () => {
	test(`one registration; a burst of ${BURST} completions: one execution each, none lost, none duplicated`, async () => {
		await e.client.reset();
		await e.client.clearRequests();
		const wf = await triggerOn(QUEUE);
		try {
			const sets = (await e.client.requests()).filter(
				(r) => r.method === 'PUT' && r.path.endsWith(`/queues/${QUEUE}/webhook`),
			);
			expect(sets).toHaveLength(1);
			const since = e.queueMode!.proxiedCalls().length;
			const done = await completeEach(QUEUE, BURST);
			await settled(wf.id, BURST);
			const f = await emitted(wf.id, done, since);
			record(`burst ${BURST}`, f);
			expect(f).toEqual(
				expect.objectContaining({
					completions: BURST,
					executions: BURST,
					failed: 0,
					emitted: BURST,
					lost: 0,
					duplicated: 0,
					strangers: 0,
				}),
			);
			// the deliveries were spread over both webhook processes, the executions over both workers
			expect(Object.keys(f.deliveriesByProcess).sort()).toEqual(['webhook-1', 'webhook-2']);
			expect(Object.keys(f.executionsByWorker).sort()).toEqual(['worker-1', 'worker-2']);
			// still one registration, ours
			expect(await webhookTarget(e, QUEUE)).toContain(wf.webhookId);
		} finally {
			await deleteWorkflow(e, wf.id);
		}
	});

	describe(`with Catch Up on, a burst of ${BURST}`, () => {
		async function run() {
			await e.client.reset();
			const wf = await triggerOn(QUEUE, { catchUp: true });
			try {
				// the cursor is placed by a first delivery
				const first = await completeEach(QUEUE, 1);
				await settled(wf.id, 1, 30_000);
				const since = e.queueMode!.proxiedCalls().length;
				const done = await completeEach(QUEUE, BURST);
				await settled(wf.id, 2, 180_000, [...first, ...done]);
				return await emitted(wf.id, [...first, ...done], since);
			} finally {
				await deleteWorkflow(e, wf.id);
			}
		}

		test('nginx routing by URL: none lost, none duplicated', async () => {
			const f = await routedByUrl(run);
			record(`burst ${BURST} with Catch Up, routing by URL`, f);
			expect(Object.keys(f.deliveriesByProcess)).toHaveLength(1);
			expect(f).toEqual(
				expect.objectContaining({
					completions: BURST + 1,
					emitted: BURST + 1,
					lost: 0,
					duplicated: 0,
					strangers: 0,
					failed: 0,
				}),
			);
		});

		test('round-robin: none lost; completions on their way to the other process are caught up again (the figures a user gets)', async () => {
			const f = await run();
			// whether the node said that deliveries of one registration reach two processes
			const warned = /Task Queue Trigger: deliveries of queue 101 reach several n8n processes/.test(
				e.n8n.logs.text(),
			);
			record(`burst ${BURST} with Catch Up, round-robin`, { ...f, warned });
			expect(Object.keys(f.deliveriesByProcess).sort()).toEqual(['webhook-1', 'webhook-2']);
			expect(f).toEqual(
				expect.objectContaining({ completions: BURST + 1, lost: 0, strangers: 0, failed: 0 }),
			);
		});
	});

	test('catch-up after both webhook processes were down: each completion of the outage emitted once', async () => {
		await e.client.reset();
		const wf = await triggerOn(QUEUE, { catchUp: true });
		try {
			const first = await completeEach(QUEUE, 1);
			await settled(wf.id, 1, 30_000);
			const since = e.queueMode!.proxiedCalls().length;
			let outage: number[] = [];
			await e.queueMode!.restartWebhookProcesses(async () => {
				outage = await completeEach(QUEUE, 50);
				await deliveriesDone(30_000);
			});
			const lostDeliveries = deliveriesSince(since).filter((c) => c.status >= 500).length;
			const after = await completeEach(QUEUE, 1);
			await settled(wf.id, 2, 180_000, [...first, ...outage, ...after]);
			const f = await emitted(wf.id, [...first, ...outage, ...after], since);
			record('catch-up after both webhook processes were down', {
				...f,
				deliveriesLostInOutage: lostDeliveries,
			});
			expect(lostDeliveries).toBe(50);
			expect(f).toEqual(
				expect.objectContaining({
					completions: 52,
					emitted: 52,
					lost: 0,
					duplicated: 0,
					strangers: 0,
					failed: 0,
				}),
			);
		} finally {
			await deleteWorkflow(e, wf.id);
		}
	});

	describe("the sandbox's duplicate-delivery fault: every delivery sent twice at once, the copies reaching both webhook processes", () => {
		const COMPLETIONS = 100;

		async function run(options: Record<string, unknown>) {
			await e.client.reset();
			const wf = await triggerOn(QUEUE, options);
			try {
				const since = e.queueMode!.proxiedCalls().length;
				await e.client.setFaults([{ webhook: 'duplicate', probability: 1 }]);
				const done = await completeEach(QUEUE, COMPLETIONS);
				await e.client.clearFaults();
				// one webhook process answers 200 deliveries: 42-65 s beside CI's other suites
				await settled(wf.id, COMPLETIONS);
				return await emitted(wf.id, done, since);
			} finally {
				await e.client.clearFaults();
				await deleteWorkflow(e, wf.id);
			}
		}

		test('nginx routing by URL (the setting docs/scaling.md gives): 0 duplicated', async () => {
			const f = await routedByUrl(async () => await run({}));
			record('duplicate fault, routing by URL', f);
			expect(f.deliveryStatuses).toEqual({ '200': COMPLETIONS * 2 });
			expect(Object.keys(f.deliveriesByProcess)).toHaveLength(1);
			expect(f).toEqual(
				expect.objectContaining({
					completions: COMPLETIONS,
					executions: COMPLETIONS,
					lost: 0,
					duplicated: 0,
					strangers: 0,
				}),
			);
		});

		test('round-robin: the figures a queue-mode user gets', async () => {
			const f = await run({});
			record('duplicate fault, round-robin', f);
			expect(f.deliveryStatuses).toEqual({ '200': COMPLETIONS * 2 });
			expect(Object.keys(f.deliveriesByProcess).sort()).toEqual(['webhook-1', 'webhook-2']);
			expect(f).toEqual(
				expect.objectContaining({ completions: COMPLETIONS, lost: 0, strangers: 0 }),
			);
		});
	});
});

test('Poll Trigger: polls run on the main alone (one request per poll, every minute), each completion emitted once', async () => {
	await e.client.reset();
	await e.client.clearRequests();
	const polls = async () =>
		(await e.client.requests()).filter(
			(r) => r.method === 'GET' && r.path.endsWith('/queues/102/tasks/completed'),
		);
	const id = await createWorkflow(
		e,
		triggerWorkflow(e, `e2e queue mode poll ${uniq('poll')}`, {
			type: TYPES.poll,
			parameters: {
				queue: queueLocator(102),
				pollTimes: { item: [{ mode: 'everyMinute' }] },
				options: {},
			},
		}),
	);
	try {
		await activate(e, id);
		// activation polls once (places the cursor)
		await waitFor('the first poll', async () => (await polls()).length >= 1);
		const startedAt = Date.now();
		await e.client.createTasks(102, 5);
		const done = await e.client.completeMany(102, 5, { by: ALICE });
		const [x] = await waitFor(
			'the poll execution',
			async () => {
				const xs = await allExecutions(id);
				return xs.some((x) => x.status === 'success') ? xs : undefined;
			},
			// the next tick comes within a minute; beside CI's other suites the main's poll and the
			// worker's run took longer than 90 s (CI13 of stop 65): a backstop, not the claim
			180_000,
			1000,
		);
		// and the poll after it, which finds nothing new
		const afterFirst = (await polls()).length;
		await waitFor('the next poll', async () => (await polls()).length > afterFirst, 75_000, 1000);
		// an execution of that poll would show up before the executions stop changing
		await countsSettle(async () =>
			(await allExecutions(id)).map((x) => `${x.id}:${x.status}`).join(','),
		);
		const minutes = (Date.now() - startedAt) / 60_000;
		const pollCount = (await polls()).length;
		const f = await emitted(id, done.ids, e.queueMode!.proxiedCalls().length);
		record('poll trigger every minute', {
			minutes: Number(minutes.toFixed(2)),
			polls: pollCount,
			firstExecutionRanBy: e.queueMode!.ranBy(x.id),
			...f,
		});
		// the activation's poll and one a minute from one process: a second poller would double them
		expect(pollCount).toBeLessThanOrEqual(Math.ceil(minutes) + 2);
		expect(f).toEqual(
			expect.objectContaining({ executions: 1, emitted: 5, lost: 0, duplicated: 0 }),
		);
		expect(nodeOutput(x, 'Trigger').map((t) => t.id)).toEqual(done.ids);
	} finally {
		await deleteWorkflow(e, id);
	}
});
