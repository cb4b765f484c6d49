// Create and Wait in a real n8n with the packed package: a workflow creates tasks and waits (n8n's
// waiting execution, in its database), a Task Queue Trigger workflow on the same queue forwards each
// completion to it, and the execution goes on with the people's answers. One item completed by a
// person on the sandbox page in Chromium, 100 items, a timeout, n8n restarted while executions wait,
// and a completion delivered while n8n was down (caught up once it is back).
import axios from 'axios';
import { mkdirSync, writeFileSync } from 'fs';
import http from 'http';
import type { AddressInfo } from 'net';
import { join } from 'path';
import { chromium, type Browser } from 'playwright-core';

import { timeKey } from '../../nodes/TaskQueue/reader/completions';
import { majorFromEnv } from '../../tools/n8n/install';
import { loadExamples, prepareWorkflow } from '../../tools/n8n/provision';
import {
	activate,
	createWorkflow,
	credentialRef,
	deleteWorkflow,
	executions,
	mockModel,
	nodeOutput,
	executionsOfTrigger,
	queueLocator,
	saved,
	countsSettle,
	setupE2E,
	triggerWorkflow,
	TYPES,
	uniq,
	waitFor,
	webhookTarget,
	type E2E,
	type Execution,
} from './helpers';
import type { OpenAiMock } from '../../tools/stand-in-model';

const QUEUE = 104;
const ALICE = 'alice@example.com';
let e: E2E;
let browser: Browser;
let triggerId = '';
/** A queue and its route back on the default schedule (every minute), for the one test about it. */
let defaultCheck: { queue: { id: number }; routeBack: string };
const triggerWebhookId = '3b0f3c2e-1d4a-4c55-9f20-77a1c0e0d104';

beforeAll(async () => {
	e = await setupE2E();
	// queue mode as docs/scaling.md deploys it: each address to one webhook process by its path, so
	// every call to a run (any item, any level) reaches the process that asked for its further tasks
	await e.queueMode?.setRouting('by-path');
	await e.client.reset();
	browser = await chromium.launch({
		executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
		args: ['--no-sandbox'],
	});
	// the route back: a Task Queue Trigger on the queue, with catch-up for deliveries lost while n8n is
	// down, on the default schedule (every minute: with six Check Times, every 10 s, two of n8n 2.41's
	// checks emitted run answers as ordinary completions under CI's load, CI2 of stop 63: issue 59)
	triggerId = await createWorkflow(
		e,
		triggerWorkflow(e, 'e2e completions of Refund Decisions', {
			type: TYPES.trigger,
			webhookId: triggerWebhookId,
			parameters: {
				event: 'taskCompleted',
				queue: queueLocator(QUEUE),
				options: { catchUp: true },
			},
		}),
	);
	await activate(e, triggerId);
	await waitFor('the trigger registered', async () =>
		(await webhookTarget(e, QUEUE)).includes(`/webhook/${triggerWebhookId}/`),
	);
	// a queue of its own (Refund Decisions' fields) whose route back keeps the default schedule
	const queue = await e.client.createQueue({
		name: uniq('Refund Decisions, checked every minute'),
		blocks: (await e.client.getQueue(QUEUE)).data,
	});
	const webhookId = uniq('tq-default-check');
	const routeBack = await createWorkflow(
		e,
		triggerWorkflow(e, `e2e route back checked every minute ${webhookId}`, {
			type: TYPES.trigger,
			webhookId,
			parameters: { event: 'taskCompleted', queue: queueLocator(queue.id), options: {} },
		}),
	);
	await activate(e, routeBack);
	await waitFor('the route back registered', async () =>
		(await webhookTarget(e, queue.id)).includes(`/webhook/${webhookId}/`),
	);
	defaultCheck = { queue, routeBack };
});

afterAll(async () => {
	// TQ_DUMP_LOG=file keeps n8n's log of this file's run (what the trigger and the waiting runs said)
	if (process.env.TQ_DUMP_LOG) writeFileSync(process.env.TQ_DUMP_LOG, e.n8n.logs.text());
	await browser?.close();
	if (triggerId) await deleteWorkflow(e, triggerId);
	if (defaultCheck) await deleteWorkflow(e, defaultCheck.routeBack);
	await e?.stop();
});

/** Start (webhook) -> Items (count from the body) -> Ask a person (Create and Wait) -> Completed? (IF) */
async function waitingWorkflow(
	options: Record<string, unknown> = {},
	parameters: Record<string, unknown> = {},
	/** An address the workflow POSTs to once per run of the node after Create and Wait. */
	afterwardsCalls?: string,
): Promise<{ id: string; path: string }> {
	const path = uniq('ask');
	const id = await createWorkflow(e, {
		name: `e2e create and wait ${path}`,
		nodes: [
			{
				name: 'Start',
				type: 'n8n-nodes-base.webhook',
				typeVersion: 2,
				position: [0, 0],
				webhookId: path,
				parameters: { httpMethod: 'POST', path, responseMode: 'onReceived', options: {} },
			},
			{
				name: 'Items',
				type: 'n8n-nodes-base.code',
				typeVersion: 2,
				position: [200, 0],
				parameters: {
					// with "upstream", each item is what an earlier Create and Wait of an approval chain outputs
					jsCode:
						'const { count: n = 1, upstream } = $input.first().json.body;\nreturn Array.from({ length: n }, (_, i) => ({ json: { message: `refund ${i}`, total: i + 0.5, ...(upstream ? { approved: true, wait: { outcome: "completed", node: "Manager approval", completed: n, of: n } } : {}) } }));',
				},
			},
			{
				name: 'Ask a person',
				type: TYPES.action,
				typeVersion: 1,
				position: [400, 0],
				parameters: {
					resource: 'task',
					operation: 'sendAndWait',
					queue: queueLocator(QUEUE),
					taskData: {
						mappingMode: 'defineBelow',
						value: { customer_message: '={{ $json.message }}', order_total: '={{ $json.total }}' },
						matchingColumns: [],
						schema: [],
					},
					resumeField: 'resume_url',
					...parameters,
					options,
				},
				credentials: credentialRef(e),
			},
			{
				// what any downstream node of a user's sees: the input n8n pairs each item with
				name: 'Paired',
				type: 'n8n-nodes-base.code',
				typeVersion: 2,
				position: [600, 200],
				parameters: {
					mode: 'runOnceForEachItem',
					jsCode:
						"return { json: { input: $('Items').item.json.message, outcome: $json.wait?.outcome ?? null, answer: $json.data?.customer_message ?? null } };",
				},
			},
			{
				name: 'Completed?',
				type: 'n8n-nodes-base.if',
				typeVersion: 2.2,
				position: [600, 0],
				parameters: {
					conditions: {
						options: { caseSensitive: true, leftValue: '', typeValidation: 'strict', version: 2 },
						conditions: [
							{
								id: 'c1',
								leftValue:
									"={{ $json.wait?.outcome === 'completed' && $json.wait.node === $prevNode.name }}",
								rightValue: '',
								operator: { type: 'boolean', operation: 'true', singleValue: true },
							},
						],
						combinator: 'and',
					},
					options: {},
				},
			},
			...(afterwardsCalls
				? [
						{
							name: 'Afterwards',
							type: 'n8n-nodes-base.httpRequest',
							typeVersion: 4.2,
							position: [600, 400],
							parameters: {
								method: 'POST',
								url: afterwardsCalls,
								options: {},
							},
							executeOnce: true,
						},
					]
				: []),
		],
		connections: {
			Start: { main: [[{ node: 'Items', type: 'main', index: 0 }]] },
			Items: { main: [[{ node: 'Ask a person', type: 'main', index: 0 }]] },
			'Ask a person': {
				main: [
					[
						{ node: 'Completed?', type: 'main', index: 0 },
						{ node: 'Paired', type: 'main', index: 0 },
						...(afterwardsCalls ? [{ node: 'Afterwards', type: 'main', index: 0 }] : []),
					],
				],
			},
		},
	});
	await activate(e, id);
	return { id, path };
}

async function start(
	path: string,
	count: number,
	body: Record<string, unknown> = {},
): Promise<void> {
	await waitFor(`webhook ${path}`, async () => {
		const res = await axios.post(
			`${e.n8n.webhookBase}/${path}`,
			{ count, ...body },
			{ validateStatus: () => true },
		);
		return res.status === 404 ? undefined : res.status === 200;
	});
}

