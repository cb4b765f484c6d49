// The waiting guarantees, each under the fault that broke it: a run resumes once, with its
// own tasks, paired with its own inputs, never stuck, whatever the queue's traffic. Completions travel
// as in n8n: the sandbox POSTs them to the Task Queue Trigger (webhook() in a WebhookContext), which
// forwards them to n8n's waiting address (a stand-in that checks signatures as n8n 2.41 does and runs
// the waiting node's webhook() over the execution's stored data).
import type { IDataObject, INodeExecutionData, INodeParameters } from 'n8n-workflow';

import { runActionNode, type ActionRun } from '../../../helpers/n8n';
import { callWaitingNode, queryOf, resumeExecution } from '../../../helpers/waiting';
import { node } from '../env';
import { locator, WebhookTriggerUnderTest } from '../trigger/env';
import { FORWARD_RETRY_DELAYS_MS } from '../../../../nodes/TaskQueue/trigger/relay/forward';
import { forgetAsAfterRestart } from '../../../../nodes/TaskQueue/runtime/processMemory';
import { checkRecordCall } from '../../../../nodes/TaskQueue/trigger/relay/checkRecord';
import {
	apiKey,
	complete,
	createAndWait,
	env,
	INPUT,
	QUEUE,
	reads,
	resumedIds,
	nextExecutionId,
	server,
	serveWith,
	trigger,
	until,
	useGuaranteesEnv,
	waiting,
} from './guaranteesEnv';

useGuaranteesEnv();

describe('1. only the task the run created for item i answers item i', () => {
	test("a task created through the API with a copy of item 0's address, completed first, does not count", async () => {
		const { executionId, tasks } = await createAndWait();
		const { ids } = await env.client.createTasks(QUEUE, [
			{ customer_message: 'copy', resume_url: String(tasks[0].data.resume_url) },
		]);
		await complete(ids[0], { decision: 'approve' });
		await complete(tasks[1].id, { decision: 'reject' });
		await until(
			'both deliveries',
			async () => (await env.client.webhookCalls()).filter((c) => c.status !== null).length === 2,
		);
		expect(waiting.resumed.has(executionId)).toBe(false);
		// the copy is an ordinary completion of the queue
		expect(trigger.emitted.map((t) => t.id)).toEqual([ids[0]]);
		await complete(tasks[0].id, { decision: 'escalate' });
		await until('the resume', () => waiting.resumed.has(executionId));
		const [items] = waiting.resumed.get(executionId) as INodeExecutionData[][];
		expect(
			items.map((i) => [i.json.id, (i.json.data as IDataObject).decision, i.pairedItem]),
		).toEqual([
			[tasks[0].id, 'escalate', { item: 0 }],
			[tasks[1].id, 'reject', { item: 1 }],
		]);
	});

	test("a person who overwrites the read-only address of their task with item 0's still answers item 1, not item 0", async () => {
		const { executionId, tasks } = await createAndWait();
		await complete(tasks[1].id, {
			decision: 'reject',
			resume_url: String(tasks[0].data.resume_url),
		});
		await until(
			'the delivery',
			async () =>
				(await env.client.webhookCalls())[0]?.status !== null &&
				(await env.client.webhookCalls()).length === 1,
		);
		expect(waiting.resumed.has(executionId)).toBe(false);
		await complete(tasks[0].id, { decision: 'approve' });
		await until('the resume', () => waiting.resumed.has(executionId));
		const [items] = waiting.resumed.get(executionId) as INodeExecutionData[][];
		expect(items.map((i) => [i.json.id, (i.json.data as IDataObject).decision])).toEqual([
			[tasks[0].id, 'approve'],
			[tasks[1].id, 'reject'],
		]);
		expect(trigger.executions).toBe(0);
	});
});

