// A completion travels back to the Create and Wait waiting for it: the sandbox POSTs it to the Task
// Queue Trigger (its webhook() in a WebhookContext), the trigger forwards it to n8n's waiting
// address (a local stand-in that checks the signature as n8n 2.41 does and runs the waiting node's
// webhook()), and the waiting node confirms it with the service before it resumes.
import type { IDataObject, INodeExecutionData, INodeParameters } from 'n8n-workflow';

import { FORWARD_RETRY_DELAYS_MS } from '../../../../../nodes/TaskQueue/trigger/relay/forward';
import { runActionNode } from '../../../../helpers/n8n';
import { NO_ACTION_REQUIRED, WaitingEndpoint } from '../../../../helpers/waiting';
import { node } from '../../env';
import {
	locator,
	PollTriggerUnderTest,
	startTriggerEnv,
	startWebhookServer,
	WebhookTriggerUnderTest,
	type TriggerTestEnv,
} from '../env';
import {
	forgetDeadline,
	runsToWake,
	takeAnnounced,
} from '../../../../../nodes/TaskQueue/trigger/relay/deadlines';
import { forgetAsAfterRestart } from '../../../../../nodes/TaskQueue/runtime/processMemory';
import { rememberRun } from '../../../../../nodes/TaskQueue/trigger/relay/knownRuns';

const QUEUE = 104;
let env: TriggerTestEnv;
let trigger: WebhookTriggerUnderTest;
let waiting: WaitingEndpoint;
let server: Awaited<ReturnType<typeof startWebhookServer>>;

/** n8n's Logger, which `this.logger` of every node context is. */
const { Logger } = require(
	require.resolve('@n8n/backend-common', { paths: [require.resolve('n8n-core')] }),
) as typeof import('@n8n/backend-common');
const info = jest.spyOn(Logger.prototype, 'info');
const warn = jest.spyOn(Logger.prototype, 'warn');
const infoLines = () => info.mock.calls.map(([message]) => String(message));
const warnLines = () => warn.mock.calls.map(([message]) => String(message));

beforeAll(async () => (env = await startTriggerEnv()));
afterAll(async () => await env.close());
beforeEach(async () => {
	forgetAsAfterRestart();
	info.mockClear();
	warn.mockClear();
	await env.client.reset();
	waiting = new WaitingEndpoint();
});
afterEach(async () => await server?.close());

let triggerCredentials: ReturnType<TriggerTestEnv['credentials']>;

async function activateTrigger(options: IDataObject = {}) {
	triggerCredentials = env.credentials();
	trigger = new WebhookTriggerUnderTest({
		credentials: triggerCredentials,
		parameters: {
			event: 'taskCompleted',
			queue: locator(QUEUE),
			options: options as INodeParameters,
		},
	});
	server = await startWebhookServer(trigger, waiting);
	await trigger.activate();
}

async function createAndWait(
	executionId: string,
	input: IDataObject[],
	options: IDataObject = {},
	parameters: IDataObject = {},
) {
	const run = await runActionNode({
		types: { taskQueue: node },
		node: {
			type: 'taskQueue',
			parameters: {
				resource: 'task',
				operation: 'sendAndWait',
				queue: locator(QUEUE),
				taskData: {
					mappingMode: 'defineBelow',
					value: { customer_message: '={{ $json.message }}' },
					matchingColumns: [],
					schema: [],
				},
				resumeField: 'resume_url',
				options: options as INodeParameters,
				...(parameters as INodeParameters),
			},
		},
		input,
		credentials: env.credentials(),
		executionId,
		additionalData: { webhookWaitingBaseUrl: server.waitingBaseUrl },
	});
	expect(run.error).toBeUndefined();
	expect(run.run.status).toBe('waiting');
	waiting.add(executionId, run);
	const tasks = (await env.client.tasks(QUEUE)).filter((t) =>
		String(t.data.resume_url).includes(`/${executionId}/`),
	);
	return tasks.sort((a, b) => String(a.data.resume_url).localeCompare(String(b.data.resume_url)));
}

const complete = async (taskId: number, decision = 'approve') =>
	await env.client.complete(QUEUE, taskId, { by: 'alice@example.com', data: { decision } });

async function until(what: string, probe: () => boolean | Promise<boolean>, timeoutMs = 5000) {
	const deadline = Date.now() + timeoutMs;
	while (!(await probe())) {
		if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
		await new Promise((resolve) => setTimeout(resolve, 20));
	}
}

test('each completion goes to its waiting execution, which resumes once when all are done; the trigger starts no execution', async () => {
	await activateTrigger();
	const tasks = await createAndWait('41', [{ message: 'a' }, { message: 'b' }, { message: 'c' }]);
	const lookupsBefore = triggerCredentials.decryptCount;
	for (const [i, task] of tasks.entries()) {
		await complete(task.id);
		await env.client.waitForWebhookCalls(i + 1);
	}
	expect(waiting.resumed.has('41')).toBe(true);
	const [items] = waiting.resumed.get('41') as INodeExecutionData[][];
	expect(
		items.map((i) => [i.json.id, (i.json.data as IDataObject).customer_message, i.pairedItem]),
	).toEqual([
		[tasks[0].id, 'a', { item: 0 }],
		[tasks[1].id, 'b', { item: 1 }],
		[tasks[2].id, 'c', { item: 2 }],
	]);
	expect(waiting.calls.map((c) => c.status)).toEqual([202, 202, 200]);
	// the API key goes to the service only, never to n8n's waiting address; forwarding does not even
	// look the credential up (a lookup costs n8n 2.41 an expression isolate in a webhook call)
	expect(waiting.calls.filter((c) => c.authorization !== undefined)).toEqual([]);
	expect(triggerCredentials.decryptCount - lookupsBefore).toBe(0);
	expect(trigger.executions).toBe(0);
	// the service got 200 for each delivery: the trigger took it
	expect((await env.client.webhookCalls()).map((c) => c.status)).toEqual([200, 200, 200]);
});

test("completions of other tasks of the queue still start the trigger's workflow", async () => {
	await activateTrigger();
	const [waited] = await createAndWait('42', [{ message: 'mine' }]);
	const { ids } = await env.client.createTasks(QUEUE, [{ customer_message: 'plain task' }]);
	await complete(ids[0]);
	await complete(waited.id);
	await until('the resume', () => waiting.resumed.has('42'));
	await until('the trigger execution', () => trigger.executions === 1);
	expect(trigger.emitted.map((t) => t.id)).toEqual([ids[0]]);
});

test("an address a person typed that names another host is never called: the completion is the trigger's", async () => {
	await activateTrigger();
	const [waited] = await createAndWait('43', [{ message: 'mine' }]);
	const foreign = String(waited.data.resume_url).replace(
		new URL(server.waitingBaseUrl).origin,
		'http://169.254.169.254',
	);
	const { ids } = await env.client.createTasks(QUEUE, [
		{ customer_message: 'typed', resume_url: foreign },
	]);
	await complete(ids[0]);
	await until('the trigger execution', () => trigger.executions === 1);
	expect(trigger.emitted.map((t) => t.id)).toEqual([ids[0]]);
	expect(waiting.calls).toEqual([]);
	expect(waiting.resumed.size).toBe(0);
});