async function execution(
	workflowId: string,
	status: string,
	timeoutMs = 60_000,
): Promise<Execution> {
	try {
		return await waitFor(
			`an execution of ${workflowId} ${status}`,
			async () => (await executions(e, workflowId)).find((x) => x.status === status),
			timeoutMs,
			250,
		);
	} catch (error) {
		const seen = (await executions(e, workflowId)).map(
			(x) => `${x.id} ${x.status} ${JSON.stringify(x.data?.resultData.error ?? '').slice(0, 600)}`,
		);
		throw new Error(`${(error as Error).message}; executions: ${seen.join('; ') || 'none'}`);
	}
}

async function byId(executionId: string): Promise<Execution> {
	return (await e.n8n.api.get(`/executions/${executionId}`, { params: { includeData: true } }))
		.data as Execution;
}

/** The run took an answer and keeps waiting (it logs where it stands once per change). */
async function stillWaits(executionId: string): Promise<void> {
	await waitFor(`execution ${executionId} says it still waits`, async () =>
		e.n8n.logs.text().includes(`Task Queue: execution ${executionId} still waits: `),
	);
	expect((await byId(executionId)).status).toBe('waiting');
}

/**
 * The execution of the workflow that waits. n8n 1.x's public list leaves a waiting execution out
 * (it stays among its active executions), so it is found through the address its tasks carry.
 */