describe('2. a lost delivery does not leave the run waiting', () => {
	test("the delivery of the run's last completion is lost and nothing else happens in the queue: the trigger's next check resumes it", async () => {
		const { executionId, tasks } = await createAndWait();
		await complete(tasks[0].id);
		await until('the first forward', () => waiting.calls.length === 1);
		await env.client.setFaults([{ webhook: 'drop', count: 1 }]);
		await complete(tasks[1].id);
		await env.client.waitForWebhookCalls(2);
		expect(waiting.resumed.has(executionId)).toBe(false);
		// n8n runs the trigger's poll() on its Check for Lost Completions times (every minute by default)
		expect(await trigger.reconcile()).toBeNull();
		expect(resumedIds(executionId)).toEqual([tasks[0].id, tasks[1].id]);
		// the next check passes nothing on: what this process settled is not called again
		const calls = waiting.calls.length;
		expect(await trigger.reconcile()).toBeNull();
		expect(waiting.calls.length).toBe(calls);
		expect(trigger.executions).toBe(0);
	});

	test('a proxy answers the forward with its own page while n8n restarts (HTML 404): the run is not taken for finished, a later call resumes it', async () => {
		const { executionId, tasks } = await createAndWait({}, [{ message: 'only' }]);
		server.setDown('proxy', 'waiting');
		const retries = FORWARD_RETRY_DELAYS_MS.splice(0, FORWARD_RETRY_DELAYS_MS.length, 50);
		try {
			await complete(tasks[0].id);
			await env.client.waitForWebhookCalls(1);
		} finally {
			FORWARD_RETRY_DELAYS_MS.splice(0, FORWARD_RETRY_DELAYS_MS.length, ...retries);
			server.setDown(false);
		}
		expect(waiting.resumed.has(executionId)).toBe(false);
		// the next check passes it on: it was not settled as "finished"
		expect(await trigger.reconcile()).toBeNull();
		expect(resumedIds(executionId)).toEqual([tasks[0].id]);
		expect(trigger.executions).toBe(0);
	});

	test("a test delivery's items reach the manual execution n8n runs through the trigger's poll()", async () => {
		const test = new WebhookTriggerUnderTest({
			credentials: env.credentials(),
			parameters: { event: 'taskCompleted', queue: locator(101), options: {} },
			isTest: true,
		});
		await serveWith(test);
		await test.activate();
		const { ids } = await env.client.createTasks(101, [
			{ customer_message: 'test me', order_total: 5 },
		]);
		await env.client.complete(101, ids[0], {
			by: 'alice@example.com',
			data: { decision: 'approve' },
		});
		await until('the test execution', () => test.executions === 1);
		const items = await test.reconcile('manual');
		expect(items?.[0].map((i) => i.json.id)).toEqual([ids[0]]);
		expect(await test.reconcile('manual')).toBeNull();
	});
});

describe('4. "The First Task Is Completed" pairs the answer with its own input downstream', () => {
	test("the answer to item 1 is item 1 for the next node ($('Start').item), as n8n 2.41 renumbers a resumed node's items", async () => {
		const { run, tasks } = await createAndWait({ waitFor: 'first' }, INPUT, { probe: true });
		await complete(tasks[1].id, { decision: 'reject' });
		const call = await callWaitingNode(run, queryOf(String(tasks[1].data.resume_url)), {
			tasks: [{ id: tasks[1].id }],
		});
		const resumed = await resumeExecution(run, call.result.workflowData as INodeExecutionData[][]);
		const probe = resumed.data.resultData.runData.Probe[0].data?.main[0] ?? [];
		const answered = probe.filter(
			(i) =>
				(i.json.answer as IDataObject).wait &&
				((i.json.answer as IDataObject).wait as IDataObject).outcome === 'completed',
		);
		expect(answered.map((i) => [(i.json.answer as IDataObject).id, i.json.start])).toEqual([
			[tasks[1].id, INPUT[1]],
		]);
		expect(probe.map((i) => i.json.start)).toEqual(INPUT);
	});
});