test("a copied address with a forged item is refused by n8n's signature check, resumes nothing, and the completion is the trigger's", async () => {
	await activateTrigger();
	const [waited] = await createAndWait('44', [{ message: 'mine' }, { message: 'other' }]);
	const forged = String(waited.data.resume_url).replace('tq=0-2-2', 'tq=1-2-2');
	const { ids } = await env.client.createTasks(QUEUE, [
		{ customer_message: 'forged', resume_url: forged },
	]);
	await complete(ids[0]);
	await until('the trigger execution', () => trigger.executions === 1);
	expect(waiting.calls).toEqual([expect.objectContaining({ executionId: '44', status: 401 })]);
	expect(waiting.resumed.size).toBe(0);
	expect(trigger.emitted.map((t) => t.id)).toEqual([ids[0]]);
	expect(infoLines().filter((line) => line.includes(`task ${ids[0]} `))).toEqual([
		`Task Queue: completion of task ${ids[0]} not taken by execution 44: n8n refused the call (HTTP 401: an address altered by hand); emitted as an ordinary completion`,
	]);
});

test('after a restart, the check passes that completion on again, and its log line says it emitted nothing, as it did', async () => {
	await activateTrigger();
	const [waited] = await createAndWait('45', [{ message: 'mine' }, { message: 'other' }]);
	const forged = String(waited.data.resume_url).replace('tq=0-2-2', 'tq=1-2-2');
	const { ids } = await env.client.createTasks(QUEUE, [
		{ customer_message: 'forged', resume_url: forged },
	]);
	await complete(ids[0]);
	await until('the trigger execution', () => trigger.executions === 1);
	forgetAsAfterRestart();
	info.mockClear();
	expect(await trigger.reconcile()).toBeNull();
	expect(waiting.calls).toEqual([
		expect.objectContaining({ executionId: '45', status: 401 }),
		expect.objectContaining({ executionId: '45', status: 401 }),
	]);
	expect(trigger.executions).toBe(1);
	expect(infoLines().filter((line) => line.includes(`task ${ids[0]} `))).toEqual([
		`Task Queue: completion of task ${ids[0]} not taken by execution 45: n8n refused the call (HTTP 401: an address altered by hand); not emitted: Check for Lost Completions emits only a completion delivered to this process that no run took`,
	]);
});

test('text shaped like an address of this n8n, typed by a person into a field people fill in, diverts nothing: the completion is emitted', async () => {
	await activateTrigger();
	const lookalike = `${server.waitingBaseUrl}/999999/some-node?tq=0-1-1&q=${QUEUE}&t=1790000000&signature=${'a'.repeat(64)}`;
	const { ids } = await env.client.createTasks(QUEUE, [{ customer_message: 'an ordinary task' }]);
	await env.client.complete(QUEUE, ids[0], {
		by: 'alice@example.com',
		data: { decision: 'approve', note: lookalike },
	});
	await until('the trigger execution', () => trigger.executions === 1);
	expect(trigger.emitted.map((t) => t.id)).toEqual([ids[0]]);
	expect(waiting.calls).toEqual([]);
	// and Check for Lost Completions passes nothing on for it either
	forgetAsAfterRestart();
	expect(await trigger.reconcile()).toBeNull();
	expect(waiting.calls).toEqual([]);
});

test('a made-up address typed into the READ-ONLY address field when submitting (it names no execution: n8n answers 404) diverts nothing: the completion is emitted', async () => {
	await activateTrigger();
	const lookalike = `${server.waitingBaseUrl}/999999/some-node?tq=0-1-1&q=${QUEUE}&t=1790000000&signature=${'a'.repeat(64)}`;
	const { ids } = await env.client.createTasks(QUEUE, [{ customer_message: 'an ordinary task' }]);
	await env.client.complete(QUEUE, ids[0], {
		by: 'bob@example.com',
		data: { decision: 'approve', resume_url: lookalike },
	});
	await until('the trigger execution', () => trigger.executions === 1);
	expect(trigger.emitted.map((t) => t.id)).toEqual([ids[0]]);
	expect(waiting.calls).toEqual([expect.objectContaining({ executionId: '999999', status: 404 })]);
	expect(infoLines().filter((line) => line.includes(`task ${ids[0]} `))).toEqual([
		`Task Queue: completion of task ${ids[0]} not taken by execution 999999: the execution no longer exists (HTTP 404: {"message":"The execution \\"999999\\" does not exist."}); emitted as an ordinary completion`,
	]);
	// the same with a made-up tag (32 hex digits not made with the credential's key)
	const tagged = lookalike.replace('&signature=', `&k=${'b'.repeat(32)}&signature=`);
	const second = await env.client.createTasks(QUEUE, [{ customer_message: 'another' }]);
	await env.client.complete(QUEUE, second.ids[0], {
		by: 'bob@example.com',
		data: { decision: 'approve', resume_url: tagged },
	});
	await until('the second trigger execution', () => trigger.executions === 2);
	expect(trigger.emitted.map((t) => t.id)).toEqual([ids[0], second.ids[0]]);
});

test("a run n8n deleted (404: it saved nothing, or was pruned) keeps its own completion from the trigger's workflow, also in a process that never knew it", async () => {
	await activateTrigger();
	const [waited] = await createAndWait('62', [{ message: 'mine' }]);
	expect(String(waited.data.resume_url)).toMatch(/&k=[a-f0-9]{32}&signature=/);
	forgetAsAfterRestart(); // another process, or after a restart: only the address's tag vouches for the run
	waiting.runs.delete('62');
	await complete(waited.id);
	await until('the log line', () =>
		infoLines().some((line) => line.includes(`task ${waited.id} `)),
	);
	expect(waiting.calls).toEqual([expect.objectContaining({ executionId: '62', status: 404 })]);
	expect(infoLines().filter((line) => line.includes(`task ${waited.id} `))).toEqual([
		`Task Queue: completion of task ${waited.id} not taken by execution 62: the execution no longer exists (HTTP 404: {"message":"The execution \\"62\\" does not exist."})`,
	]);
	await new Promise((resolve) => setTimeout(resolve, 100));
	expect(trigger.executions).toBe(0);
});

test("an admin makes the queue's address field one people fill in while a run waits: after a restart the run's answer still resumes it (the address's tag vouches for it), and typed text still diverts nothing", async () => {
	await activateTrigger();
	const [waited] = await createAndWait('63', [{ message: 'mine' }]);
	const queue = await env.client.getQueue(QUEUE);
	const blocks = (queue.data ?? []).map((block) =>
		block.id === 'resume_url'
			? { ...block, text: { ...(block.text ?? {}), read_only: false } }
			: block,
	);
	await env.client.setBlocks(QUEUE, blocks);
	expect((await env.client.getQueue(QUEUE)).data?.find((b) => b.id === 'resume_url')?.text).toEqual(
		expect.objectContaining({ read_only: false }),
	);
	forgetAsAfterRestart();
	forgetAsAfterRestart();
	await complete(waited.id);
	await until('the resume', () => waiting.resumed.has('63'));
	expect(waiting.resumes.get('63')).toBe(1);
	// a person types an address-shaped text (no tag) into the field now open to them: emitted
	const lookalike = `${server.waitingBaseUrl}/999999/some-node?tq=0-1-1&q=${QUEUE}&t=1790000000&signature=${'a'.repeat(64)}`;
	const { ids } = await env.client.createTasks(QUEUE, [{ customer_message: 'an ordinary task' }]);
	await env.client.complete(QUEUE, ids[0], {
		by: 'bob@example.com',
		data: { decision: 'approve', resume_url: lookalike },
	});
	await until('the trigger execution', () => trigger.executions === 1);
	expect(trigger.emitted.map((t) => t.id)).toEqual([ids[0]]);
	expect(waiting.calls.map((c) => c.executionId)).toEqual(['63']);
});