async function waitingExecution(workflowId: string, queueId = QUEUE): Promise<Execution> {
	return await waitFor(
		`a waiting execution of ${workflowId}`,
		async () => {
			const listed = (await executions(e, workflowId)).find((x) => x.status === 'waiting');
			if (listed) return listed;
			const ids = new Set(
				(await e.client.tasks(queueId))
					.map((t) => /\/webhook-waiting\/(\d+)\//.exec(String(t.data.resume_url))?.[1])
					.filter(Boolean) as string[],
			);
			for (const id of [...ids].reverse()) {
				const x = (await byId(id)) as Execution & { workflowId?: string };
				if (x.workflowId === workflowId && x.status === 'waiting') return x;
			}
			return undefined;
		},
		60_000,
		250,
	);
}

/** The same execution once it has the status (resumed and finished). */
async function resumed(
	executionId: string,
	status = 'success',
	timeoutMs = 60_000,
): Promise<Execution> {
	return await waitFor(
		`execution ${executionId} ${status}`,
		async () => {
			const x = await byId(executionId);
			return x.status === status && saved(x) ? x : undefined;
		},
		timeoutMs,
		250,
	);
}

/** The run's tasks, in input order (by the item number in their address). */
async function tasksOf(executionId: string, count: number, queueId = QUEUE) {
	return await waitFor(`${count} tasks of execution ${executionId}`, async () => {
		const tasks = (await e.client.tasks(queueId)).filter((t) =>
			String(t.data.resume_url).includes(`/webhook-waiting/${executionId}/`),
		);
		const item = (t: (typeof tasks)[number]) =>
			Number(/tq=(\d+)-/.exec(String(t.data.resume_url))?.[1]);
		return tasks.length === count ? tasks.sort((a, b) => item(a) - item(b)) : undefined;
	});
}

async function triggerExecutions(): Promise<number> {
	return (await executionsOfTrigger(e, triggerId)).length;
}

/**
 * The trigger's executions that emitted any of these tasks. Catch Up also emits, on a later
 * delivery, what is left of an earlier test's backlog (25,000 completions whose deliveries were
 * lost): on a slow machine that spills into the next tests (CI3 of stop 57).
 */
async function triggerExecutionsWith(tasks: Array<{ id: number }>): Promise<number> {
	const ids = new Set(tasks.map((t) => t.id));
	return (await executionsOfTrigger(e, triggerId)).filter((x) =>
		nodeOutput(x, 'Trigger').some((item) => ids.has(item.id as number)),
	).length;
}

test('one item: the task carries a signed address, a person completes it on the page, the execution goes on with the answer', async () => {
	const { id, path } = await waitingWorkflow();
	const saved = (await e.n8n.api.get(`/workflows/${id}`)).data as {
		nodes: Array<{ name: string; parameters: Record<string, unknown> }>;
	};
	// n8n 2.41 checks signed addresses only for a node whose saved operation is sendAndWait
	expect(saved.nodes.find((n) => n.name === 'Ask a person')?.parameters.operation).toBe(
		'sendAndWait',
	);
	await start(path, 1);
	const waiting = await waitingExecution(id);
	const [task] = await tasksOf(waiting.id, 1);
	expect(task.data).toEqual({
		customer_message: 'refund 0',
		order_total: 0.5,
		resume_url: expect.stringMatching(
			new RegExp(
				`^${e.n8n.url}/webhook-waiting/${waiting.id}/[\\w-]+\\?tq=0-1-1&q=104&t=\\d+&k=[0-9a-f]{32}&signature=[0-9a-f]{64}$`,
			),
		),
		decision: null,
		note: null,
	});
	// a forged call to the address (another item) is refused by n8n, the execution keeps waiting
	const forged = await axios.post(
		String(task.data.resume_url).replace('tq=0-1-1', 'tq=0-2-2'),
		{},
		{ validateStatus: () => true },
	);
	expect(forged.status).toBe(401);
	// the right address without a completion: the node answers 202 and keeps waiting
	const early = await axios.post(String(task.data.resume_url), {}, { validateStatus: () => true });
	expect([early.status, early.data]).toEqual([
		202,
		{ waiting: true, completed: 0, of: 1, taken: [], others: [], tasks: [task.id] },
	]);
	expect((await byId(waiting.id)).status).toBe('waiting');

	const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
	try {
		await page.goto(`${e.sandbox.pageUrl}queues/${QUEUE}`);
		await page.getByTestId('user-select').selectOption(ALICE);
		await page.getByTestId('take-next').click();
		await page.getByTestId('task-form').waitFor();
		await page.getByTestId('field-decision').selectOption('approve');
		await page.getByTestId('field-note').fill('Refund approved while the workflow waited');
		if (process.env.TQ_SCREENSHOTS) {
			mkdirSync(join(__dirname, '../../docs/images'), { recursive: true });
			await page.screenshot({
				path: join(__dirname, '../../docs/images/create-and-wait-task.jpg'),
				fullPage: true,
			});
		}
		await page.getByTestId('complete-task').click();
		await page.getByTestId('completed-message').waitFor();
	} finally {
		await page.close();
	}

	const done = await resumed(waiting.id, 'success', 30_000);
	expect(done.id).toBe(waiting.id);
	const [answer] = nodeOutput(done, 'Ask a person');
	expect(answer).toMatchObject({
		id: task.id,
		status: 'completed',
		completed_by: ALICE,
		data: {
			customer_message: 'refund 0',
			decision: 'approve',
			note: 'Refund approved while the workflow waited',
		},
		wait: { outcome: 'completed', node: 'Ask a person', completed: 1, of: 1 },
	});
	// how long the person took, by the service's clock: from the task's creation to the answer
	expect((answer.wait as { secondsToDecision: number }).secondsToDecision).toBe(
		(Date.parse(String(answer.completed_at).slice(0, 23) + 'Z') -
			Date.parse(String(answer.created_at).slice(0, 23) + 'Z')) /
			1000,
	);
	expect(nodeOutput(done, 'Completed?', 0)).toHaveLength(1);
	expect(nodeOutput(done, 'Completed?', 1)).toHaveLength(0);
	// the completion belonged to the waiting execution: the trigger's workflow did not run
	expect(await triggerExecutions()).toBe(0);
	// a replay of the address after the end resumes nothing
	const replay = await axios.post(String(task.data.resume_url), {}, { validateStatus: () => true });
	expect(replay.status).toBeLessThan(500);
	expect((await executions(e, id)).map((x) => x.status)).toEqual(['success']);
	await deleteWorkflow(e, id);
});

test('100 items wait for all, half their answers committed late (up to 5 s, below later ones, as a real server commits): resumed once, every item paired with its input', async () => {
	const { id, path } = await waitingWorkflow();
	await start(path, 100);
	const waiting = await waitingExecution(id);
	const tasks = await tasksOf(waiting.id, 100);
	expect(tasks.map((t) => t.data.customer_message)).toEqual(
		Array.from({ length: 100 }, (_, i) => `refund ${i}`),
	);
	// issue 59: a completion becomes visible (listed and delivered) up to 5 s after later ones
	await e.client.setRealism({ lateCommitShare: 0.5, lateCommitMs: 5_000 });
	// 99 completed: still waiting
	for (const task of tasks.slice(0, 99))
		await e.client.complete(QUEUE, task.id, { by: ALICE, data: { decision: 'reject' } });
	await e.client.waitForWebhookCalls(99, 60_000);
	expect((await byId(waiting.id)).status).toBe('waiting');
	await e.client.complete(QUEUE, tasks[99].id, { by: ALICE, data: { decision: 'approve' } });
	await e.client.waitForWebhookCalls(100, 60_000);
	await e.client.setRealism({ lateCommitShare: 0 });
	const done = await resumed(waiting.id, 'success', 60_000);
	expect(done.id).toBe(waiting.id);
	const output = nodeOutput(done, 'Ask a person');
	expect(output.map((o) => [o.id, (o.data as Record<string, unknown>).customer_message])).toEqual(
		tasks.map((t) => [t.id, t.data.customer_message]),
	);
	expect(output.every((o) => (o.wait as Record<string, unknown>).outcome === 'completed')).toBe(
		true,
	);
	const runData = (done.data?.resultData.runData['Ask a person'] ?? []).at(-1) as unknown as {
		data: { main: Array<Array<{ pairedItem: unknown }>> };
	};
	expect(runData.data.main[0].map((i) => i.pairedItem)).toEqual(
		Array.from({ length: 100 }, (_, item) => ({ item })),
	);
	expect((await executions(e, id)).length).toBe(1);
	expect(await triggerExecutions()).toBe(0);
	if (e.queueMode) {
		// queue mode: the completions came back through the webhook processes, a worker ran the rest
		const resumes = e.queueMode
			.proxiedCalls()
			.filter((c) => c.path.startsWith(`/webhook-waiting/${done.id}/`));
		expect(resumes.length).toBeGreaterThan(0);
		expect(resumes.every((c) => /^webhook-\d$/.test(c.role))).toBe(true);
		expect(e.queueMode.ranBy(done.id)).toMatch(/^worker-\d$/);
	}
	await deleteWorkflow(e, id);
});

test('the service cannot be read when the waiting node confirms the completion: the trigger calls again, and the execution resumes', async () => {
	const { id, path } = await waitingWorkflow();
	await start(path, 1);
	const waiting = await waitingExecution(id);
	const [task] = await tasksOf(waiting.id, 1);
	// every read of the completed tasks gets an error page (a 500 is not retried by a read) until the
	// waiting node has failed to confirm: the trigger's catch-up read, the check's if its minute comes,
	// and the waiting node's confirmation (a count of two faults failed in CI when the check took one)
	await e.client.setFaults([{ route: 'completed', kind: 'html500' }]);
	try {
		await e.client.complete(QUEUE, task.id, { by: ALICE, data: { decision: 'approve' } });
		const notYet = `completion of task ${task.id} not taken by execution ${waiting.id} yet; trying again`;
		await waitFor('the run could not confirm it', async () => e.n8n.logs.text().includes(notYet));
		expect((await byId(waiting.id)).status).toBe('waiting');
	} finally {
		// the service can be read again (also for the next tests, whatever happened here)
		await e.client.clearFaults();
	}
	// the trigger's next call is confirmed and the run resumes
	const done = await resumed(waiting.id, 'success', 60_000);
	expect(nodeOutput(done, 'Ask a person').map((o) => o.id)).toEqual([task.id]);
	expect((await executions(e, id)).map((x) => x.status)).toEqual(['success']);
	expect(await triggerExecutions()).toBe(0);
	await deleteWorkflow(e, id);
});

test("a timeout: the input goes on unchanged, and the documented test sends it to the IF's false branch, even when the input is an earlier approval's answer", async () => {
	const { id, path } = await waitingWorkflow({
		limitWaitTime: {
			values: { limitType: 'afterTimeInterval', resumeAmount: 0.05, resumeUnit: 'minutes' },
		},
	});
	// the items are an earlier Create and Wait's answers (an approval chain): they carry its completed outcome
	await start(path, 2, { upstream: true });
	const waiting = await waitingExecution(id);
	const [late] = await tasksOf(waiting.id, 2);
	// n8n's wait tracker looks for due executions once a minute
	const done = await resumed(waiting.id, 'success', 90_000);
	expect(done.id).toBe(waiting.id);
	const upstream = {
		approved: true,
		wait: { outcome: 'completed', node: 'Manager approval', completed: 2, of: 2 },
	};
	expect(nodeOutput(done, 'Ask a person')).toEqual([
		{ message: 'refund 0', total: 0.5, ...upstream },
		{ message: 'refund 1', total: 1.5, ...upstream },
	]);
	expect(nodeOutput(done, 'Completed?', 0)).toHaveLength(0);
	expect(nodeOutput(done, 'Completed?', 1)).toHaveLength(2);
	// a task of the timed-out run completed afterwards: no execution takes it, and the trigger says so
	await e.client.complete(QUEUE, late.id, { by: ALICE, data: { decision: 'approve' } });
	const said = `completion of task ${late.id} not taken by execution ${waiting.id}: the execution has finished`;
	await waitFor(
		'the trigger logged the late completion',
		async () => e.n8n.logs.text().includes(said),
		30_000,
	);
	expect(await triggerExecutions()).toBe(0);
	expect((await executions(e, id)).map((x) => x.status)).toEqual(['success']);
	await deleteWorkflow(e, id);
});

test('"The First Task Is Completed": the answer to item 2 is paired with item 2 downstream ($(\'Items\').item), the others pending', async () => {
	const { id, path } = await waitingWorkflow({}, { waitFor: 'first' });
	await start(path, 3);
	const waiting = await waitingExecution(id);
	const tasks = await tasksOf(waiting.id, 3);
	await e.client.complete(QUEUE, tasks[2].id, { by: ALICE, data: { decision: 'approve' } });
	const done = await resumed(waiting.id, 'success', 30_000);
	expect(nodeOutput(done, 'Paired')).toEqual([
		{ input: 'refund 0', outcome: 'pending', answer: null },
		{ input: 'refund 1', outcome: 'pending', answer: null },
		{ input: 'refund 2', outcome: 'completed', answer: 'refund 2' },
	]);
	expect(nodeOutput(done, 'Completed?', 0).map((o) => o.id)).toEqual([tasks[2].id]);
	await deleteWorkflow(e, id);
});

test("exactly once, on n8n 1.x too: 40 parallel calls to a completed run's address with its delivery resume it once, the next node runs once", async () => {
	let calls = 0;
	const counter = http.createServer((_req, res) => {
		calls++;
		res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
	});
	await new Promise<void>((resolve) => counter.listen(0, '127.0.0.1', resolve));
	const port = (counter.address() as AddressInfo).port;
	try {
		const { id, path } = await waitingWorkflow({}, {}, `http://127.0.0.1:${port}/afterwards`);
		await start(path, 1);
		const waiting = await waitingExecution(id);
		const [task] = await tasksOf(waiting.id, 1);
		await e.client.complete(QUEUE, task.id, { by: ALICE, data: { decision: 'approve' } });
		const answers = await Promise.all(
			Array.from(
				{ length: 40 },
				async () =>
					await axios.post(
						String(task.data.resume_url),
						{ tasks: [{ id: task.id }] },
						{ validateStatus: () => true },
					),
			),
		);
		const done = await resumed(waiting.id);
		expect(nodeOutput(done, 'Ask a person').map((o) => o.id)).toEqual([task.id]);
		// every resume that started has ended by now; a second one would have called again
		expect(await countsSettle(async () => calls, String)).toBe(1);
		// what n8n answers the calls that lost the race is n8n's own (2.41 refuses a second resume itself)
		console.log(
			`40 parallel calls answered: ${JSON.stringify(answers.reduce<Record<number, number>>((n, a) => ({ ...n, [a.status]: (n[a.status] ?? 0) + 1 }), {}))}`,
		);
		expect(await triggerExecutions()).toBe(0);
		await deleteWorkflow(e, id);
	} finally {
		counter.closeAllConnections();
		counter.close();
	}
});

/** A refund request to the two-approvers example (its webhook at `path`): its waiting run and its two tasks. */
async function requestTwoApprovals(requester: string, path: string, workflow: string) {
	// n8n registers a just-activated workflow's webhook a moment after answering the activation
	const status = await waitFor('the webhook registered', async () => {
		const res = await axios.post(
			`${e.n8n.webhookBase}/${path}`,
			{ message: 'Refund 900 EUR', order_total: 900, requester_email: requester },
			{ validateStatus: () => true },
		);
		return res.status === 404 ? undefined : res.status;
	});
	expect(status).toBe(200);
	const waiting = await waitingExecution(workflow);
	return { waiting, tasks: await tasksOf(waiting.id, 2) };
}

/** The two-approvers example with its Limit Wait Time (the deadline) set to `minutes`, on its own path. */
async function twoApproversWithDeadline(minutes: number) {
	const example = loadExamples().find((x) => x.file === 'refund-needs-two-approvers.json');
	const wf = prepareWorkflow(example!.text, e.credentialId);
	// this file's own Task Queue Trigger on the queue routes the answers back
	wf.nodes = wf.nodes.filter(
		(n) => n.type !== TYPES.trigger && n.type !== 'n8n-nodes-base.stickyNote',
	);
	const path = uniq('refund-deadline');
	for (const n of wf.nodes) {
		if (n.type === 'n8n-nodes-base.webhook') n.parameters = { ...n.parameters, path };
		const options = n.parameters?.options as { limitWaitTime?: object } | undefined;
		if (options?.limitWaitTime)
			options.limitWaitTime = {
				values: { limitType: 'afterTimeInterval', resumeAmount: minutes, resumeUnit: 'minutes' },
			};
	}
	const id = await createWorkflow(e, wf);
	await activate(e, id);
	return { id, path };
}

// One restart for the three states a restart must keep (each prepared first, then n8n restarts once):
// a restart costs a queue-mode stack about a minute and 50-65 s of CPU, and three did this before.
describe('n8n restarts once, with every state it must keep prepared first', () => {
	test("runs waiting with an answer delivered while n8n is down (caught up by the next delivery); 40 finished runs and 2 waiting on a queue of their own (the first check after the restart calls one waiting address, not 41); a two-person run with one approval (the check's record keeps its deadline, and it goes on with Alice's approval at it)", async () => {
		// --- 40 answered and finished runs, 2 still waiting, on a queue and route back of their own
		// (default schedule: every minute), so that its check's calls are counted apart
		const queueB = await e.client.createQueue({
			name: uniq('Refund Decisions, 42 runs'),
			blocks: (await e.client.getQueue(QUEUE)).data,
		});
		const routeBackWebhook = uniq('tq-restart-42');
		const routeBack = await createWorkflow(
			e,
			triggerWorkflow(e, `e2e route back of 42 runs ${routeBackWebhook}`, {
				type: TYPES.trigger,
				webhookId: routeBackWebhook,
				parameters: { event: 'taskCompleted', queue: queueLocator(queueB.id), options: {} },
			}),
		);
		await activate(e, routeBack);
		await waitFor('the route back of the 42 runs registered', async () =>
			(await webhookTarget(e, queueB.id)).includes(`/webhook/${routeBackWebhook}/`),
		);
		const b = await waitingWorkflow({}, { queue: queueLocator(queueB.id) });
		for (let i = 0; i < 42; i++) await start(b.path, 1);
		const tasks = await waitFor(
			'42 waiting runs',
			async () => {
				const all = await e.client.tasks(queueB.id);
				return all.length === 42 ? all.sort((x, y) => x.id - y.id) : undefined;
			},
			180_000,
			500,
		);
		const executionOf = (task: (typeof tasks)[number]) =>
			String(/\/webhook-waiting\/(\d+)\//.exec(String(task.data.resume_url))?.[1]);
		const runsB = new Set(tasks.map(executionOf));
		const [stays, lost, ...answered] = tasks;
		for (const task of answered)
			await e.client.complete(queueB.id, task.id, { by: ALICE, data: { decision: 'approve' } });
		// (the set-up, not the claim: 300 s, as queue mode beside CI's other suites once took over 180)
		await waitFor(
			'40 runs finished',
			async () => {
				const finished = (await executions(e, b.id)).filter((x) => x.status === 'success').length;
				if (finished === 40) return true;
				throw new Error(`${finished} of 40 finished`);
			},
			300_000,
			1_000,
		);

		// --- a run of the file's queue waiting for two answers
		const a = await waitingWorkflow();
		await start(a.path, 2);
		const runA = await waitingExecution(a.id);
		const tasksA = await tasksOf(runA.id, 2);

		// a check round of each route back keeps where it stands in its static data: past the 40
		// answers, then the two-person run to wake (the first tick after a trigger registered is
		// skipped: one activated just before needs two ticks)
		const answeredIds = new Set(answered.map((task) => task.id));
		const lastAnswer = (await e.client.tasks(queueB.id))
			.filter((task) => answeredIds.has(task.id))
			.map((task) => timeKey(String(task.completed_at ?? '')))
			.reduce((x, y) => (x > y ? x : y), '');
		const staticDataOf = async (workflowId: string) =>
			((await e.n8n.api.get(`/workflows/${workflowId}`)).data.staticData ?? {}) as Record<
				string,
				{ lostCompletionCheck?: { at?: string } }
			>;
		await waitFor(
			"the check's record past the 40 answers",
			async () => {
				const at = Object.values(await staticDataOf(routeBack))
					.map((node) => node?.lostCompletionCheck?.at ?? '')
					.reduce((x, y) => (x > y ? x : y), '');
				return at >= lastAnswer && lastAnswer !== '';
			},
			180_000,
			2_000,
		);
		// --- a two-person run with one approval, its deadline 2 minutes after it started (prepared
		// once the 42 runs' record is written, so that the deadline comes after the restart)
		const c = await twoApproversWithDeadline(2);
		const { waiting: runC, tasks: tasksC } = await requestTwoApprovals(
			'requester@example.com',
			c.path,
			c.id,
		);
		await e.client.complete(QUEUE, tasksC[0].id, { by: ALICE, data: { decision: 'approve' } });

		await waitFor(
			"the two-person run to wake in the trigger's record",
			async () =>
				JSON.stringify(await staticDataOf(triggerId)).includes(`/webhook-waiting/${runC.id}/`) ||
				undefined,
			100_000,
		);
		expect((await byId(runA.id)).status).toBe('waiting');
		expect((await byId(runC.id)).status).toBe('waiting');

		// counted over every process's log (queue mode joins them), before and after the restart:
		// the check of the 42 runs' queue, and calls to those runs
		const callsIn = (log: string) =>
			[
				...log.matchAll(
					new RegExp(`check for lost completions of queue ${queueB.id} called (\\d+) waiting`, 'g'),
				),
			]
				.map((m) => Number(m[1]))
				.reduce((x, y) => x + y, 0);
		const ofRunsB = (log: string, line: RegExp) =>
			[...log.matchAll(line)].filter((m) => runsB.has(m[1])).length;
		// a call to a run that has ended (what a restart cost before: one per completion of the day)
		const finishedIn = (log: string) =>
			ofRunsB(log, /not taken by execution (\d+): the execution has finished/g);
		const retriesIn = (log: string) =>
			ofRunsB(log, /not taken by execution (\d+) yet; the execution keeps waiting/g);
		const counted = {
			calls: callsIn(e.n8n.logs.text()),
			finished: finishedIn(e.n8n.logs.text()),
			retries: retriesIn(e.n8n.logs.text()),
		};
		await e.client.clearWebhookCalls();
		await e.n8n.restart(async () => {
			// n8n is down: the deliveries of the first run's first answer and of one of the 42 runs' fail
			await e.client.complete(QUEUE, tasksA[0].id, { by: ALICE, data: { decision: 'approve' } });
			await e.client.complete(queueB.id, lost.id, { by: ALICE, data: { decision: 'reject' } });
			await e.client.waitForWebhookCalls(2, 60_000);
		});
		const whileDown = await e.client.webhookCalls();
		expect(whileDown.map((call) => call.taskId).sort()).toEqual([tasksA[0].id, lost.id].sort());
		expect(whileDown.some((call) => call.status === 200)).toBe(false);

		// the run of the file's queue: the next delivery (its other task) carries the catch-up of the lost one
		await waitFor('the trigger re-activated', async () =>
			(await webhookTarget(e, QUEUE)).includes(`/webhook/${triggerWebhookId}/`),
		);
		// not resumed by one answer of two: still waiting, or listed as crashed by n8n's recovery at the
		// start ("Found unfinished executions", n8n 1.123.81 in CI55; docs/waiting.md: a run waiting
		// at a restart can be listed crashed for a moment); the second answer still resumes it below
		expect(['waiting', 'crashed']).toContain((await byId(runA.id)).status);
		await e.client.complete(QUEUE, tasksA[1].id, { by: ALICE, data: { decision: 'reject' } });
		const doneA = await resumed(runA.id, 'success', 60_000);
		expect(
			nodeOutput(doneA, 'Ask a person').map((o) => [
				o.id,
				(o.data as Record<string, unknown>).decision,
			]),
		).toEqual([
			[tasksA[0].id, 'approve'],
			[tasksA[1].id, 'reject'],
		]);

		// the 42 runs: the first check after the restart calls the one run whose answer was lost
		const doneB = await resumed(executionOf(lost), 'success', 150_000);
		expect(nodeOutput(doneB, 'Ask a person').map((o) => o.id)).toEqual([lost.id]);
		expect((await byId(executionOf(stays))).status).toBe('waiting');
		const log = e.n8n.logs.text();
		const calls = callsIn(log) - counted.calls;
		const finishedLines = finishedIn(log) - counted.finished;
		// the figure, for bench/RESULTS-create-and-wait.md
		const figure = `n8n ${majorFromEnv()}: a restart after 40 answered runs, 2 waiting (1 answered while n8n was down): ${calls} call(s) to waiting addresses by the checks after it; ${finishedLines} call(s) to finished runs`;
		mkdirSync(join(__dirname, '../../.tmp'), { recursive: true });
		writeFileSync(
			join(__dirname, `../../.tmp/restart-cost.n8n${majorFromEnv()}.txt`),
			`${figure}\n`,
		);
		process.stdout.write(`${figure}\n`);
		expect(finishedLines).toBe(0);
		// one call for the run answered while n8n was down, and one more for each round that found n8n's
		// waiting address not up yet (queue mode: every process restarts, the webhook processes last)
		expect(calls - (retriesIn(log) - counted.retries)).toBe(1);
		if (!process.env.TQ_QUEUE_MODE) expect(calls).toBe(1);

		// the two-person run: nothing else happens for it; only the record can tell the restarted
		// n8n of it, and it goes on at its deadline
		const doneC = await resumed(runC.id, 'success', 180_000);
		expect(nodeOutput(doneC, 'Two approvers, not the requester')[0]).toMatchObject({
			approved: false,
			wait: { outcome: 'timedOut' },
			people: {
				decision: 'timedOut',
				counted: 1,
				answers: [expect.objectContaining({ taskId: tasksC[0].id, by: ALICE, counted: true })],
			},
		});

		// no answer of any of these runs started a run of a route back
		expect(await triggerExecutions()).toBe(0);
		expect((await executionsOfTrigger(e, routeBack)).length).toBe(0);
		for (const id of [a.id, b.id, c.id, routeBack]) await deleteWorkflow(e, id);
	}, 900_000);
});

test('bad input stops the run before any task: a queue with no route back', async () => {
	const before = (await e.client.tasks(101)).length;
	const path = uniq('noroute');
	const id = await createWorkflow(e, {
		name: `e2e no route ${path}`,
		nodes: [
			{
				name: 'Start',
				type: 'n8n-nodes-base.webhook',
				typeVersion: 2,
				position: [0, 0],
				webhookId: path,
				parameters: { httpMethod: 'POST', path, responseMode: 'onReceived', options: {} },
			},
			{
				name: 'Ask a person',
				type: TYPES.action,
				typeVersion: 1,
				position: [200, 0],
				parameters: {
					resource: 'task',
					operation: 'sendAndWait',
					queue: queueLocator(101),
					taskData: {
						mappingMode: 'defineBelow',
						value: { order_total: 1 },
						matchingColumns: [],
						schema: [],
					},
					resumeField: 'customer_message',
					options: {},
				},
				credentials: credentialRef(e),
			},
		],
		connections: { Start: { main: [[{ node: 'Ask a person', type: 'main', index: 0 }]] } },
	});
	await activate(e, id);
	await start(path, 1);
	const failed = await execution(id, 'error');
	const error = (failed.data?.resultData.runData['Ask a person']?.[0]?.error ?? {}) as {
		message?: string;
		description?: string;
	};
	const after = (await e.client.tasks(101)).length;
	// what the run ended with, in the failure's message (CI shows a part of its output)
	const ended = JSON.stringify({
		execution: failed.id,
		workflowError: failed.data?.resultData.error,
		nodes: Object.keys(failed.data?.resultData.runData ?? {}),
		tasks: { before, after },
	}).slice(0, 1500);
	expect({ message: error.message, ended }).toEqual({
		message: 'No Task Queue Trigger of this n8n receives the completions of queue 101',
		ended,
	});
	expect(error.description).toMatch(/Activate a workflow with a Task Queue Trigger on queue 101/);
	expect({ tasks: after, ended }).toEqual({ tasks: before, ended });
	await deleteWorkflow(e, id);
});

describe("the AI agent's human review (n8n 2.x: the Task Queue node gates a tool), as examples/ai-agent-refund-needs-approval.json builds it", () => {
	const REVIEW_QUEUE = 105;
	let workflowId = '';
	let mock: OpenAiMock | undefined;
	let workflowModelCredential: Record<string, { id: string; name: string }> = {};
	let toolMessagesSince: (from: number) => string = () => '';

	beforeAll(async () => {
		if (majorFromEnv() !== '2') return;
		// the scripted model calls the first tool it is given, the gated refund_order, with these arguments
		const model = await mockModel(e, () => ({
			toolParameters: { order: 4411, amount: 89.9 },
			hitlParameters: {},
		}));
		({ mock, toolMessagesSince } = model);
		const example = loadExamples().find((x) => x.file === 'ai-agent-refund-needs-approval.json');
		const wf = prepareWorkflow(example!.text, e.credentialId);
		workflowModelCredential = model.credentials;
		wf.nodes.find((n) => n.type === '@n8n/n8n-nodes-langchain.lmChatOpenAi')!.credentials =
			workflowModelCredential;
		workflowId = await createWorkflow(e, wf);
		await activate(e, workflowId);
		// the example's own Task Queue Trigger routes the approvals back
		await waitFor('the approvals trigger registered', async () =>
			(await webhookTarget(e, REVIEW_QUEUE)).includes(
				'/webhook/7c1e5a90-2b4d-4f6e-8a3c-0000000e00a6/',
			),
		);
	});

	afterAll(async () => {
		if (workflowId) await deleteWorkflow(e, workflowId);
		await mock?.close();
	});

	// n8n 1.x has no human-review tools
	(majorFromEnv() === '2' ? test.each : test.skip.each)([
		['approved: the gated tool runs', { decision: 'approve' }, /refunded order 4411 \(89\.9\)/],
		[
			'denied with feedback: the model gets the reason, the tool does not run',
			{ decision: 'deny', feedback: 'Refunds above 50 need a receipt.' },
			/provided feedback: "Refunds above 50 need a receipt\."/,
		],
	])('%s', async (_, answer, toolResult) => {
		const requestsBefore = mock!.requests.length;
		const before = new Set((await e.client.tasks(REVIEW_QUEUE)).map((t) => t.id));
		const res = await axios.post(
			`${e.n8n.webhookBase}/refund-agent-approval`,
			{ message: 'Please refund my order', order: 4411, order_total: 89.9 },
			{ validateStatus: () => true },
		);
		expect(res.status).toBe(200);
		const waiting = await waitingExecution(workflowId, REVIEW_QUEUE);
		const task = await waitFor('the review task', async () =>
			(await e.client.tasks(REVIEW_QUEUE)).find((t) => !before.has(t.id)),
		);
		// the person sees the tool and its arguments
		expect(task.data.request).toBe(
			'The agent wants to run this tool: refund_order\n\nInput:\n{\n  "order": 4411,\n  "amount": 89.9\n}',
		);
		expect(String(task.data.resume_url)).toContain(`/webhook-waiting/${waiting.id}/`);
		await e.client.complete(REVIEW_QUEUE, task.id, { by: ALICE, data: answer });
		const done = await resumed(waiting.id, 'success', 60_000);
		expect(done.id).toBe(waiting.id);
		// what the model was told the tool gave (unescaped)
		const toolMessages = toolMessagesSince(requestsBefore);
		expect(toolMessages).toMatch(toolResult);
		// the gated tool ran only when approved
		expect(toolMessages.includes('refunded order')).toBe(answer.decision === 'approve');
		expect(JSON.stringify(nodeOutput(done, 'Refund agent'))).toContain(
			'A person will review your request',
		);
	});

	// the same review with Several People per Item (All Must Approve, two people): the example's
	// trigger above routes the answers back
	(majorFromEnv() === '2' ? test : test.skip)(
		"two people must approve: the same person approving both tasks counts once and the node asks again; tasks planted with a copy of the further task's address decide nothing; a second person approves and only then the gated tool runs",
		async () => {
			const path = uniq('two-approvers');
			const example = loadExamples().find((x) => x.file === 'ai-agent-refund-needs-approval.json');
			const wf = prepareWorkflow(example!.text, e.credentialId);
			wf.nodes = wf.nodes.filter(
				(n) => n.type !== TYPES.trigger && n.type !== 'n8n-nodes-base.stickyNote',
			);
			const start = wf.nodes.find((n) => n.type === 'n8n-nodes-base.webhook')!;
			start.webhookId = path;
			(start.parameters as Record<string, unknown>).path = path;
			const gate = wf.nodes.find((n) => n.type === `${TYPES.action}HitlTool`)!;
			(gate.parameters as Record<string, unknown>).options = {
				severalPeople: { values: { people: 2, decideWhen: 'allApprove', maxTasks: 3 } },
			};
			wf.nodes.find((n) => n.type === '@n8n/n8n-nodes-langchain.lmChatOpenAi')!.credentials =
				workflowModelCredential;
			wf.name = `e2e agent review by two people ${path}`;
			const id = await createWorkflow(e, wf);
			await activate(e, id);
			try {
				const requestsBefore = mock!.requests.length;
				const before = new Set((await e.client.tasks(REVIEW_QUEUE)).map((t) => t.id));
				const fresh = async () =>
					(await e.client.tasks(REVIEW_QUEUE)).filter((t) => !before.has(t.id));
				// n8n serves a workflow's webhook a moment after it is published
				await waitFor('the workflow took the request', async () => {
					const res = await axios.post(
						`${e.n8n.webhookBase}/${path}`,
						{ message: 'Please refund my order', order: 4411, order_total: 89.9 },
						{ validateStatus: () => true },
					);
					return res.status === 200 ? true : undefined;
				});
				const waiting = await waitingExecution(id, REVIEW_QUEUE);
				const [first, second] = await waitFor('two review tasks', async () => {
					const tasks = await fresh();
					return tasks.length === 2 ? tasks.sort((a, b) => a.id - b.id) : undefined;
				});
				// Alice approves both: she counts once, the run keeps waiting and one more task is made
				await e.client.complete(REVIEW_QUEUE, first.id, {
					by: ALICE,
					data: { decision: 'approve' },
				});
				await e.client.complete(REVIEW_QUEUE, second.id, {
					by: ALICE,
					data: { decision: 'approve' },
				});
				const third = await waitFor(
					'the task asked again',
					async () => (await fresh()).find((t) => t.id !== first.id && t.id !== second.id),
					60_000,
				);
				expect(third.data.request).toBe(first.data.request);
				// someone who saw the further task copies its address, mark included, into tasks of
				// their own, and two colleagues approve them: they decide nothing (issue 47's attack)
				const { ids: planted } = await e.client.createTasks(REVIEW_QUEUE, [
					{ ...third.data, request: 'Taxi, 20 EUR' },
					{ ...third.data, request: 'Team lunch, 12 EUR' },
				]);
				await e.client.complete(REVIEW_QUEUE, planted[0], {
					by: 'bob@example.com',
					data: { decision: 'approve' },
				});
				await e.client.complete(REVIEW_QUEUE, planted[1], {
					by: 'dave@example.com',
					data: { decision: 'approve' },
				});
				// the trigger forwards each to the run, which counts neither: once both deliveries are
				// answered, the run's state stops changing, still waiting
				await waitFor('both planted deliveries answered', async () => {
					const calls = await e.client.webhookCalls();
					return planted.every((taskId) =>
						calls.some((c) => c.taskId === taskId && c.state !== 'pending'),
					);
				});
				const meanwhile = await countsSettle(
					async () => (await e.n8n.api.get(`/executions/${waiting.id}`)).data.status as string,
					String,
				);
				expect(meanwhile).toBe('waiting');
				expect(toolMessagesSince(requestsBefore)).not.toContain('refunded order');
				await e.client.complete(REVIEW_QUEUE, third.id, {
					by: 'bob@example.com',
					data: { decision: 'approve' },
				});
				const done = await resumed(waiting.id, 'success', 60_000);
				expect(done.id).toBe(waiting.id);
				const toolMessages = toolMessagesSince(requestsBefore);
				expect(toolMessages).toMatch(/refunded order 4411 \(89\.9\)/);
			} finally {
				await deleteWorkflow(e, id);
			}
		},
		180_000,
	);
});

test('a workflow that does not save successful executions ("Save successful production executions: Do not save"): the run waits, resumes once, and goes on', async () => {
	// n8n lost waiting executions of such workflows in some 2.x versions (in queue mode above all)
	const path = uniq('nosave');
	const id = await createWorkflow(e, {
		name: `e2e create and wait, successful executions not saved ${path}`,
		settings: { executionOrder: 'v1', saveDataSuccessExecution: 'none' },
		nodes: [
			{
				name: 'Start',
				type: 'n8n-nodes-base.webhook',
				typeVersion: 2,
				position: [0, 0],
				webhookId: path,
				parameters: { httpMethod: 'POST', path, responseMode: 'onReceived', options: {} },
			},
			{
				name: 'Ask a person',
				type: TYPES.action,
				typeVersion: 1,
				position: [200, 0],
				parameters: {
					resource: 'task',
					operation: 'sendAndWait',
					queue: queueLocator(QUEUE),
					taskData: {
						mappingMode: 'defineBelow',
						value: { customer_message: `={{ 'not saved ' + $json.body.count }}` },
						matchingColumns: [],
						schema: [],
					},
					resumeField: 'resume_url',
					options: {},
				},
				credentials: credentialRef(e),
			},
			{
				// what the resumed run does next, seen in the service: the execution itself is not kept
				name: 'Report',
				type: TYPES.action,
				typeVersion: 1,
				position: [400, 0],
				parameters: {
					resource: 'task',
					operation: 'create',
					queue: queueLocator(101),
					taskData: {
						mappingMode: 'defineBelow',
						value: {
							customer_message:
								'={{ "resumed with task " + $json.id + ": " + $json.data.decision }}',
						},
						matchingColumns: [],
						schema: [],
					},
					options: {},
				},
				credentials: credentialRef(e),
			},
		],
		connections: {
			Start: { main: [[{ node: 'Ask a person', type: 'main', index: 0 }]] },
			'Ask a person': { main: [[{ node: 'Report', type: 'main', index: 0 }]] },
		},
	});
	await activate(e, id);
	await start(path, 7);
	const [task] = await waitFor('the task of the run', async () => {
		const found = (await e.client.tasks(QUEUE)).filter(
			(t) => t.data.customer_message === 'not saved 7',
		);
		return found.length === 1 ? found : undefined;
	});
	const executionId = /\/webhook-waiting\/(\d+)\//.exec(
		String(task.data.resume_url),
	)?.[1] as string;
	// the task exists a moment before n8n has put the execution to wait
	await waitFor(
		'the execution waiting',
		async () => (await byId(executionId)).status === 'waiting',
		30_000,
	);
	await e.client.complete(QUEUE, task.id, { by: ALICE, data: { decision: 'approve' } });
	const reports = async () =>
		(await e.client.tasks(101)).filter(
			(t) => t.data.customer_message === `resumed with task ${task.id}: approve`,
		);
	await waitFor("the resumed run's report", async () => (await reports()).length === 1, 60_000);
	// not saved on success: gone from n8n's list, never left waiting; and it went on once
	await waitFor(
		'the execution gone',
		async () =>
			(await e.n8n.api.get(`/executions/${executionId}`, { validateStatus: () => true })).status ===
			404,
		30_000,
	);
	// a second run would report again: the count stops changing at one
	expect(await countsSettle(async () => (await reports()).length, String)).toBe(1);
	expect(await triggerExecutions()).toBe(0);
	await deleteWorkflow(e, id);
});

test('a lost answer followed by 25,000 other completions, on a slow service: the check reads the backlog oldest first and the run resumes', async () => {
	/**
	 * One try: the answer's delivery is lost, 25,000 completions follow, the service slows down. A
	 * check that runs (once a minute, on n8n's schedule) while the 25,000 are being completed finds
	 * the answer before there is a backlog; such a try proves nothing of the backlog and is made again.
	 */
	const attempt = async () => {
		const { id, path } = await waitingWorkflow();
		await start(path, 1);
		const waiting = await waitingExecution(id);
		const [task] = await tasksOf(waiting.id, 1);
		// counted, not sliced: in queue mode the text joins several processes' logs
		const backlogRounds = () => e.n8n.logs.text().split('it read them oldest first').length - 1;
		const roundsBefore = backlogRounds();
		// the other work is created first (pending tasks are not in the completed list): between the
		// answer and the 25,000 completions after it there is then one call, however busy the machine,
		// and a check that runs there finds no backlog (the try is made again)
		await e.client.createTasks(QUEUE, 25_000);
		// every delivery from here on is lost
		await e.client.setFaults([{ webhook: 'drop', probability: 1 }]);
		try {
			const completedAt = Date.now();
			await e.client.complete(QUEUE, task.id, { by: ALICE, data: { decision: 'approve' } });
			await e.client.completeMany(QUEUE, 25_000, { by: 'bob@example.com' });
			// each read takes 0.6 s more: a round reads about 15 pages from the top in its half, not 26
			await e.client.setLatency(600);
			const done = await resumed(waiting.id, 'success', 300_000);
			process.stdout.write(
				`backlog of 25,000: the run resumed ${Math.round((Date.parse(String((done as { stoppedAt?: string }).stoppedAt)) - completedAt) / 1000)} s after its answer\n`,
			);
			expect(nodeOutput(done, 'Ask a person').map((o) => o.id)).toEqual([task.id]);
			// the run's answer is never emitted as an ordinary completion (runs counted by what they
			// emitted: after a try made again, Catch Up emits the earlier try's 25,000, CI2 of stop 58)
			expect(await triggerExecutionsWith([task])).toBe(0);
			return backlogRounds() > roundsBefore;
		} finally {
			await e.client.setLatency(0);
			await e.client.clearFaults();
			await deleteWorkflow(e, id);
		}
	};
	let readOldestFirst = false;
	for (let tries = 0; tries < 3 && !readOldestFirst; tries++) readOldestFirst = await attempt();
	expect(readOldestFirst).toBe(true);
}, 1_200_000);

// last: it starts a run of the trigger's workflow, which the tests above count as none
test("someone else's task with a copy of item 0's address, completed first, answers nothing: the run waits for its own task (the ids it keeps with the execution)", async () => {
	const { id, path } = await waitingWorkflow();
	await start(path, 1);
	const waiting = await waitingExecution(id);
	const [task] = await tasksOf(waiting.id, 1);
	const { ids } = await e.client.createTasks(QUEUE, [
		{ customer_message: 'a copy', order_total: 1, resume_url: String(task.data.resume_url) },
	]);
	await e.client.complete(QUEUE, ids[0], { by: ALICE, data: { decision: 'approve' } });
	// the copy is an ordinary completion of the queue: the trigger's workflow runs for it, once (its
	// runs counted by what they emitted: Catch Up may emit the backlog test's leftovers beside it, CI1
	// of stop 58)
	const copy = [{ id: ids[0] }];
	// the copy's delivery first catches up, oldest first, for up to 20 s per delivery, on what is left
	// of the backlog test's 25,000 (CI2 of stop 58: not emitted within 30 s)
	await waitFor(
		'the trigger ran for the copy',
		async () => ((await triggerExecutionsWith(copy)) > 0 ? true : undefined),
		300_000,
		2000,
	);
	expect((await byId(waiting.id)).status).toBe('waiting');
	await e.client.complete(QUEUE, task.id, { by: ALICE, data: { decision: 'reject' } });
	// its delivery too may wait for a catch-up read in turn (above)
	const done = await resumed(waiting.id, 'success', 120_000);
	expect(
		nodeOutput(done, 'Ask a person').map((o) => [
			o.id,
			(o.data as Record<string, unknown>).decision,
		]),
	).toEqual([[task.id, 'reject']]);
	expect(await triggerExecutionsWith(copy)).toBe(1);
	expect(await triggerExecutionsWith([task])).toBe(0);
	await deleteWorkflow(e, id);
}, 600_000);

describe('Several People per Item, as examples/refund-needs-two-approvers.json builds it (four eyes, the requester never counts)', () => {
	const BOB = 'bob@example.com';
	let workflowId = '';

	beforeAll(async () => {
		const example = loadExamples().find((x) => x.file === 'refund-needs-two-approvers.json');
		const wf = prepareWorkflow(example!.text, e.credentialId);
		// this file's own Task Queue Trigger on the queue routes the answers back
		wf.nodes = wf.nodes.filter(
			(n) => n.type !== TYPES.trigger && n.type !== 'n8n-nodes-base.stickyNote',
		);
		workflowId = await createWorkflow(e, wf);
		await activate(e, workflowId);
	});

	afterAll(async () => {
		if (workflowId) await deleteWorkflow(e, workflowId);
	});

	const request = (requester: string, path = 'refund-two-approvers', workflow = workflowId) =>
		requestTwoApprovals(requester, path, workflow);

	const withDeadline = twoApproversWithDeadline;

	test("the deadline comes after one approval of two: the trigger's check wakes the run, which goes on with Alice's approval, timed out, to the IF's false branch (n8n alone would pass the input on 5 minutes later)", async () => {
		const { id, path } = await withDeadline(0.25);
		const { waiting, tasks } = await request('requester@example.com', path, id);
		const startedAt = Date.now();
		await e.client.complete(QUEUE, tasks[0].id, { by: ALICE, data: { decision: 'approve' } });
		// the delivery reached the run, which keeps waiting for a second person
		await stillWaits(waiting.id);
		// the deadline is 15 s after the run started to wait; the check runs every minute
		const done = await resumed(waiting.id, 'success', 150_000);
		expect(Date.now() - startedAt).toBeLessThan(150_000);
		const [item] = nodeOutput(done, 'Two approvers, not the requester');
		expect(item).toMatchObject({
			approved: false,
			tasks: [tasks[0].id, tasks[1].id],
			wait: { outcome: 'timedOut', node: 'Two approvers, not the requester', of: 1 },
			people: {
				decision: 'timedOut',
				counted: 1,
				needed: 2,
				missing: 1,
				answers: [expect.objectContaining({ taskId: tasks[0].id, by: ALICE, counted: true })],
			},
		});
		expect(nodeOutput(done, 'Issue the refund')).toEqual([]);
		expect(nodeOutput(done, 'Not approved: tell the requester')).toEqual([
			expect.objectContaining({
				reply:
					'Not approved (timedOut): Not approved: the time ran out (1 of 2 needed answers counted)',
			}),
		]);
		expect(e.n8n.logs.text()).toContain(
			`execution ${waiting.id} reached its deadline; it goes on with the answers so far`,
		);
		// Bob's answer after the deadline resumes nothing and starts no trigger run
		await e.client.complete(QUEUE, tasks[1].id, {
			by: 'bob@example.com',
			data: { decision: 'approve' },
		});
		const said = `completion of task ${tasks[1].id} not taken by execution ${waiting.id}`;
		await waitFor(
			'the trigger logged the late answer',
			async () => e.n8n.logs.text().includes(said),
			30_000,
		);
		expect((await executions(e, id)).map((x) => x.status)).toEqual(['success']);
		// neither answer is emitted: Alice's was the run's, Bob's came after its end
		expect(await triggerExecutionsWith(tasks)).toBe(0);
		await deleteWorkflow(e, id);
	});

	test('two people approve: the refund is issued, naming both approvers', async () => {
		const { waiting, tasks } = await request('requester@example.com');
		await e.client.complete(QUEUE, tasks[0].id, { by: ALICE, data: { decision: 'approve' } });
		// one approval of two: the run keeps waiting
		await stillWaits(waiting.id);
		await e.client.complete(QUEUE, tasks[1].id, { by: BOB, data: { decision: 'approve' } });
		const done = await resumed(waiting.id);
		expect(nodeOutput(done, 'Issue the refund')).toEqual([
			{ action: 'refund', task_id: tasks[1].id, amount: 900, approved_by: `${ALICE}, ${BOB}` },
		]);
		expect(nodeOutput(done, 'Two approvers, not the requester')[0]).toMatchObject({
			approved: true,
			tasks: [tasks[0].id, tasks[1].id],
			people: { rule: 'allApprove', decision: 'approved', counted: 2, needed: 2 },
		});
	});

	test('a person changes their answer (a forced re-completion) before the item is decided: the latest answer counts, the item is rejected at once; changed again after it, nothing changes', async () => {
		const { waiting, tasks } = await request('requester@example.com');
		await e.client.complete(QUEUE, tasks[0].id, { by: ALICE, data: { decision: 'approve' } });
		await stillWaits(waiting.id);
		await e.client.recomplete(tasks[0].id, { data: { decision: 'reject' } });
		const done = await resumed(waiting.id);
		expect(nodeOutput(done, 'Two approvers, not the requester')[0]).toMatchObject({
			approved: false,
			people: {
				rule: 'allApprove',
				decision: 'rejected',
				answers: [{ taskId: tasks[0].id, by: ALICE, vote: 'reject', counted: true }],
			},
		});
		expect(nodeOutput(done, 'Issue the refund')).toEqual([]);
		// changed back after the decision: the run has gone on; nothing resumes or starts again
		const approvedSeq = Math.max(0, ...(await e.client.webhookCalls()).map((c) => c.seq));
		await e.client.recomplete(tasks[0].id, { data: { decision: 'approve' } });
		const late = await e.client.complete(QUEUE, tasks[1].id, {
			by: BOB,
			data: { decision: 'approve' },
		});
		// both deliveries answered, and the workflow's runs stop changing
		await waitFor('the late deliveries answered', async () => {
			const calls = await e.client.webhookCalls();
			return [tasks[0].id, late.id].every((taskId) =>
				calls.some((c) => c.taskId === taskId && c.state !== 'pending' && c.seq > approvedSeq),
			);
		});
		await countsSettle(async () =>
			(await executions(e, workflowId)).map((x) => `${x.id}:${x.status}`).join(','),
		);
		const runs = (await executions(e, workflowId)).filter((x) => x.id === waiting.id);
		expect(runs.map((x) => x.status)).toEqual(['success']);
		expect(nodeOutput(runs[0], 'Two approvers, not the requester')[0]).toMatchObject({
			approved: false,
		});
	});

	test('one person answers both tasks: counted once, the run asks again with a third task; answered by the same person too, it ends not approved (never stuck)', async () => {
		const { waiting, tasks } = await request(BOB);
		await e.client.complete(QUEUE, tasks[0].id, { by: ALICE, data: { decision: 'approve' } });
		await e.client.complete(QUEUE, tasks[1].id, { by: ALICE, data: { decision: 'approve' } });
		// asking again: a third task with the item's values, its address marked
		const third = await waitFor('the third task', async () =>
			(await e.client.tasks(QUEUE)).find(
				(t) =>
					String(t.data.resume_url).includes(`/webhook-waiting/${waiting.id}/`) &&
					String(t.data.resume_url).includes('#x=3.'),
			),
		);
		expect(third.data.customer_message).toBe('Refund 900 EUR');
		expect((await byId(waiting.id)).status).toBe('waiting');
		await e.client.complete(QUEUE, third.id, { by: ALICE, data: { decision: 'approve' } });
		const done = await resumed(waiting.id);
		expect(nodeOutput(done, 'Issue the refund')).toEqual([]);
		expect(nodeOutput(done, 'Not approved: tell the requester')).toEqual([
			expect.objectContaining({
				reply:
					'Not approved (notEnoughPeople): Not approved: notEnoughPeople (1 of 2 needed answers counted)',
			}),
		]);
		const answers = (
			nodeOutput(done, 'Two approvers, not the requester')[0].people as { answers: object[] }
		).answers;
		expect(answers).toEqual([
			expect.objectContaining({ taskId: tasks[0].id, by: ALICE, counted: true }),
			expect.objectContaining({
				taskId: tasks[1].id,
				by: ALICE,
				counted: false,
				reason: 'samePerson',
			}),
			expect.objectContaining({
				taskId: third.id,
				by: ALICE,
				counted: false,
				reason: 'samePerson',
			}),
		]);
		expectTasksAfterOneMore(nodeOutput(done, 'Two approvers, not the requester')[0].tasks, [
			tasks[0].id,
			tasks[1].id,
			third,
		]);
	});

	/** An item's `tasks` once the run asked one more person: its two tasks and the further one. */
	function expectTasksAfterOneMore(
		listed: unknown,
		[first, second, further]: [number, number, { id: number }],
	) {
		expect(listed).toEqual([first, second, further.id]);
	}

	test("planted tasks carrying a copy of the further task's marked address decide nothing: the trigger emits each as an ordinary completion, and the run's own task decides", async () => {
		const { waiting, tasks } = await request('requester@example.com');
		await e.client.complete(QUEUE, tasks[0].id, { by: ALICE, data: { decision: 'approve' } });
		await e.client.complete(QUEUE, tasks[1].id, { by: ALICE, data: { decision: 'approve' } });
		const third = await waitFor('the further task', async () =>
			(await e.client.tasks(QUEUE)).find(
				(t) =>
					String(t.data.resume_url).includes(`/webhook-waiting/${waiting.id}/`) &&
					String(t.data.resume_url).includes('#x=3.'),
			),
		);
		// someone who saw the further task copies its address, mark included, into a task of their own
		const { ids: planted } = await e.client.createTasks(QUEUE, [
			{ customer_message: 'Taxi', order_total: 20, resume_url: String(third.data.resume_url) },
		]);
		await e.client.complete(QUEUE, planted[0], { by: BOB, data: { decision: 'approve' } });
		// the trigger's runs that emitted it (counted by the task: Catch Up may emit other work too)
		const emitted = async (taskId: number) =>
			(await executionsOfTrigger(e, triggerId)).filter((x) =>
				nodeOutput(x, 'Trigger').some((item) => item.id === taskId),
			).length;
		await waitFor(
			'the trigger ran for the planted task',
			async () => (await emitted(planted[0])) === 1,
			30_000,
		);
		expect((await byId(waiting.id)).status).toBe('waiting');
		await e.client.complete(QUEUE, third.id, { by: BOB, data: { decision: 'approve' } });
		const done = await resumed(waiting.id);
		const [approved] = nodeOutput(done, 'Two approvers, not the requester');
		expect(approved).toMatchObject({
			approved: true,
			id: third.id,
			people: { decision: 'approved', decidedBy: third.id },
		});
		expectTasksAfterOneMore(approved.tasks, [tasks[0].id, tasks[1].id, third]);
		expect(await emitted(planted[0])).toBe(1);
		// the run's own further task is not emitted, and it is the slot's one task (queue mode too: a
		// run's calls reach one webhook process, docs/scaling.md)
		const slotTasks = (await e.client.tasks(QUEUE)).filter(
			(t) =>
				t.data.resume_url === third.data.resume_url &&
				t.data.customer_message === third.data.customer_message,
		);
		expect(slotTasks.map((t) => t.id)).toEqual([third.id]);
		expect(await emitted(third.id)).toBe(0);
		// the run has finished: its further task's address, mark included, typed over an ordinary
		// task swallows nothing (issue 60)
		const { ids: afterwards } = await e.client.createTasks(QUEUE, [
			{ customer_message: 'Hotel', order_total: 90, resume_url: String(third.data.resume_url) },
		]);
		await e.client.complete(QUEUE, afterwards[0], { by: BOB, data: { decision: 'approve' } });
		await waitFor(
			"the trigger ran for the finished run's typed-over address",
			async () => (await emitted(afterwards[0])) === 1,
			30_000,
		);
	});

	test('the requester approves their own request: kept, never counted; a rejection by another person rejects', async () => {
		const { waiting, tasks } = await request(BOB);
		await e.client.complete(QUEUE, tasks[0].id, { by: BOB, data: { decision: 'approve' } });
		await e.client.complete(QUEUE, tasks[1].id, {
			by: ALICE,
			data: { decision: 'reject', note: 'no receipt' },
		});
		const done = await resumed(waiting.id);
		expect(nodeOutput(done, 'Not approved: tell the requester')).toEqual([
			expect.objectContaining({ reply: 'Not approved (rejected): no receipt' }),
		]);
		expect(nodeOutput(done, 'Two approvers, not the requester')[0]).toMatchObject({
			approved: false,
			people: {
				decision: 'rejected',
				answers: [
					expect.objectContaining({ by: BOB, counted: false, reason: 'neverCount' }),
					expect.objectContaining({ by: ALICE, counted: true, vote: 'reject' }),
				],
			},
		});
	});
});

// at the end: its route back (activated in beforeAll) has recorded check rounds by now, so the next
// round on the default schedule comes within a minute of the lost delivery
test("the delivery of the run's last completion is lost and nothing else happens in the queue: the trigger's check for lost completions, on its default schedule (every minute), resumes it within a minute and a half", async () => {
	// a queue of its own (Refund Decisions' fields), whose route back keeps the default schedule
	const { queue, routeBack } = defaultCheck;
	// the first tick after a trigger registers is skipped: from its first recorded round on, the next
	// comes within a minute
	await waitFor(
		'the route back recorded its first check',
		async () =>
			JSON.stringify(
				(await e.n8n.api.get(`/workflows/${routeBack}`)).data.staticData ?? {},
			).includes('lostCompletionCheck'),
		180_000,
		1_000,
	);
	const { id, path } = await waitingWorkflow({}, { queue: queueLocator(queue.id) });
	await start(path, 1);
	const waiting = await waitingExecution(id, queue.id);
	const [task] = await tasksOf(waiting.id, 1, queue.id);
	await e.client.setFaults([{ webhook: 'drop', count: 1 }]);
	const completedAt = Date.now();
	await e.client.complete(queue.id, task.id, { by: ALICE, data: { decision: 'approve' } });
	const done = await resumed(waiting.id, 'success', 100_000);
	const stoppedAt = Date.parse(
		String((done as { stoppedAt?: string }).stoppedAt ?? new Date().toISOString()),
	);
	expect(stoppedAt - completedAt).toBeLessThan(90_000);
	expect(nodeOutput(done, 'Ask a person').map((o) => o.id)).toEqual([task.id]);
	expect(
		(await e.client.webhookCalls()).filter((c) => c.taskId === task.id).map((c) => c.fault),
	).toEqual(['dropped']);
	expect(e.n8n.logs.text()).toContain(
		'to their waiting executions that this n8n process had not passed on',
	);
	expect((await executionsOfTrigger(e, routeBack)).length).toBe(0);
	await e.client.clearFaults();
	await deleteWorkflow(e, id);
});