describe('5. forwarding loses and swallows nothing', () => {
	test('an altered address and a genuine completion of one run arrive together: the genuine one resumes the run, the other is emitted', async () => {
		const { executionId, tasks } = await createAndWait({}, [{ message: 'only' }]);
		const altered = String(tasks[0].data.resume_url).replace(
			/signature=(.)/,
			(_, c: string) => `signature=${c === 'a' ? 'b' : 'a'}`,
		);
		const { ids } = await env.client.createTasks(QUEUE, [
			{ customer_message: 'altered', resume_url: altered },
		]);
		await complete(ids[0]);
		await complete(tasks[0].id);
		await until('the resume', () => waiting.resumed.has(executionId));
		await until('the trigger execution', () => trigger.executions === 1);
		expect(resumedIds(executionId)).toEqual([tasks[0].id]);
		expect(trigger.emitted.map((t) => t.id)).toEqual([ids[0]]);
	});

	test("a false announcement (it takes the trigger's secret) names run B's task as run A's: B still resumes with it, A does not, nothing is emitted", async () => {
		const a = await createAndWait({}, [{ message: 'a' }]);
		const b = await createAndWait({}, [{ message: 'b' }]);
		const announced = await trigger.deliver({
			body: {
				taskQueueWaitingRun: {
					address: String(a.tasks[0].data.resume_url),
					tasks: [b.tasks[0].id],
				},
			},
			query: { secret: trigger.secret() as string },
		});
		expect(announced.response.statusCode).toBe(200);
		await complete(b.tasks[0].id);
		await until('the resume of B', () => waiting.resumed.has(b.executionId));
		expect(resumedIds(b.executionId)).toEqual([b.tasks[0].id]);
		expect(waiting.resumed.has(a.executionId)).toBe(false);
		expect(trigger.emitted).toEqual([]);
		// the false route is forgotten once A denied the task
		await complete(a.tasks[0].id);
		await until('the resume of A', () => waiting.resumed.has(a.executionId));
		expect(resumedIds(a.executionId)).toEqual([a.tasks[0].id]);
		expect(trigger.executions).toBe(0);
	});

	test("replaying a genuine address costs the service no read for a task that is not the run's, and bounded reads otherwise", async () => {
		const { run, tasks } = await createAndWait();
		const query = queryOf(String(tasks[0].data.resume_url));
		await complete(tasks[0].id);
		// the trigger's forward of it and its read, before the count starts (CI41: under load that read
		// came after the clear and was counted as the next call's)
		await until('the first forward', () => waiting.calls.length === 1);
		await env.client.clearRequests();
		for (let i = 0; i < 20; i++) await callWaitingNode(run, query, { tasks: [{ id: 999_999 }] });
		expect(await reads()).toBe(0);
		await callWaitingNode(run, query, { tasks: [{ id: tasks[0].id }] });
		expect(await reads()).toBe(1);
		// the run's completed task named 20 times at once: one read in flight, the rest share the next
		await Promise.all(
			Array.from({ length: 20 }, () =>
				callWaitingNode(run, query, { tasks: [{ id: tasks[0].id }] }),
			),
		);
		expect(await reads()).toBeLessThanOrEqual(3);
		// and a pending task of the run, the same
		await Promise.all(
			Array.from({ length: 20 }, () =>
				callWaitingNode(run, query, { tasks: [{ id: tasks[1].id }] }),
			),
		);
		expect(await reads()).toBeLessThanOrEqual(5);
	});

	test("a task this process saw completed, named again after the run's other task completed, is answered from a fresh read: the run resumes", async () => {
		// Queue mode: the trigger's check on the main process passes on every completion the webhook
		// processes took. Here the run's second task was completed with its address replaced by a
		// person and reached no process that knows the run (a restarted webhook process): the check
		// passing the first task on again is the run's only way back. Answered "still waiting" from
		// this process's earlier read, it settled that completion and the run waited for good (seen
		// once in the queue-mode chaos run, seed 11).
		const { run, executionId, tasks } = await createAndWait();
		const other = await createAndWait({}, [{ message: 'another run' }]);
		await complete(tasks[0].id);
		await until('the first forward', () => waiting.calls.length === 1);
		const query = queryOf(String(tasks[0].data.resume_url));
		expect(
			(await callWaitingNode(run, query, { tasks: [{ id: tasks[0].id }] })).response.statusCode,
		).toBe(202);
		forgetAsAfterRestart();
		await complete(tasks[1].id, {
			decision: 'reject',
			resume_url: String(other.tasks[0].data.resume_url),
		});
		await env.client.waitForWebhookCalls(2);
		expect(waiting.resumed.has(executionId)).toBe(false);
		// the completion went where its address points: that run denied it, the trigger emitted it
		expect(waiting.resumed.has(other.executionId)).toBe(false);
		expect(trigger.emitted.map((t) => t.id)).toEqual([tasks[1].id]);
		await env.client.clearRequests();
		const { result } = await callWaitingNode(run, query, { tasks: [{ id: tasks[0].id }] });
		expect(await reads()).toBe(1);
		expect(
			((result.workflowData as INodeExecutionData[][])[0] ?? []).map((i) => [
				i.json.id,
				i.pairedItem,
			]),
		).toEqual([
			[tasks[0].id, { item: 0 }],
			[tasks[1].id, { item: 1 }],
		]);
	});
});