test("a copy of a genuine address in another task (a person pasted it) does not answer the run: the completion is the trigger's", async () => {
	await activateTrigger();
	const [waited] = await createAndWait('51', [{ message: 'mine' }]);
	const { ids } = await env.client.createTasks(QUEUE, [
		{ customer_message: 'pasted', resume_url: String(waited.data.resume_url) },
	]);
	await env.client.clearRequests();
	await complete(ids[0]);
	await until('the trigger execution', () => trigger.executions === 1);
	expect(trigger.emitted.map((t) => t.id)).toEqual([ids[0]]);
	expect(waiting.calls).toEqual([
		expect.objectContaining({
			executionId: '51',
			status: 200,
			body: { taken: [], others: [ids[0]], tasks: [waited.id] },
		}),
	]);
	// not one of the run's tasks: answered without reading the service
	expect((await env.client.requests()).filter((r) => r.path.endsWith('/tasks/completed'))).toEqual(
		[],
	);
	expect(waiting.resumed.size).toBe(0);
	await complete(waited.id);
	await until('the resume', () => waiting.resumed.has('51'));
	expect((waiting.resumed.get('51') as INodeExecutionData[][])[0].map((i) => i.json.id)).toEqual([
		waited.id,
	]);
	expect(trigger.executions).toBe(1);
});

test("a forged announcement (the trigger's secret and a finished run's address) naming other tasks hides none of them: each is emitted", async () => {
	await activateTrigger();
	const [waited] = await createAndWait('54', [{ message: 'done' }]);
	await complete(waited.id);
	await until('the resume', () => waiting.resumed.has('54'));
	const { ids } = await env.client.createTasks(QUEUE, [
		{ customer_message: 'ordinary 1' },
		{ customer_message: 'ordinary 2' },
	]);
	const forged = { taskQueueWaitingRun: { address: String(waited.data.resume_url), tasks: ids } };
	const { response } = await trigger.deliver({
		body: forged,
		query: { secret: trigger.secret() as string },
	});
	expect(response.statusCode).toBe(200);
	for (const id of ids) await complete(id);
	await until('two trigger executions', () => trigger.executions === 2);
	expect(trigger.emitted.map((t) => t.id)).toEqual(ids);
	expect(waiting.resumed.get('54')?.[0].map((i) => i.json.id)).toEqual([waited.id]);
});

test('a completion whose text only looks like an address, delivered while the queue cannot be read, is emitted by the next check', async () => {
	await activateTrigger();
	const { ids } = await env.client.createTasks(QUEUE, [
		{ customer_message: 'quoted: https://example.com/x?tq=0-1-1&q=104&t=1&signature=abc' },
	]);
	forgetAsAfterRestart(); // the queue's fields not read yet in this process
	await env.client.setFaults([{ route: 'getQueue', kind: 'html500', count: 1 }]);
	await complete(ids[0]);
	await env.client.waitForWebhookCalls(1);
	await env.client.clearFaults();
	// which field holds an address could not be told: not emitted yet, never lost
	expect(trigger.executions).toBe(0);
	const emitted = await trigger.reconcile();
	expect(emitted?.[0].map((item) => item.json.id)).toEqual(ids);
	expect(await trigger.reconcile()).toBeNull();
});

test('a completion that comes after the execution resumed (a re-completion) resumes nothing again, and is not emitted', async () => {
	await activateTrigger();
	const [waited] = await createAndWait('45', [{ message: 'once' }]);
	await complete(waited.id);
	await until('the resume', () => waiting.resumed.has('45'));
	await env.client.recomplete(waited.id);
	await until('the second call', () => waiting.calls.length === 2);
	expect(waiting.calls.map((c) => c.status)).toEqual([200, 200]);
	expect(waiting.calls[1].body).toBe(NO_ACTION_REQUIRED);
	// this process saw the run resume with the task: it was the run's, so it is not emitted either
	await new Promise((resolve) => setTimeout(resolve, 100));
	expect(trigger.executions).toBe(0);
});

test('Several People per Item: the copy still open when the run was decided is answered into nothing; not emitted, resumes nothing again', async () => {
	await activateTrigger();
	const tasks = await createAndWait('64', [{ message: 'two people' }], {
		severalPeople: { values: { people: 2, decideWhen: 'firstAnswer' } },
	});
	expect(tasks).toHaveLength(2);
	await complete(tasks[0].id);
	await until('the resume', () => waiting.resumed.has('64'));
	await complete(tasks[1].id, 'reject');
	await until('the log line', () =>
		infoLines().some((line) => line.includes(`task ${tasks[1].id} `)),
	);
	await new Promise((resolve) => setTimeout(resolve, 100));
	expect(waiting.resumes.get('64')).toBe(1);
	expect(trigger.executions).toBe(0);
});

/** The further task a run asked for (its third, address marked), once the service has it. */
async function furtherTask(executionId: string) {
	let found: Awaited<ReturnType<typeof env.client.tasks>>[number] | undefined;
	await until('the further task', async () => {
		found = (await env.client.tasks(QUEUE)).find(
			(t) =>
				String(t.data.resume_url).includes(`/${executionId}/`) &&
				String(t.data.resume_url).includes('#x=3.'),
		);
		return found !== undefined;
	});
	return found!;
}

describe('Several People per Item: a person changes their answer (a forced re-completion of their own task)', () => {
	const approval = {
		responseType: 'approval',
		approvalField: 'decision',
		approveOption: 'approve',
	};
	const twoMustApprove = {
		severalPeople: { values: { people: 2, decideWhen: 'allApprove', maxTasks: 2 } },
	};

	test("before the item is decided, the task's latest answer counts: an approval changed to a rejection rejects the item at once", async () => {
		await activateTrigger();
		const tasks = await createAndWait('68', [{ message: 'refund 900' }], twoMustApprove, approval);
		await complete(tasks[0].id, 'approve');
		await until('the first call', () => waiting.calls.some((c) => c.executionId === '68'));
		expect(waiting.resumed.has('68')).toBe(false);
		await env.client.recomplete(tasks[0].id, { data: { decision: 'reject' } });
		await until('the resume', () => waiting.resumed.has('68'));
		const [items] = waiting.resumed.get('68') as INodeExecutionData[][];
		expect(items[0].json).toMatchObject({ approved: false });
		expect(items[0].json.people).toMatchObject({
			decision: 'rejected',
			approvals: 0,
			answers: [{ taskId: tasks[0].id, by: 'alice@example.com', vote: 'reject', counted: true }],
		});
		expect(waiting.resumes.get('68')).toBe(1);
		expect(trigger.executions).toBe(0);
	});

	test('after the item is decided, a changed answer changes nothing: no second resume, not emitted', async () => {
		await activateTrigger();
		const tasks = await createAndWait('69', [{ message: 'refund 900' }], twoMustApprove, approval);
		await complete(tasks[0].id, 'approve');
		await env.client.complete(QUEUE, tasks[1].id, {
			by: 'bob@example.com',
			data: { decision: 'approve' },
		});
		await until('the resume', () => waiting.resumed.has('69'));
		const calls = waiting.calls.length;
		await env.client.recomplete(tasks[0].id, { data: { decision: 'reject' } });
		await until('the call after it', () => waiting.calls.length > calls);
		await new Promise((resolve) => setTimeout(resolve, 100));
		expect(waiting.resumes.get('69')).toBe(1);
		const [items] = waiting.resumed.get('69') as INodeExecutionData[][];
		expect(items[0].json).toMatchObject({ approved: true });
		expect(trigger.executions).toBe(0);
	});
});

test("Several People per Item asking again: the further task's marked address reaches the run through the trigger, which emits nothing", async () => {
	await activateTrigger();
	const tasks = await createAndWait('65', [{ message: 'two people' }], {
		severalPeople: { values: { people: 2, decideWhen: 'collectAll', maxTasks: 3 } },
	});
	await complete(tasks[0].id);
	await complete(tasks[1].id); // the same person: the run asks again
	const third = await furtherTask('65');
	await env.client.complete(QUEUE, third.id, {
		by: 'bob@example.com',
		data: { decision: 'approve' },
	});
	await until('the resume', () => waiting.resumed.has('65'));
	expect(waiting.resumes.get('65')).toBe(1);
	const [items] = waiting.resumed.get('65') ?? [[]];
	expect(items[0].json.people).toMatchObject({ decision: 'collected', counted: 2 });
	// the call went to the address without its mark (n8n never sees the part after #)
	await new Promise((resolve) => setTimeout(resolve, 100));
	expect(trigger.executions).toBe(0);
});

test("a run this process knows by its address for another of its queues (an escalation level's, from its answer there): a completion of its own queue still reaches it, not emitted (issue 60: after a level task's completion, a level-0 answer was emitted and never reached the run)", async () => {
	await activateTrigger();
	const tasks = await createAndWait('79', [{ message: 'escalates' }], {
		severalPeople: { values: { people: 2, decideWhen: 'collectAll' } },
	});
	const address = String(tasks[0].data.resume_url);
	const execution = /\/webhook-waiting\/(79\/[^/?]+)/.exec(address)![1];
	const levelAddress = address.replace(`&q=${QUEUE}`, '&q=107');
	rememberRun(levelAddress, execution, tasks.map((t) => t.id), 'answer');
	await complete(tasks[0].id);
	await until('the run answered', () =>
		waiting.calls.some((c) => c.executionId === '79' && c.status === 202),
	);
	await complete(tasks[1].id);
	await until('the resume', () => waiting.resumed.has('79'));
	expect(waiting.resumes.get('79')).toBe(1);
	expect(trigger.executions).toBe(0);
});