describe('7. exactly once on n8n 1.x, which does not refuse a second resume', () => {
	test('40 calls at once to a completed run\'s address (as n8n 1.x runs each) and its delivery: the run resumes once, the other calls hear "running"', async () => {
		waiting.n8nMajor = 1;
		const { run, executionId, tasks } = await createAndWait({}, [{ message: 'only' }]);
		await complete(tasks[0].id);
		const query = queryOf(String(tasks[0].data.resume_url));
		const calls = await Promise.all(
			Array.from(
				{ length: 40 },
				async () => await callWaitingNode(run, query, { tasks: [{ id: tasks[0].id }] }, 1),
			),
		);
		// the trigger's forward of the delivery, answered by the endpoint (it resumed, or heard "running")
		await until('the forward of the delivery', () => waiting.calls.length >= 1);
		const resumedByCalls = calls.filter((call) => call.result.workflowData !== undefined);
		expect(resumedByCalls.length + (waiting.resumes.get(executionId) ?? 0)).toBe(1);
		expect(calls.filter((call) => call.response.statusCode === 409)).toHaveLength(
			40 - resumedByCalls.length,
		);
	});
});

describe('9. Resume Address Field: Automatic', () => {
	test("Automatic writes the address into the queue's field named for it, the run resumes by it, and the output leaves it out", async () => {
		const { executionId, tasks } = await createAndWait({ resumeField: '' }, [{ message: 'only' }]);
		expect(String(tasks[0].data.resume_url)).toContain(`/webhook-waiting/${executionId}/`);
		await complete(tasks[0].id, { decision: 'approve' });
		await until('the resume', () => waiting.resumed.has(executionId));
		const [items] = waiting.resumed.get(executionId) as INodeExecutionData[][];
		expect(items.map((i) => i.json.data)).toEqual([
			{ customer_message: 'only', order_total: null, decision: 'approve', note: null },
		]);
	});
});

describe('8. a restart costs what may still be waiting, not what the look-back window holds', () => {
	const allDelivered = async (count: number) =>
		await until(
			`${count} deliveries answered`,
			async () =>
				(await env.client.webhookCalls()).filter((c) => c.status !== null).length === count,
		);

	test('10 runs answered and finished before a restart: the first check after it calls no waiting address', async () => {
		const runs = [];
		for (let i = 0; i < 10; i++) runs.push(await createAndWait({}, [{ message: `run ${i}` }]));
		for (const { tasks } of runs) await complete(tasks[0].id);
		await allDelivered(10);
		for (const { executionId } of runs) expect(waiting.resumed.has(executionId)).toBe(true);
		// a check before the restart: it keeps where it stands in the trigger's static data
		expect(await trigger.reconcile()).toBeNull();
		expect(trigger.state().lostCompletionCheck).toMatchObject({ queueId: QUEUE });
		forgetAsAfterRestart();
		const calls = waiting.calls.length;
		expect(await trigger.reconcile()).toBeNull();
		expect(waiting.calls.length - calls).toBe(0);
		expect(trigger.executions).toBe(0);
	});

	test('runs still waiting across a restart: one call for the run whose delivery was lost while n8n was down, none for the others', async () => {
		const runs = [];
		for (let i = 0; i < 3; i++) runs.push(await createAndWait());
		for (const { tasks } of runs) await complete(tasks[0].id);
		await allDelivered(3);
		expect(await trigger.reconcile()).toBeNull();
		forgetAsAfterRestart();
		// n8n is down: the delivery of run 0's last completion is lost (its forward tried again at once)
		server.setDown('reset');
		const retries = FORWARD_RETRY_DELAYS_MS.splice(0, FORWARD_RETRY_DELAYS_MS.length, 50);
		try {
			await complete(runs[0].tasks[1].id, { decision: 'reject' });
			await env.client.waitForWebhookCalls(4);
		} finally {
			FORWARD_RETRY_DELAYS_MS.splice(0, FORWARD_RETRY_DELAYS_MS.length, ...retries);
		}
		server.setDown(false);
		const calls = waiting.calls.length;
		expect(await trigger.reconcile()).toBeNull();
		expect(waiting.calls.length - calls).toBe(1);
		expect(resumedIds(runs[0].executionId)).toEqual([runs[0].tasks[0].id, runs[0].tasks[1].id]);
		expect(waiting.resumed.has(runs[1].executionId)).toBe(false);
		expect(waiting.resumed.has(runs[2].executionId)).toBe(false);
		expect(trigger.executions).toBe(0);
		// under load a call of this test's trigger can outlive it, and leave the next test's process
		// memory a completion owed (CI34: the next test's check emitted it): it ends here
		await trigger.idle();
	});

	test('a completion no check could pass on before a restart (n8n unreachable) is passed on by the first check after it', async () => {
		const { executionId, tasks } = await createAndWait({}, [{ message: 'only' }]);
		const { ids } = await env.client.createTasks(QUEUE, 2);
		server.setDown('503', 'waiting');
		const retries = FORWARD_RETRY_DELAYS_MS.splice(0, FORWARD_RETRY_DELAYS_MS.length, 50);
		try {
			await complete(tasks[0].id);
			// later completions: the check's cursor moves past the one it cannot pass on
			for (const id of ids) await complete(id);
			await env.client.waitForWebhookCalls(3);
			expect(await trigger.reconcile()).toBeNull();
		} finally {
			FORWARD_RETRY_DELAYS_MS.splice(0, FORWARD_RETRY_DELAYS_MS.length, ...retries);
		}
		expect(waiting.resumed.has(executionId)).toBe(false);
		forgetAsAfterRestart();
		server.setDown(false);
		expect(await trigger.reconcile()).toBeNull();
		expect(resumedIds(executionId)).toEqual([tasks[0].id]);
		expect(trigger.emitted.map((t) => t.id)).toEqual(ids);
	});
	test('a completion committed late, below completions a check read before a restart, its delivery lost: the first check after the restart passes it on (the record keeps the late-commit window: issue 59)', async () => {
		const { executionId, tasks } = await createAndWait({}, [{ message: 'only' }]);
		const { ids } = await env.client.createTasks(QUEUE, 2);
		// the answer is dated now and listed only once the test commits it, below two later ones
		await env.client.complete(QUEUE, tasks[0].id, {
			by: 'alice@example.com',
			data: { decision: 'approve' },
			commitAfterMs: -1,
		});
		for (const id of ids) await complete(id);
		await env.client.waitForWebhookCalls(2);
		// a check round reads past it and records where it stands; then n8n restarts
		expect(await trigger.reconcile()).toBeNull();
		expect(trigger.state().lostCompletionCheck).toMatchObject({ queueId: QUEUE });
		forgetAsAfterRestart();
		await env.client.setFaults([{ webhook: 'drop', count: 1 }]);
		expect(await env.client.commitHeld()).toBe(1);
		await env.client.waitForWebhookCalls(3);
		expect(waiting.resumed.has(executionId)).toBe(false);
		expect(await trigger.reconcile()).toBeNull();
		expect(resumedIds(executionId)).toEqual([tasks[0].id]);
		expect(trigger.emitted.map((t) => t.id)).toEqual(ids);
	});

	test('with Catch Up, a record arriving right after a delivery waits for the next one, and the next check sends it again once deliveries are quiet', async () => {
		const catchUp = new WebhookTriggerUnderTest({
			credentials: env.credentials(),
			parameters: { event: 'taskCompleted', queue: locator(QUEUE), options: { catchUp: true } },
		});
		await serveWith(catchUp);
		await catchUp.activate();
		const { executionId, tasks } = await createAndWait({}, [{ message: 'only' }]);
		await complete(tasks[0].id);
		await until('the resume', () => waiting.resumed.has(executionId));
		// the delivery wrote static data a moment ago: the record is held, not written over it
		expect(await catchUp.reconcile()).toBeNull();
		expect(catchUp.state().lostCompletionCheck).toBeUndefined();
		await new Promise((resolve) => setTimeout(resolve, 2_100));
		expect(await catchUp.reconcile()).toBeNull();
		expect(catchUp.state().lostCompletionCheck).toMatchObject({ queueId: QUEUE });
		// what the delivery kept is still there
		expect(catchUp.state().cursor).toBeDefined();
	});

	test('a record later than now (made up by a caller with the secret) is not followed: after a restart the check still passes a lost completion on', async () => {
		const { executionId, tasks } = await createAndWait({}, [{ message: 'only' }]);
		const secret = trigger.secret() as string;
		const future = { queueId: QUEUE, at: '2099-01-01T00:00:00.000', ids: [] };
		// even signed with the credential's key (which the secret alone does not give)
		expect(
			(await trigger.deliver({ body: checkRecordCall(future, apiKey()), query: { secret } }))
				.response.statusCode,
		).toBe(200);
		forgetAsAfterRestart();
		await env.client.setFaults([{ webhook: 'drop', count: 1 }]);
		await complete(tasks[0].id);
		await env.client.waitForWebhookCalls(1);
		expect(await trigger.reconcile()).toBeNull();
		expect(resumedIds(executionId)).toEqual([tasks[0].id]);
	});

	test("a record dated now, made up with the trigger's secret alone, is refused: after a restart the check still passes a lost completion on", async () => {
		const { executionId, tasks } = await createAndWait({}, [{ message: 'only' }]);
		await env.client.setFaults([{ webhook: 'drop', count: 1 }]);
		await complete(tasks[0].id);
		await env.client.waitForWebhookCalls(1);
		const now = { queueId: QUEUE, at: new Date().toISOString().slice(0, 23), ids: [] };
		const secret = trigger.secret() as string;
		const forged = await trigger.deliver({
			body: { taskQueueCheckedThrough: now },
			query: { secret },
		});
		expect(forged.response.statusCode).toBe(403);
		expect(trigger.state().lostCompletionCheck).toBeUndefined();
		forgetAsAfterRestart();
		expect(await trigger.reconcile()).toBeNull();
		expect(resumedIds(executionId)).toEqual([tasks[0].id]);
	});

	test("the trigger keeps a check's record only with its secret, signed by its credential, and for its own queue, starting no execution", async () => {
		const record = { queueId: QUEUE, at: '2026-11-26T10:00:00.000', ids: [1] };
		const without = await trigger.deliver({ body: { taskQueueCheckedThrough: record } });
		expect(without.response.statusCode).toBe(401);
		const secret = trigger.secret() as string;
		const other = await trigger.deliver({
			body: checkRecordCall({ ...record, queueId: QUEUE + 1 }, apiKey()),
			query: { secret },
		});
		expect(other.response.statusCode).toBe(400);
		expect(trigger.state().lostCompletionCheck).toBeUndefined();
		const unsigned = await trigger.deliver({
			body: { taskQueueCheckedThrough: record },
			query: { secret },
		});
		expect(unsigned.response.statusCode).toBe(403);
		const kept = await trigger.deliver({
			body: checkRecordCall(record, apiKey()),
			query: { secret },
		});
		expect(kept.response.statusCode).toBe(200);
		expect(trigger.state().lostCompletionCheck).toEqual(record);
		expect(trigger.executions).toBe(0);
	});
});