test("a finished run's further-task address, mark included, typed over an ordinary task: the ordinary completion is emitted, as a copy of its plain address is (issue 60)", async () => {
	await activateTrigger();
	const tasks = await createAndWait('67', [{ message: 'two people' }], {
		severalPeople: { values: { people: 2, decideWhen: 'collectAll', maxTasks: 3 } },
	});
	await complete(tasks[0].id);
	await complete(tasks[1].id); // the same person: the run asks again
	const third = await furtherTask('67');
	await env.client.complete(QUEUE, third.id, { by: 'bob@example.com', data: {} });
	await until('the resume', () => waiting.resumed.has('67'));
	const marked = String(third.data.resume_url);
	const { ids } = await env.client.createTasks(QUEUE, [
		{ customer_message: 'Taxi', resume_url: marked },
		{ customer_message: 'Taxi', resume_url: marked.replace(/#.*$/, '') },
	]);
	for (const id of ids) await complete(id);
	await until('both emitted', () => trigger.executions === 2);
	expect(trigger.emitted.map((t) => t.id)).toEqual(ids);
	expect(waiting.resumes.get('67')).toBe(1);
});

test("a further task's answer the run used is not emitted, also after a later call of the run that did not name it (real server F4)", async () => {
	await activateTrigger();
	const tasks = await createAndWait('66', [{ message: 'two people' }], {
		severalPeople: { values: { people: 2, decideWhen: 'collectAll', maxTasks: 3 } },
	});
	await complete(tasks[0].id);
	await complete(tasks[1].id); // the same person: the run asks again
	const third = await furtherTask('66');
	// a later call of the run before the further task is answered (the second delivery again): the
	// run answers with the tasks its read found, the further one not among them
	const second = (await env.client.tasks(QUEUE)).find(
		(t) => t.id === tasks[1].id,
	) as unknown as IDataObject;
	const callsBefore = waiting.calls.length;
	await trigger.deliver({ body: second, query: { secret: trigger.secret() as string } });
	await until('the later call', () => waiting.calls.length > callsBefore);
	await env.client.complete(QUEUE, third.id, {
		by: 'bob@example.com',
		data: { decision: 'approve' },
	});
	await until('the resume', () => waiting.resumed.has('66'));
	await until(
		'the trigger settled the further task',
		() => infoLines().some((line) => line.includes(`task ${third.id} `)) || trigger.executions > 0,
	);
	await new Promise((resolve) => setTimeout(resolve, 200));
	const [items] = waiting.resumed.get('66') ?? [[]];
	expect(items[0].json).toMatchObject({ people: { decision: 'collected', counted: 2 } });
	expect(waiting.resumes.get('66')).toBe(1);
	expect(trigger.executions).toBe(0);
});

test('a completion that reaches a finished execution (its wait timed out) is logged as such, not emitted', async () => {
	await activateTrigger();
	const [waited] = await createAndWait('52', [{ message: 'late' }]);
	forgetAsAfterRestart(); // also when this process does not know the run
	waiting.resumed.set('52', []); // n8n ended the wait on its limit: the node never answered
	await complete(waited.id);
	await until('the log line', () =>
		infoLines().some((line) => line.includes(`task ${waited.id} `)),
	);
	expect(infoLines().filter((line) => line.includes(`task ${waited.id} `))).toEqual([
		`Task Queue: completion of task ${waited.id} not taken by execution 52: the execution has finished (it resumed, or its wait timed out; HTTP 200)`,
	]);
	expect(trigger.executions).toBe(0);
});

test('the service cannot be read when the waiting node confirms: the trigger calls again after a pause, and the execution resumes', async () => {
	await activateTrigger();
	const [waited] = await createAndWait('49', [{ message: 'blip' }]);
	await env.client.setFaults([{ route: 'completed', kind: 'html500', count: 1 }]);
	await complete(waited.id);
	await until('the resume', () => waiting.resumed.has('49'), 10_000);
	expect(waiting.calls.map((c) => c.status)).toEqual([503, 200]);
	expect(
		(waiting.resumed.get('49') as INodeExecutionData[][])[0].map((i) => [i.json.id, i.pairedItem]),
	).toEqual([[waited.id, { item: 0 }]]);
	// this run's lines (task ids start again at 1000 after each reset, and an earlier test's retry
	// may still log under load: "execution 69" beside a loaded CI)
	const own = infoLines().filter(
		(l) => l.includes(`task ${waited.id} `) && l.includes('execution 49'),
	);
	expect(own).toEqual([
		`Task Queue: completion of task ${waited.id} not taken by execution 49 yet; trying again`,
	]);
	// the delivery was held while the trigger tried again, and then answered 200
	await until(
		'the delivery answered',
		async () => (await env.client.webhookCalls())[0]?.status !== null,
	);
	expect((await env.client.webhookCalls()).map((c) => c.status)).toEqual([200]);
	expect(trigger.executions).toBe(0);
});

test('the service stays unreadable: after its last try the trigger says so, and its next check for lost completions resumes the execution', async () => {
	const delays = FORWARD_RETRY_DELAYS_MS.splice(0, FORWARD_RETRY_DELAYS_MS.length, 10, 10);
	try {
		await activateTrigger();
		const [waited] = await createAndWait('50', [{ message: 'outage' }]);
		await env.client.setFaults([{ route: 'completed', kind: 'html500' }]);
		await complete(waited.id);
		await until('the last try', () =>
			warnLines().some((line) => line.includes(`task ${waited.id} `)),
		);
		expect(waiting.calls.map((c) => c.status)).toEqual([503, 503, 503]);
		expect(warnLines().filter((line) => line.includes(`task ${waited.id} `))).toEqual([
			`Task Queue: completion of task ${waited.id} not taken by execution 50 yet; the execution keeps waiting, and the Task Queue Trigger's check for lost completions passes it on again`,
		]);
		expect(waiting.resumed.has('50')).toBe(false);
		await env.client.clearFaults();
		expect(await trigger.reconcile()).toBeNull();
		expect(waiting.resumed.has('50')).toBe(true);
		expect(waiting.calls.map((c) => c.status)).toEqual([503, 503, 503, 200]);
		expect(trigger.executions).toBe(0);
	} finally {
		FORWARD_RETRY_DELAYS_MS.splice(0, FORWARD_RETRY_DELAYS_MS.length, ...delays);
	}
});

test('catch-up: a completion whose delivery was lost is forwarded with the next delivery', async () => {
	await activateTrigger({ catchUp: true });
	const [first, second] = await createAndWait('46', [
		{ message: 'lost' },
		{ message: 'delivered' },
	]);
	await env.client.setFaults([{ webhook: 'drop', count: 1 }]);
	await complete(first.id);
	await env.client.waitForWebhookCalls(1);
	expect(waiting.calls).toEqual([]);
	await complete(second.id);
	await until('the resume', () => waiting.resumed.has('46'));
	expect((waiting.resumed.get('46') as INodeExecutionData[][])[0].map((i) => i.json.id)).toEqual([
		first.id,
		second.id,
	]);
	expect(trigger.executions).toBe(0);
});

test('the Poll Trigger forwards what it finds and emits only the other completions', async () => {
	trigger = new WebhookTriggerUnderTest({ credentials: env.credentials(), parameters: {} });
	server = await startWebhookServer(trigger, waiting);
	const poll = new PollTriggerUnderTest({
		credentials: env.credentials(),
		parameters: { queue: locator(QUEUE), options: {} },
	});
	poll.webhookWaitingBaseUrl = server.waitingBaseUrl;
	expect(await poll.poll()).toBeNull(); // the first poll sets its starting point
	const [waited] = await createAndWait('47', [{ message: 'mine' }], { routeBack: 'pollTrigger' });
	const { ids } = await env.client.createTasks(QUEUE, [{ customer_message: 'plain' }]);
	await complete(waited.id);
	await complete(ids[0]);
	const emitted = await poll.poll();
	expect(emitted?.[0].map((i) => i.json.id)).toEqual([ids[0]]);
	expect(waiting.resumed.has('47')).toBe(true);
	// the next poll finds nothing new and calls nothing
	expect(await poll.poll()).toBeNull();
	expect(waiting.calls).toHaveLength(1);
});

/**
 * Three runs on the queue, `executions` in order: the first two keep its confirming index busy, the
 * third's answer is completed first and committed (listed, delivered) only when the test says
 * (commitHeld), 2 s and 152 completions below what the index has read by then.
 */
async function lateAnswerBelowAPage(executions: [string, string, string]) {
	const [first] = await createAndWait(executions[0], [{ message: 'first' }]);
	const [second] = await createAndWait(executions[1], [{ message: 'second' }]);
	const [late] = await createAndWait(executions[2], [{ message: 'late' }]);
	const t0 = Date.parse(late.created_at);
	const at = (ms: number) => new Date(t0 + ms).toISOString();
	await env.client.complete(QUEUE, late.id, {
		by: 'alice@example.com',
		data: { decision: 'approve' },
		completedAt: at(10),
		commitAfterMs: -1,
	});
	// 150 completions after it, 2 s later by their dates, listed at once
	const { ids } = await env.client.createTasks(QUEUE, 150);
	for (const id of ids)
		await env.client.complete(QUEUE, id, { by: 'bob@example.com', completedAt: at(2000) });
	// each of the other two runs' answers makes the index read the list: the first down to its
	// tasks (two pages), the second one page from the top
	for (const [i, task] of [first, second].entries()) {
		await env.client.complete(QUEUE, task.id, {
			by: 'bob@example.com',
			data: { decision: 'approve' },
			completedAt: at(3000 + i * 100),
		});
		await until(`run ${executions[i]}`, () => waiting.resumed.has(executions[i]), 60_000);
	}
	return { late, others: ids };
}

test("a late commit (issue 59): a run's answer becomes visible below more than a page of later completions its queue's confirming index has read: its delivery's claim is looked up, and the run resumes once with it", async () => {
	await activateTrigger();
	const { late, others } = await lateAnswerBelowAPage(['61', '62', '63']);
	// now the late one is listed, 152 completions down, 2 s and more below the index's last read
	expect(await env.client.commitHeld()).toBe(1);
	await until('the late run', () => waiting.resumed.has('63'), 60_000);
	const [items] = waiting.resumed.get('63') as INodeExecutionData[][];
	expect(items.map((i) => [i.json.id, i.json.completed_by, i.pairedItem])).toEqual([
		[late.id, 'alice@example.com', { item: 0 }],
	]);
	expect(waiting.calls.filter((c) => c.executionId === '63').map((c) => c.status)).toEqual([200]);
	expect(trigger.emitted.map((t) => Number(t.id)).sort((x, y) => x - y)).toEqual(others);
}, 120_000);

test('a late commit whose delivery is lost, and a call that names nothing (issue 59): the confirming read is a consumer of the one reader, its window finds the answer within one late-commit window', async () => {
	await activateTrigger();
	const { late } = await lateAnswerBelowAPage(['66', '68', '67']);
	// the late answer becomes visible 153 completions down; its delivery is lost, no claim comes
	await env.client.setFaults([{ webhook: 'drop', count: 1 }]);
	expect(await env.client.commitHeld()).toBe(1);
	await env.client.waitForWebhookCalls(153);
	expect(waiting.calls.filter((c) => c.executionId === '67')).toEqual([]);
	// a call naming no task, once a second: the reads after the reader's window (10 s) go down to it
	const address = String(late.data.resume_url);
	const started = Date.now();
	while (!waiting.resumed.has('67') && Date.now() - started < 30_000) {
		await waiting.handle(address, undefined, {});
		await new Promise((resolve) => setTimeout(resolve, 1000));
	}
	expect(waiting.resumed.has('67')).toBe(true);
	const [items] = waiting.resumed.get('67') as INodeExecutionData[][];
	expect(items.map((i) => [i.json.id, i.json.completed_by, i.pairedItem])).toEqual([
		[late.id, 'alice@example.com', { item: 0 }],
	]);
	expect(waiting.resumes.get('67')).toBe(1);
}, 120_000);

test('a burst of completions of one run: calls to the waiting execution one at a time, coalesced, and it resumes exactly once', async () => {
	await activateTrigger();
	await createAndWait(
		'48',
		Array.from({ length: 30 }, (_, i) => ({ message: `m${i}` })),
	);
	await env.client.clearRequests();
	await env.client.completeMany(QUEUE, 30, { by: 'alice@example.com' });
	await env.client.waitForWebhookCalls(30);
	await until('the resume', () => waiting.resumed.has('48'));
	const resumes = waiting.calls.filter(
		(c) => (c.body as IDataObject).message === 'Workflow was started',
	);
	expect(resumes).toHaveLength(1);
	const [items] = waiting.resumed.get('48') as INodeExecutionData[][];
	expect(items.map((i) => [(i.json.data as IDataObject).customer_message, i.pairedItem])).toEqual(
		Array.from({ length: 30 }, (_, item) => [`m${item}`, { item }]),
	);
	// fewer calls (and reads of the service) than completions; every delivery answered 200
	expect(waiting.calls.length).toBeLessThan(30);
	expect(
		(await env.client.requests()).filter((r) => r.path.endsWith('/tasks/completed')).length,
	).toBe(waiting.calls.filter((c) => c.status !== 200 || c.body !== NO_ACTION_REQUIRED).length);
	expect((await env.client.webhookCalls()).every((c) => c.status === 200)).toBe(true);
	expect(trigger.executions).toBe(0);
});

describe('Several People per Item with Limit Wait Time: at the deadline the run goes on with the answers so far (trigger/relay/deadlines.ts)', () => {
	const BOB = 'bob@example.com';
	/** Two people must approve; the deadline `seconds` after the run starts to wait. */
	const twoPeople = (seconds: number, maxTasks = 2) => ({
		severalPeople: { values: { people: 2, decideWhen: 'allApprove', maxTasks } },
		limitWaitTime: {
			values: { limitType: 'afterTimeInterval', resumeAmount: seconds / 60, resumeUnit: 'minutes' },
		},
	});
	const approval = {
		responseType: 'approval',
		approvalField: 'decision',
		approveOption: 'approve',
	};
	const deadlineOf = (executionId: string) =>
		(waiting.runs.get(executionId)?.run.waitTill as Date).getTime() - 5 * 60_000;
	// The deadline comes by moving this process's clock (Date.now: the node, the trigger, n8n's
	// waiting stand-in and the sandbox read it), not by waiting for it: the same instants, no real wait.
	const realNow = Date.now.bind(Date);
	let shiftMs = 0;
	let clock: jest.SpyInstance<number, []>;
	beforeEach(() => {
		shiftMs = 0;
		clock = jest.spyOn(Date, 'now').mockImplementation(() => realNow() + shiftMs);
	});
	afterEach(() => clock.mockRestore());
	const pastDeadline = (executionId: string) => {
		shiftMs += Math.max(0, deadlineOf(executionId) - Date.now() + 50);
	};
	test("one approval of two, then the deadline: the trigger's check wakes the run, which resumes once with Alice's answer, wait.outcome timedOut and people.decision timedOut", async () => {
		await activateTrigger();
		const started = Date.now();
		const tasks = await createAndWait('70', [{ message: 'refund 900' }], twoPeople(8), approval);
		// n8n's own limit is 5 minutes after the deadline: the fallback when nothing wakes the run
		const waitTill = (waiting.runs.get('70')?.run.waitTill as Date).getTime();
		expect(waitTill - started).toBeGreaterThanOrEqual(8_000 + 5 * 60_000 - 50);
		expect(waitTill - started).toBeLessThan(8_000 + 5 * 60_000 + 2_000);
		await complete(tasks[0].id);
		await until('the run answered the delivery', () =>
			waiting.calls.some((c) => c.executionId === '70' && c.status === 202),
		);
		const stillWaiting = waiting.calls.find((c) => c.executionId === '70' && c.status === 202);
		expect(stillWaiting?.body).toMatchObject({ waiting: true, deadline: deadlineOf('70') });
		// before the deadline, a check wakes nothing
		const callsBefore = waiting.calls.length;
		await trigger.reconcile();
		expect(waiting.calls.slice(callsBefore).filter((c) => c.executionId === '70')).toEqual([]);
		pastDeadline('70');
		expect(await trigger.reconcile()).toBeNull();
		expect(waiting.resumes.get('70')).toBe(1);
		const [items] = waiting.resumed.get('70') as INodeExecutionData[][];
		expect(items).toHaveLength(1);
		expect(items[0].pairedItem).toEqual({ item: 0 });
		expect(items[0].json).toMatchObject({
			approved: false,
			chatInput: 'Not approved: the time ran out (1 of 2 needed answers counted)',
			tasks: [tasks[0].id, tasks[1].id],
			wait: { outcome: 'timedOut', completed: 0, of: 1 },
		});
		expect(items[0].json.people).toMatchObject({
			rule: 'allApprove',
			decision: 'timedOut',
			needed: 2,
			counted: 1,
			approvals: 1,
			missing: 1,
			answers: [{ taskId: tasks[0].id, by: 'alice@example.com', vote: 'approve', counted: true }],
		});
		expect(infoLines()).toContain(
			'Task Queue Trigger: execution 70 reached its deadline; the check woke it and it went on with the answers so far',
		);
		// the wake-up named no task: it only woke the run
		const wake = waiting.calls.filter((c) => c.executionId === '70').at(-1);
		expect(wake?.status).toBe(200);
		// Bob's answer after the deadline resumes nothing and is not emitted
		await env.client.complete(QUEUE, tasks[1].id, { by: BOB, data: { decision: 'approve' } });
		await until('the log line', () =>
			infoLines().some((line) => line.includes(`task ${tasks[1].id} `)),
		);
		await trigger.reconcile();
		expect(waiting.resumes.get('70')).toBe(1);
		expect(trigger.executions).toBe(0);
	});

	test('nobody answered: the run is known from its signed announcement and goes on at its deadline with no answer, timed out', async () => {
		await activateTrigger();
		const tasks = await createAndWait(
			'71',
			[{ message: 'a' }, { message: 'b' }],
			twoPeople(1),
			approval,
		);
		pastDeadline('71');
		await trigger.reconcile();
		expect(waiting.resumes.get('71')).toBe(1);
		const [items] = waiting.resumed.get('71') as INodeExecutionData[][];
		expect(items.map((i) => [i.pairedItem, (i.json.wait as IDataObject).outcome])).toEqual([
			[{ item: 0 }, 'timedOut'],
			[{ item: 1 }, 'timedOut'],
		]);
		expect(items.map((i) => (i.json.people as IDataObject).answers)).toEqual([[], []]);
		expect(items.map((i) => i.json.tasks)).toEqual([
			[tasks[0].id, tasks[1].id],
			[tasks[2].id, tasks[3].id],
		]);
		// nothing left to wake: the next check calls nothing
		const calls = waiting.calls.length;
		await trigger.reconcile();
		expect(waiting.calls.length).toBe(calls);
	});

	test("the run announces itself before n8n has saved the trigger's activation (real server: a trigger published a second before the run was refused, and the check crawled the backlog not knowing the run): the secret the trigger signed lets the announcement in, and the run goes on at its deadline", async () => {
		await activateTrigger();
		const saved = trigger.db;
		trigger.db = {};
		await createAndWait('74', [{ message: 'announced early' }], twoPeople(1), approval);
		trigger.db = saved;
		expect(runsToWake(QUEUE)).toEqual([
			{ url: expect.stringContaining('/74/'), at: deadlineOf('74') },
		]);
		pastDeadline('74');
		await trigger.reconcile();
		expect(waiting.resumes.get('74')).toBe(1);
		const [items] = waiting.resumed.get('74') as INodeExecutionData[][];
		expect(items[0].json.wait).toMatchObject({ outcome: 'timedOut' });
	});

	test('nobody answered, and n8n restarted right after the run announced itself, before any check round (issue 60): the announcement is in static data, the first check after the restart wakes the run at its deadline; a record listing it drops it from there', async () => {
		await activateTrigger();
		await createAndWait('76', [{ message: 'restart at once' }], twoPeople(2), approval);
		await Promise.all([...trigger.inFlight]); // n8n saves static data after it answered
		const [announced] = runsToWake(QUEUE);
		expect(trigger.state().announcements).toEqual([announced]);
		forgetAsAfterRestart();
		forgetDeadline(/\/(76\/[^/?]+)/.exec(announced.url)![1]);
		await trigger.reconcile();
		expect(runsToWake(QUEUE)).toEqual([announced]);
		expect((trigger.state().lostCompletionCheck as IDataObject).wake).toEqual([announced]);
		expect(trigger.state().announcements).toEqual([]);
		pastDeadline('76');
		await trigger.reconcile();
		expect(waiting.resumes.get('76')).toBe(1);
		const [items] = waiting.resumed.get('76') as INodeExecutionData[][];
		expect(items[0].json.wait).toMatchObject({ outcome: 'timedOut' });
	});

	test("queue mode: a webhook process restarted after a run's announcement reached it, before the main's check asked it (issue 60): the record call answers it from static data, and the run goes on at its deadline", async () => {
		await activateTrigger();
		await createAndWait('77', [{ message: 'announced elsewhere' }], twoPeople(2), approval);
		await Promise.all([...trigger.inFlight]); // n8n saves static data after it answered
		const [announced] = runsToWake(QUEUE);
		// the main never heard of it, and the webhook process it reached restarted
		forgetDeadline(/\/(77\/[^/?]+)/.exec(announced.url)![1]);
		takeAnnounced(QUEUE, {});
		await trigger.reconcile();
		expect(runsToWake(QUEUE)).toEqual([announced]);
		pastDeadline('77');
		await trigger.reconcile();
		expect(waiting.resumes.get('77')).toBe(1);
	});

	test("queue mode: nobody answered, and the run's announcement reached a webhook process, not the main that runs the check: the check's record call takes the run from there, and the run goes on at its deadline", async () => {
		await activateTrigger();
		await createAndWait('73', [{ message: 'announced elsewhere' }], twoPeople(2), approval);
		// the main's check never heard of the run: only the process the announcement reached did
		const [announced] = runsToWake(QUEUE);
		forgetDeadline(/\/(73\/[^/?]+)/.exec(announced.url)![1]);
		expect(runsToWake(QUEUE)).toEqual([]);
		await trigger.reconcile();
		expect(runsToWake(QUEUE)).toEqual([announced]);
		// and written into the check's record in the same round: known after a restart of the main
		expect((trigger.state().lostCompletionCheck as IDataObject).wake).toEqual([announced]);
		expect(waiting.resumed.has('73')).toBe(false);
		pastDeadline('73');
		await trigger.reconcile();
		expect(waiting.resumes.get('73')).toBe(1);
		const [items] = waiting.resumed.get('73') as INodeExecutionData[][];
		expect(items[0].json.wait).toMatchObject({ outcome: 'timedOut' });
		// taken once: the next round's call hands over nothing, and nothing more is called
		const calls = waiting.calls.length;
		await trigger.reconcile();
		expect(runsToWake(QUEUE)).toEqual([]);
		expect(waiting.calls.length).toBe(calls);
	});

	test("n8n restarts while a run nobody answered waits: the check's record kept its deadline, and the first check after it wakes the run", async () => {
		await activateTrigger();
		await createAndWait('75', [{ message: 'restart' }], twoPeople(6), approval);
		// a round records the run to wake with where the check stands (the trigger's static data)
		await trigger.reconcile();
		const stored = trigger.state().lostCompletionCheck as IDataObject;
		expect(stored.wake).toEqual([{ url: expect.stringContaining('/75/'), at: deadlineOf('75') }]);
		forgetAsAfterRestart();
		pastDeadline('75');
		await trigger.reconcile();
		expect(waiting.resumes.get('75')).toBe(1);
		const [items] = waiting.resumed.get('75') as INodeExecutionData[][];
		expect(items[0].json.wait).toMatchObject({ outcome: 'timedOut' });
		// woken, it is no longer listed
		await trigger.reconcile();
		expect((trigger.state().lostCompletionCheck as IDataObject).wake).toBeUndefined();
	});

	test("a person pastes the run's address into another task: its completion, not the run's, leaves the run's deadline known, and the run is woken at it", async () => {
		await activateTrigger();
		const tasks = await createAndWait('76', [{ message: 'pasted' }], twoPeople(1), approval);
		const { ids } = await env.client.createTasks(QUEUE, [
			{ customer_message: 'another request', resume_url: String(tasks[0].data.resume_url) },
		]);
		await complete(ids[0]);
		await until('the trigger emitted it', () => trigger.executions === 1);
		pastDeadline('76');
		await trigger.reconcile();
		expect(waiting.resumes.get('76')).toBe(1);
		const [items] = waiting.resumed.get('76') as INodeExecutionData[][];
		expect(items[0].json.wait).toMatchObject({ outcome: 'timedOut' });
		expect((items[0].json.people as IDataObject).answers).toEqual([]);
	});

	test("a call before the deadline changes nothing, and a deadline announced by a holder of the trigger's secret moves nothing", async () => {
		await activateTrigger();
		const tasks = await createAndWait('72', [{ message: 'not yet' }], twoPeople(60), approval);
		const address = String(tasks[0].data.resume_url);
		// anybody who reads the task can call its address: before the deadline the run keeps waiting
		const early = await waiting.handle(address, undefined, { tasks: [] });
		expect(early.status).toBe(202);
		expect(early.body).toMatchObject({ waiting: true, completed: 0, of: 1 });
		// an unsigned announcement saying the deadline has passed: not the run's word, nothing is woken
		const forged = {
			taskQueueWaitingRun: { address, tasks: [tasks[0].id], deadline: Date.now() - 60_000 },
		};
		const { response } = await trigger.deliver({
			body: forged,
			query: { secret: trigger.secret() as string },
		});
		expect(response.statusCode).toBe(200);
		const calls = waiting.calls.length;
		await trigger.reconcile();
		expect(waiting.calls.length).toBe(calls);
		expect(waiting.resumed.has('72')).toBe(false);
	});

	test('both answers lost on their way, by the same person, and n8n restarted: the first check after the deadline passes them on, the run goes on timed out with both kept and asks for no further task', async () => {
		await activateTrigger();
		const tasks = await createAndWait('73', [{ message: 'restart' }], twoPeople(1, 3), approval);
		await env.client.setFaults([{ webhook: 'drop', count: 2 }]);
		await complete(tasks[0].id);
		await complete(tasks[1].id);
		await env.client.clearFaults();
		pastDeadline('73');
		forgetAsAfterRestart();
		await trigger.reconcile();
		expect(waiting.resumes.get('73')).toBe(1);
		const [items] = waiting.resumed.get('73') as INodeExecutionData[][];
		expect(items[0].json.wait).toMatchObject({ outcome: 'timedOut' });
		expect(items[0].json.people).toMatchObject({
			decision: 'timedOut',
			counted: 1,
			answers: [
				{ taskId: tasks[0].id, by: 'alice@example.com', counted: true },
				{ taskId: tasks[1].id, by: 'alice@example.com', counted: false, reason: 'samePerson' },
			],
		});
		// past its deadline the run does not ask again: the queue has the run's two tasks only
		const all = (await env.client.tasks(QUEUE)).filter((t) =>
			String(t.data.resume_url).includes('/73/'),
		);
		expect(all.map((t) => t.id)).toEqual([tasks[0].id, tasks[1].id]);
		expect(trigger.executions).toBe(0);
	});

	test("asked again, then n8n restarts while the further task is open (issue 60): the check's record keeps the run's signed list of its own tasks, the first wake after the restart hands it back, and the run's output lists the open task", async () => {
		await activateTrigger();
		const tasks = await createAndWait('78', [{ message: 'restart' }], twoPeople(8, 3), approval);
		await complete(tasks[0].id);
		await complete(tasks[1].id); // the same person: the run asks again
		const third = await furtherTask('78');
		await until('the run answered with its own tasks', () =>
			waiting.calls.some((c) => c.executionId === '78' && (c.body as IDataObject)?.own),
		);
		await trigger.reconcile();
		const stored = trigger.state().lostCompletionCheck as IDataObject;
		expect(stored.wake).toEqual([
			{
				url: expect.stringContaining('/78/'),
				at: deadlineOf('78'),
				own: expect.stringMatching(new RegExp(`^${third.id}\\.0\\.3~[0-9a-f]{32}$`)),
			},
		]);
		forgetAsAfterRestart();
		pastDeadline('78');
		await trigger.reconcile();
		expect(waiting.resumes.get('78')).toBe(1);
		const [items] = waiting.resumed.get('78') as INodeExecutionData[][];
		expect(items[0].json).toMatchObject({
			tasks: [tasks[0].id, tasks[1].id, third.id],
			wait: { outcome: 'timedOut' },
		});
		// the wake handed the list back: nothing asked again
		const all = (await env.client.tasks(QUEUE)).filter((t) =>
			String(t.data.resume_url).includes('/78/'),
		);
		expect(all).toHaveLength(3);
	});

	test("a run with no deadline that asked again keeps its list with the trigger, which calls it hourly (issue 60): while it waits the call hands the list back and it is kept another hour; once the run has ended elsewhere, the call forgets it", async () => {
		await activateTrigger();
		const tasks = await createAndWait('80', [{ message: 'no deadline' }], {
			severalPeople: { values: { people: 2, decideWhen: 'collectAll', maxTasks: 3 } },
		});
		await complete(tasks[0].id);
		await complete(tasks[1].id); // the same person: the run asks again
		const third = await furtherTask('80');
		await until('the run answered with its own tasks', () =>
			waiting.calls.some((c) => c.executionId === '80' && (c.body as IDataObject)?.own),
		);
		const [kept] = runsToWake(QUEUE);
		expect(kept).toEqual({
			url: expect.stringContaining('/80/'),
			at: expect.any(Number),
			own: expect.stringMatching(new RegExp(`^${third.id}\\.0\\.3~[0-9a-f]{32}$`)),
		});
		expect(kept.at - Date.now()).toBeGreaterThan(3_500_000);
		// a round first (it passes the run's two completions on once more: the check's first round)
		await trigger.reconcile();
		const calls = waiting.calls.length;
		shiftMs += 3_601_000;
		await trigger.reconcile();
		const woken = waiting.calls.slice(calls).filter((c) => c.executionId === '80');
		expect(woken.map((c) => [c.status, (c.body as IDataObject).own])).toEqual([[202, kept.own]]);
		expect(runsToWake(QUEUE)[0].at - Date.now()).toBeGreaterThan(3_500_000);
		// the run ended elsewhere (in queue mode, through another process): the next call forgets it
		waiting.resumed.set('80', [[]]);
		shiftMs += 3_601_000;
		await trigger.reconcile();
		expect(runsToWake(QUEUE)).toEqual([]);
		expect(trigger.executions).toBe(0);
	});

	test("one person per item keeps n8n's own limit: no deadline of its own, the input goes on at the limit", async () => {
		await activateTrigger();
		const started = Date.now();
		await createAndWait('74', [{ message: 'one person' }], {
			limitWaitTime: twoPeople(60).limitWaitTime,
		});
		const waitTill = (waiting.runs.get('74')?.run.waitTill as Date).getTime();
		expect(waitTill - started).toBeGreaterThanOrEqual(60_000 - 50);
		expect(waitTill - started).toBeLessThan(62_000);
	});
});

test('block ids that are numbers (a queue made through the API): the trigger finds the address in field "1" and the run resumes once; a task with no address is emitted', async () => {
	const queue = await env.client.createQueue({
		name: 'Numbered fields',
		blocks: [
			{ id: 1, name: 'Link', type: 'text', text: { read_only: true } },
			{ id: 3, name: 'Request', type: 'text', text: { read_only: true } },
		],
	} as never);
	triggerCredentials = env.credentials();
	trigger = new WebhookTriggerUnderTest({
		credentials: triggerCredentials,
		parameters: { event: 'taskCompleted', queue: locator(queue.id), options: {} },
	});
	server = await startWebhookServer(trigger, waiting);
	await trigger.activate();
	const run = await runActionNode({
		types: { taskQueue: node },
		node: {
			type: 'taskQueue',
			parameters: {
				resource: 'task',
				operation: 'sendAndWait',
				queue: locator(queue.id),
				taskData: {
					mappingMode: 'defineBelow',
					value: { 3: 'Refund' },
					matchingColumns: [],
					schema: [],
				},
				resumeField: '1',
				options: {},
			},
		},
		input: [{}],
		credentials: env.credentials(),
		executionId: 'numbered',
		additionalData: { webhookWaitingBaseUrl: server.waitingBaseUrl },
	});
	expect(run.error).toBeUndefined();
	waiting.add('numbered', run);
	const [task] = await env.client.tasks(queue.id);
	await env.client.complete(queue.id, task.id, { by: 'alice@example.com' });
	await env.client.waitForWebhookCalls(1);
	await until('the resume', () => waiting.resumed.has('numbered'));
	expect(waiting.resumes.get('numbered')).toBe(1);
	const { ids } = await env.client.createTasks(queue.id, [{ 3: 'plain task' }]);
	await env.client.complete(queue.id, ids[0], { by: 'alice@example.com' });
	await env.client.waitForWebhookCalls(2);
	await until('the plain task emitted', () => trigger.emitted.length === 1);
	expect(trigger.emitted.map((t) => t.id)).toEqual(ids);
});