describe('6. a set-up that cannot come back is refused before any task', () => {
	async function refused(parameters: IDataObject, settings?: IDataObject): Promise<ActionRun> {
		await env.client.clearRequests();
		const executionId = nextExecutionId();
		const result = await runActionNode({
			types: { taskQueue: node },
			node: {
				type: 'taskQueue',
				parameters: {
					resource: 'task',
					operation: 'sendAndWait',
					queue: locator(QUEUE),
					taskData: {
						mappingMode: 'defineBelow',
						value: { customer_message: 'x' },
						matchingColumns: [],
						schema: [],
					},
					resumeField: 'resume_url',
					options: {},
					...parameters,
				} as INodeParameters,
			},
			input: [{}],
			credentials: env.credentials(),
			executionId,
			additionalData: { webhookWaitingBaseUrl: 'http://localhost:5678/webhook-waiting' },
			workflowSettings: settings,
		});
		expect((await env.client.requests()).filter((r) => r.path.endsWith('/tasks/create'))).toEqual(
			[],
		);
		expect(result.run.status).not.toBe('waiting');
		return result;
	}

	test("a link field as Resume Address Field while n8n's address is on localhost", async () => {
		const queue = await env.client.createQueue({
			name: 'Links',
			blocks: [
				{
					id: 'summary',
					name: 'Summary',
					type: 'text',
					text: { placeholder: '', read_only: true },
				},
				{
					id: 'callback',
					name: 'Callback',
					type: 'link',
					link: { placeholder: '', read_only: true },
				},
			] as never,
		});
		const { error } = await refused({
			queue: locator(queue.id),
			taskData: { mappingMode: 'defineBelow', value: {}, matchingColumns: [], schema: [] },
			resumeField: 'callback',
			options: { routeBack: 'pollTrigger' },
		});
		expect(error).toMatchObject({
			name: 'NodeOperationError',
			message:
				'The link field "callback" cannot hold this n8n\'s address: the service refuses links to "localhost"',
		});
		expect((error as unknown as { description: string }).description).toMatch(
			/Pick a text field as Resume Address Field, or give n8n an address with a dotted host/,
		);
	});

	test('a field people read as Resume Address Field while the queue has one named for the address: refused, with the fix', async () => {
		// the builder's mistake: "Customer message" picked, the request's message mapped into the address's field
		const { error } = await refused({
			resumeField: 'customer_message',
			taskData: {
				mappingMode: 'defineBelow',
				value: { resume_url: 'My kettle leaks', order_total: 42 },
				matchingColumns: [],
				schema: [],
			},
		});
		expect(error).toMatchObject({
			name: 'NodeOperationError',
			message:
				'Resume Address Field is "Customer message" (customer_message), a field people read, while queue 104 (Refund Decisions) has "Resume address (n8n fills it)" (resume_url) for the address',
		});
		expect((error as unknown as { description: string }).description).toBe(
			'People would see the waiting address where "Customer message" should be, and the value mapped into "resume_url" under the address\'s name. Set Resume Address Field to Automatic (it takes "Resume address (n8n fills it)" (resume_url)), remove "resume_url" from Values to Send and map that value into "customer_message" instead.',
		);
	});

	test('Automatic on a queue with no field named for the address: refused, naming the fields it could take', async () => {
		const queue = await env.client.createQueue({
			name: 'Plain',
			blocks: [
				{ id: 'message', name: 'Message', type: 'text', text: { read_only: true } },
				{ id: 'answer', name: 'Answer', type: 'text', text: {} },
			] as never,
		});
		const { error } = await refused({
			queue: locator(queue.id),
			resumeField: '',
			taskData: { mappingMode: 'defineBelow', value: {}, matchingColumns: [], schema: [] },
			options: { routeBack: 'pollTrigger' },
		});
		expect(error).toMatchObject({
			name: 'NodeOperationError',
			message: `Resume Address Field is Automatic, but queue ${queue.id} (Plain) has no read-only text or link field named for the address`,
		});
		expect((error as unknown as { description: string }).description).toBe(
			'Add a read-only text field named for it (for example "resume_url") to the queue in the service, or choose one of "Message" (message) as Resume Address Field: people then see the address there instead of what it holds.',
		);
	});

	test("a workflow on n8n's Engine 2.0", async () => {
		const { error } = await refused({}, { engineType: 'v2' });
		expect(error).toMatchObject({
			name: 'NodeOperationError',
			message: "This workflow runs on n8n's Engine 2.0, which cannot resume a waiting execution",
		});
	});
});
