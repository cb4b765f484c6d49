import { WAIT_INDEFINITELY, type IDataObject, type INodeExecutionData } from 'n8n-workflow';

import { runActionNode } from '../../../../helpers/n8n';
import { callWaitingNode, n8nAcceptsSignature, queryOf } from '../../../../helpers/waiting';
import { locator, node, reviewTool, startEnv, type TestEnv } from '../../env';
import { forgetAsAfterRestart } from '../../../../../nodes/TaskQueue/runtime/processMemory';
import { addressTag } from '../../../../../nodes/TaskQueue/waiting/messages';

let env: TestEnv;
beforeAll(async () => (env = await startEnv()));
afterAll(async () => await env.close());
beforeEach(async () => {
	forgetAsAfterRestart();
	await env.client.reset();
	await env.client.setWebhook(104, TRIGGER_OF_THIS_N8N);
	await env.client.setWebhook(105, TRIGGER_OF_THIS_N8N);
	await env.client.clearRequests();
});

const KEY_HEADER = 'Token tqs_sandbox_2f8a61c4e9d07b35';
/** The production address of a Task Queue Trigger of the n8n the tests run in (localhost:5678). */
const TRIGGER_OF_THIS_N8N =
	'http://localhost:5678/webhook/6f1c2b0e-4d7a-4e8b-9a51-0c3d2e1f4a5b/task-completed?secret=s3cret';
const ADDRESS =
	/^http:\/\/localhost:5678\/webhook-waiting\/(exec-\d+)\/id-taskQueue\?tq=(\d+)-(\d+)-(\d+)&q=(\d+)&t=(\d+)&k=([0-9a-f]{32})&signature=[0-9a-f]{64}$/;

function defineBelow(value: Record<string, unknown>) {
	return { mappingMode: 'defineBelow', value, matchingColumns: [], schema: [] };
}

const refund = defineBelow({
	customer_message: '={{ $json.message }}',
	order_total: '={{ $json.total }}',
});

function createAndWait(
	parameters: Record<string, unknown> = {},
	options: Record<string, unknown> = {},
) {
	return {
		resource: 'task',
		operation: 'sendAndWait',
		queue: locator(104),
		taskData: refund,
		resumeField: 'resume_url',
		options,
		...parameters,
	};
}

const INPUT = [
	{ message: 'The blender arrived broken.', total: 89.9 },
	{ message: 'Never delivered.', total: 12 },
];

/** Execution ids are never reused in an n8n (the sandbox reuses task ids after each reset). */
let executions = 0;

async function run(
	parameters: Record<string, unknown>,
	input: IDataObject[] = INPUT,
	options: { executionId?: string; continueOnFail?: boolean; probe?: boolean } = {},
) {
	return await runActionNode({
		types: { taskQueue: 'message' in parameters ? reviewTool : node },
		node: {
			type: 'taskQueue',
			parameters: parameters as never,
			continueOnFail: options.continueOnFail,
		},
		input,
		credentials: env.credentials(),
		executionId: options.executionId ?? `exec-${++executions}`,
		probe: options.probe,
	});
}

async function createdTasks(queueId = 104) {
	return (await env.client.tasks(queueId)).filter((t) => t.id >= 1000);
}

async function createRequests() {
	return (await env.requests()).filter((r) => r.path.endsWith('/tasks/create'));
}

const complete = async (taskId: number, data: Record<string, unknown>, queueId = 104) =>
	await env.client.complete(queueId, taskId, { by: 'alice@example.com', data });

describe('Task > Create and Wait', () => {
	test('creates one task per item with the signed address of this waiting execution, then waits without a limit', async () => {
		const waiting = await run(createAndWait());
		expect(waiting.error).toBeUndefined();
		const requests = await env.requests();
		expect(requests.map((r) => `${r.method} ${r.path}`)).toEqual([
			'GET /orgs/1/queues/104',
			'GET /orgs/1/queues/104/webhook',
			'POST /orgs/1/queues/104/tasks/create',
			'POST /orgs/1/queues/104/tasks/create',
		]);
		const bodies = requests.slice(2).map((r) => r.body as { data: IDataObject });
		bodies.sort((a, b) => String(a.data.resume_url).localeCompare(String(b.data.resume_url)));
		expect(bodies).toEqual([
			{
				data: {
					customer_message: 'The blender arrived broken.',
					order_total: 89.9,
					resume_url: expect.stringMatching(ADDRESS),
				},
			},
			{
				data: {
					customer_message: 'Never delivered.',
					order_total: 12,
					resume_url: expect.stringMatching(ADDRESS),
				},
			},
		]);
		for (const [i, body] of bodies.entries()) {
			const address = String(body.data.resume_url);
			const [, executionId, item, count, inputs, queue, t, tag] = ADDRESS.exec(address)!;
			// the node's tag: the credential's key over every part (the trigger checks it at a 404)
			expect(tag).toBe(
				addressTag(KEY_HEADER.slice('Token '.length), {
					executionId,
					nodeId: 'id-taskQueue',
					item: Number(item),
					count: Number(count),
					inputs: Number(inputs),
					queueId: Number(queue),
					createdAt: Number(t),
				}),
			);
			expect([executionId, Number(item), Number(count), Number(inputs), Number(queue)]).toEqual([
				'exec-1',
				i,
				2,
				2,
				104,
			]);
			expect(Math.abs(Number(t) - Date.now() / 1000)).toBeLessThan(60);
			expect(n8nAcceptsSignature(address)).toBe(true);
			expect(n8nAcceptsSignature(address.replace(`tq=${i}-`, `tq=${1 - i}-`))).toBe(false);
		}
		expect(requests.every((r) => r.authorization === KEY_HEADER)).toBe(true);
		expect(waiting.run.data.waitTill).toEqual(WAIT_INDEFINITELY);
		expect(waiting.run.status).toBe('waiting');
		// while it waits, the node's output is each item's task (what the run remembers, and what the
		// editor shows): not its input
		const created = (await createdTasks()).sort((a, b) => a.id - b.id);
		expect(waiting.items).toEqual(
			created.map((task, item) => ({
				json: {
					id: task.id,
					status: 'new',
					queue: 'Refund Decisions',
					queue_id: 104,
					created_at: task.created_at,
					wait: { outcome: 'waiting', node: 'Task Queue', item, of: 2 },
				},
				pairedItem: { item },
			})),
		);
	});

	test('resumes once, when every task of the run is completed, each output item paired with its input item', async () => {
		const waiting = await run(createAndWait());
		const [first, second] = (await createdTasks()).sort((a, b) =>
			String(a.data.resume_url).localeCompare(String(b.data.resume_url)),
		);
		await complete(second.id, { decision: 'reject', note: 'not ours' });
		await env.client.clearRequests();

		const early = await callWaitingNode(waiting, queryOf(String(second.data.resume_url)));
		expect(early.result).toEqual({ noWebhookResponse: true });
		expect(early.response).toMatchObject({
			statusCode: 202,
			body: { waiting: true, completed: 1, of: 2 },
		});
		// one read of the completed list confirms it: the call itself proves nothing
		expect(
			(await env.requests()).map((r) => `${r.method} ${r.path} ${JSON.stringify(r.query)}`),
		).toEqual(['GET /orgs/1/queues/104/tasks/completed {"limit":"102"}']);

		await complete(first.id, { decision: 'approve' });
		const done = await callWaitingNode(waiting, queryOf(String(first.data.resume_url)));
		const [items] = done.result.workflowData as INodeExecutionData[][];
		const stored = (await createdTasks()).sort((a, b) =>
			String(a.data.resume_url).localeCompare(String(b.data.resume_url)),
		);
		const meta = { outcome: 'completed', node: 'Task Queue', completed: 2, of: 2 };
		// the task as stored, without the signed address: later nodes get the person's values only
		const withoutAddress = (task: (typeof stored)[number]) => ({
			...task,
			data: Object.fromEntries(
				Object.entries(task.data).filter(([field]) => field !== 'resume_url'),
			),
		});
		// labels: what the person clicked, beside the option's id in data ("Approve" for approve)
		// how long each item took: from its task's creation to its answer, by the service's clock
		const took = (task: (typeof stored)[number]) => ({
			...meta,
			secondsToDecision:
				(Date.parse(String(task.completed_at).slice(0, 23) + 'Z') -
					Date.parse(task.created_at.slice(0, 23) + 'Z')) /
				1000,
		});
		expect(items).toEqual([
			{
				json: {
					...withoutAddress(stored[0]),
					labels: { decision: 'Approve' },
					wait: took(stored[0]),
				},
				pairedItem: { item: 0 },
			},
			{
				json: {
					...withoutAddress(stored[1]),
					labels: { decision: 'Reject' },
					wait: took(stored[1]),
				},
				pairedItem: { item: 1 },
			},
		]);
		expect(JSON.stringify(items)).not.toContain('signature=');
		expect(
			items.map((i) => [i.json.completed_by, i.json.status, (i.json.data as IDataObject).decision]),
		).toEqual([
			['alice@example.com', 'completed', 'approve'],
			['alice@example.com', 'completed', 'reject'],
		]);
		expect(typeof items[0].json.completed_at).toBe('string');
	});

	test('"The First Task Is Completed" resumes at the first completion, one item per input (the others pending) so that n8n pairs each with its input', async () => {
		const waiting = await run(createAndWait({ waitFor: 'first' }));
		const tasks = (await createdTasks()).sort((a, b) =>
			String(a.data.resume_url).localeCompare(String(b.data.resume_url)),
		);
		await complete(tasks[1].id, { decision: 'escalate' });
		const done = await callWaitingNode(waiting, queryOf(String(tasks[1].data.resume_url)));
		const [items] = done.result.workflowData as INodeExecutionData[][];
		expect(items).toHaveLength(2);
		expect(items[0]).toEqual({
			json: {
				id: tasks[0].id,
				status: 'pending',
				wait: { outcome: 'pending', node: 'Task Queue', completed: 1, of: 2 },
			},
			pairedItem: { item: 0 },
		});
		expect(items[1]).toMatchObject({
			json: {
				id: tasks[1].id,
				data: { decision: 'escalate' },
				wait: { outcome: 'completed', completed: 1, of: 2 },
			},
			pairedItem: { item: 1 },
		});
	});

	test('tasks of another run, another execution or another queue never count', async () => {
		const other = await run(createAndWait(), [INPUT[0]], { executionId: 'exec-2' });
		const mine = await run(createAndWait(), [INPUT[0]], { executionId: 'exec-3' });
		const tasks = await createdTasks();
		const otherTask = tasks.find((t) => String(t.data.resume_url).includes('/exec-2/'))!;
		const myTask = tasks.find((t) => String(t.data.resume_url).includes('/exec-3/'))!;
		await complete(otherTask.id, { decision: 'approve' });
		// a person copied exec-3's address into a task of another queue: the service lists it under 101
		await env.client.createTasks(101, [
			{ customer_message: 'copy', note: String(myTask.data.resume_url) },
		]);
		await env.client.completeMany(101, 10, { by: 'bob@example.com' });

		// the completion of exec-2's task, replayed to exec-3's address, resumes nothing
		const replayed = await callWaitingNode(mine, queryOf(String(otherTask.data.resume_url)));
		expect(replayed.response).toMatchObject({
			statusCode: 202,
			body: { waiting: true, completed: 0, of: 1 },
		});
		const own = await callWaitingNode(mine, queryOf(String(myTask.data.resume_url)));
		expect(own.response).toMatchObject({ statusCode: 202, body: { completed: 0, of: 1 } });
		// an address of the same execution with another time (an earlier run of a retried execution)
		const earlier = queryOf(String(myTask.data.resume_url));
		earlier.t = String(Number(earlier.t) - 10);
		await env.client.createTasks(104, [
			{
				customer_message: 'earlier',
				resume_url: String(myTask.data.resume_url).replace(/&t=\d+/, `&t=${earlier.t}`),
			},
		]);
		await env.client.completeMany(104, 10, { by: 'bob@example.com' });
		const stillMine = await callWaitingNode(mine, queryOf(String(myTask.data.resume_url)));
		expect(stillMine.result.workflowData?.[0]).toEqual([
			expect.objectContaining({
				json: expect.objectContaining({ id: myTask.id }),
				pairedItem: { item: 0 },
			}),
		]);
		// exec-2 itself resumes with its own task
		const theirs = await callWaitingNode(other, queryOf(String(otherTask.data.resume_url)));
		expect(theirs.result.workflowData?.[0].map((i) => i.json.id)).toEqual([otherTask.id]);
	});

	test.each([
		['no query', {}],
		['a query of another kind', { signature: 'a'.repeat(64) }],
		[
			'an extra parameter',
			{
				tq: '0-1-1',
				q: '104',
				t: '1700000000',
				signature: 'a'.repeat(64),
				next: 'http://evil.example',
			},
		],
		[
			'a count above the inputs',
			{ tq: '0-3-2', q: '104', t: '1700000000', signature: 'a'.repeat(64) },
		],
	])('a call with %s is answered 400 and reads nothing', async (_, query) => {
		const waiting = await run(createAndWait(), [INPUT[0]]);
		await env.client.clearRequests();
		const call = await callWaitingNode(waiting, query as Record<string, string>);
		expect(call.result).toEqual({ noWebhookResponse: true });
		expect(call.response).toMatchObject({
			statusCode: 400,
			body: { message: 'Not a resume address of a Task Queue Create and Wait' },
		});
		expect(await env.requests()).toEqual([]);
	});

	test('when the service cannot confirm, the call gets 503 and the execution keeps waiting', async () => {
		const waiting = await run(createAndWait(), [INPUT[0]]);
		const [task] = await createdTasks();
		await complete(task.id, { decision: 'approve' });
		await env.client.setFaults([{ route: 'completed', kind: 'html500' }]);
		const refused = await callWaitingNode(waiting, queryOf(String(task.data.resume_url)));
		expect(refused.response).toMatchObject({ statusCode: 503 });
		expect(refused.result.workflowData).toBeUndefined();
		await env.client.clearFaults();
		const later = await callWaitingNode(waiting, queryOf(String(task.data.resume_url)));
		expect(later.result.workflowData?.[0].map((i) => i.json.id)).toEqual([task.id]);
	});

	test('Limit Wait Time sets when the wait ends', async () => {
		const before = Date.now();
		const waiting = await run(
			createAndWait(
				{},
				{
					limitWaitTime: {
						values: { limitType: 'afterTimeInterval', resumeAmount: 90, resumeUnit: 'minutes' },
					},
				},
			),
			[INPUT[0]],
		);
		const till = new Date(waiting.run.data.waitTill as Date).getTime();
		expect(till - before).toBeGreaterThanOrEqual(90 * 60_000);
		expect(till - Date.now()).toBeLessThanOrEqual(90 * 60_000);
		const at = new Date(Date.now() + 86_400_000).toISOString();
		const dated = await run(
			createAndWait(
				{},
				{ limitWaitTime: { values: { limitType: 'atSpecifiedTime', maxDateAndTime: at } } },
			),
			[INPUT[0]],
		);
		expect(new Date(dated.run.data.waitTill as Date).toISOString()).toBe(at);
	});

	test('Approval: approved, and the feedback as chatInput, for an AI agent (the review message goes into a task field)', async () => {
		const parameters = createAndWait({
			queue: locator(105),
			taskData: defineBelow({}),
			responseType: 'approval',
			approvalField: 'decision',
			approveOption: 'approve',
			feedbackField: 'feedback',
			messageField: 'request',
			message: 'refund_order: {"order": 4411, "amount": 89.9}',
		});
		const waiting = await run(parameters, [{ a: 1 }, { a: 2 }]);
		const requests = (await createRequests()).map((r) => r.body as { data: IDataObject });
		expect(requests.map((r) => r.data.request)).toEqual([
			'refund_order: {"order": 4411, "amount": 89.9}',
			'refund_order: {"order": 4411, "amount": 89.9}',
		]);
		const tasks = (await createdTasks(105)).sort((a, b) =>
			String(a.data.resume_url).localeCompare(String(b.data.resume_url)),
		);
		await complete(tasks[0].id, { decision: 'approve' }, 105);
		await complete(
			tasks[1].id,
			{ decision: 'deny', feedback: 'Refunds above 50 need a receipt.' },
			105,
		);
		const done = await callWaitingNode(waiting, queryOf(String(tasks[0].data.resume_url)));
		const [items] = done.result.workflowData as INodeExecutionData[][];
		expect(items.map((i) => [i.json.approved, i.json.chatInput, i.pairedItem])).toEqual([
			[true, '', { item: 0 }],
			[false, 'Refunds above 50 need a receipt.', { item: 1 }],
		]);
	});

	test("the review message n8n gives an agent's review tool shows the tool's arguments as JSON, not [object Object]", async () => {
		const parameters = createAndWait({
			queue: locator(105),
			taskData: defineBelow({}),
			responseType: 'approval',
			approvalField: 'decision',
			approveOption: 'approve',
			messageField: 'request',
			message:
				'=The agent wants to run this tool: {{ $tool.name }}\n\nInput:\n{{ $tool.parameters }}',
		});
		// the item the agent's engine gives the review node: the gated tool's name and arguments
		await run(parameters, [
			{ tool: 'refund_order', toolParameters: { order: 4411, amount: 89.9 } },
		]);
		const [request] = (await createRequests()).map(
			(r) => (r.body as { data: IDataObject }).data.request,
		);
		expect(request).toBe(
			'The agent wants to run this tool: refund_order\n\nInput:\n{\n  "order": 4411,\n  "amount": 89.9\n}',
		);
	});

	test('under "Continue", an item whose data is refused gets no task and an error item when the run resumes', async () => {
		const waiting = await run(createAndWait(), [INPUT[0], { message: 'x', total: 'eighty' }], {
			continueOnFail: true,
		});
		const tasks = await createdTasks();
		expect(tasks).toHaveLength(1);
		expect(ADDRESS.exec(String(tasks[0].data.resume_url))?.slice(2, 5)).toEqual(['0', '1', '2']);
		await complete(tasks[0].id, { decision: 'approve' });
		const done = await callWaitingNode(waiting, queryOf(String(tasks[0].data.resume_url)));
		const [items] = done.result.workflowData as INodeExecutionData[][];
		expect(
			items.map((i) => [
				i.json.id ?? i.json.error,
				(i.json.wait as IDataObject).outcome,
				i.pairedItem,
			]),
		).toEqual([
			[tasks[0].id, 'completed', { item: 0 }],
			[
				'No task was created for this item: its task data was refused before the wait',
				'refused',
				{ item: 1 },
			],
		]);
	});

	test("the sandbox's Questions queue: a plain question, Automatic takes its address field, the written answer comes back in data.answer", async () => {
		await env.client.setWebhook(106, TRIGGER_OF_THIS_N8N);
		const question = 'Which carrier should ship order 4411?';
		const waiting = await run(
			createAndWait({
				queue: locator(106),
				taskData: defineBelow({ question: '={{ $json.question }}' }),
				resumeField: '',
			}),
			[{ question }],
		);
		expect(waiting.error).toBeUndefined();
		const [task] = await createdTasks(106);
		expect(task.data).toEqual({
			question,
			resume_url: expect.stringMatching(ADDRESS),
			answer: null,
		});
		await complete(task.id, { answer: 'DHL, it is fragile' }, 106);
		const done = await callWaitingNode(waiting, queryOf(String(task.data.resume_url)));
		const [items] = done.result.workflowData as INodeExecutionData[][];
		expect(
			items.map((i) => [i.json.data, (i.json.wait as IDataObject).outcome, i.pairedItem]),
		).toEqual([[{ question, answer: 'DHL, it is fragile' }, 'completed', { item: 0 }]]);
	});
});

describe('Create and Wait refuses before creating anything', () => {
	test.each([
		[
			'no trigger routes the queue back (no webhook)',
			async () => await env.client.setWebhook(104, ''),
			createAndWait(),
			'No Task Queue Trigger of this n8n receives the completions of queue 104',
			/The queue has no webhook\. Activate a workflow with a Task Queue Trigger on queue 104/,
		],
		[
			'the webhook goes to another host',
			async () =>
				await env.client.setWebhook(104, 'https://hooks.example.com/webhook/abc/task-completed'),
			createAndWait(),
			'No Task Queue Trigger of this n8n receives the completions of queue 104',
			/The queue's webhook goes to https:\/\/hooks\.example\.com\/webhook\/abc\/task-completed\./,
		],
		[
			'the webhook is a test address of this n8n',
			async () =>
				await env.client.setWebhook(104, 'http://localhost:5678/webhook-test/abc/task-completed'),
			createAndWait(),
			'No Task Queue Trigger of this n8n receives the completions of queue 104',
			/Activate a workflow/,
		],
		[
			'the queue has no text or link field',
			async () => {},
			createAndWait({ queue: locator(103), taskData: defineBelow({}), resumeField: 'transcript' }),
			'Queue 103 has no text or link field "transcript" to carry the resume address',
			/Queue 103 \(Data Labeling\) has no read-only text or link field left for it\. Add one \(for example a read-only text field "resume_url"\)/,
		],
		[
			'the resume field is a number field',
			async () => {},
			createAndWait({ resumeField: 'order_total' }),
			'Queue 104 has no text or link field "order_total" to carry the resume address',
			/a read-only text or link field of the queue that is not among the Values to Send: resume_url\./,
		],
		[
			'the resume field is one people fill in (a person typed their own link over the address)',
			async () => {},
			createAndWait({ resumeField: 'note' }),
			'People fill in the field "note": it cannot carry the resume address',
			/could type over it; the run would then never hear of their answer\. Set Resume Address Field to a read-only text or link field of the queue that is not among the Values to Send: resume_url\./,
		],
		[
			'the resume field is also mapped in Values to Send (the title was replaced by the address)',
			async () => {},
			createAndWait({ resumeField: 'customer_message' }),
			'The field "customer_message" is both the Resume Address Field and one of the Values to Send',
			/Remove "customer_message" from Values to Send, or set Resume Address Field to a read-only text or link field of the queue that is not among the Values to Send: resume_url\./,
		],
		[
			'a wait limit of 0',
			async () => {},
			createAndWait(
				{},
				{
					limitWaitTime: {
						values: { limitType: 'afterTimeInterval', resumeAmount: 0, resumeUnit: 'hours' },
					},
				},
			),
			'Limit Wait Time must be a positive amount of time, not 0 hours',
			/Set Amount to more than 0/,
		],
		[
			'a wait limit in the past',
			async () => {},
			createAndWait(
				{},
				{
					limitWaitTime: {
						values: { limitType: 'atSpecifiedTime', maxDateAndTime: '2020-01-01T00:00:00Z' },
					},
				},
			),
			'Limit Wait Time is set to a date that has passed',
			/Set Max Date and Time to a date in the future/,
		],
		[
			'an approve option the field does not have',
			async () => {},
			createAndWait({
				queue: locator(105),
				taskData: defineBelow({}),
				responseType: 'approval',
				approvalField: 'decision',
				approveOption: 'yes',
			}),
			'"yes" is not an option of field decision',
			/approve \(Approve\), deny \(Deny\)/,
		],
	])(
		'%s: NodeOperationError, no task created',
		async (_, arrange, parameters, message, description) => {
			await arrange();
			await env.client.clearRequests();
			const { error, run: result } = await run(parameters, INPUT, { continueOnFail: true });
			expect(error).toMatchObject({ name: 'NodeOperationError', message });
			expect((error as unknown as { description: string }).description).toMatch(description);
			expect(await createRequests()).toEqual([]);
			expect(result.data.waitTill).toBeUndefined();
		},
	);

	test("the error that names the queue's webhook hides the trigger's secret", async () => {
		await env.client.setWebhook(
			104,
			'http://localhost:5678/webhook-test/abc/task-completed?secret=tq_trigger_secret_4d1f',
		);
		const { error } = await run(createAndWait(), INPUT, { continueOnFail: true });
		const description = (error as unknown as { description: string }).description;
		expect(description).toContain(
			"The queue's webhook goes to http://localhost:5678/webhook-test/abc/task-completed?secret=(hidden).",
		);
		expect(JSON.stringify(error)).not.toContain('tq_trigger_secret_4d1f');
	});

	test('items that name different queues', async () => {
		const { error } = await run(createAndWait({ queue: locator('={{ $json.q }}') }), [
			{ q: 104 },
			{ q: 105 },
		]);
		expect(error).toMatchObject({
			name: 'NodeOperationError',
			message:
				'Create and Wait sends all items of a run to one queue: item 1 names queue 105, item 0 queue 104',
		});
		expect(await createRequests()).toEqual([]);
	});

	test('with the Poll Trigger as route back, the webhook is not checked', async () => {
		await env.client.setWebhook(104, '');
		await env.client.clearRequests();
		const waiting = await run(createAndWait({}, { routeBack: 'pollTrigger' }), [INPUT[0]]);
		expect(waiting.error).toBeUndefined();
		expect((await env.requests()).map((r) => `${r.method} ${r.path}`)).toEqual([
			'GET /orgs/1/queues/104',
			'POST /orgs/1/queues/104/tasks/create',
		]);
		expect(waiting.run.status).toBe('waiting');
	});
});

describe('what a real server returns', () => {
	test('block ids that are numbers: the address goes to field "1", the approval is read from field "2", and the run resumes approved', async () => {
		const queue = await env.client.createQueue({
			name: 'Numbered approvals',
			blocks: [
				{ id: 1, name: 'Link', type: 'text', text: { read_only: true } },
				{ id: 3, name: 'Request', type: 'text', text: { read_only: true } },
				{
					id: 2,
					name: 'Decision',
					type: 'single_selection',
					single_selection: {
						options: [
							{ id: 'ok', name: 'OK' },
							{ id: 'no', name: 'No' },
						],
					},
				},
			],
		} as never);
		await env.client.setWebhook(queue.id, TRIGGER_OF_THIS_N8N);
		const waiting = await runActionNode({
			types: { taskQueue: node },
			node: {
				type: 'taskQueue',
				parameters: {
					resource: 'task',
					operation: 'sendAndWait',
					queue: locator(queue.id),
					taskData: {
						mappingMode: 'defineBelow',
						value: { 3: 'Refund 20 EUR' },
						matchingColumns: [],
						schema: [],
					},
					resumeField: '1',
					responseType: 'approval',
					approvalField: '2',
					approveOption: 'ok',
					options: {},
				} as never,
			},
			input: [{}],
			credentials: env.credentials(),
			executionId: 'numbered-1',
		});
		expect(waiting.error).toBeUndefined();
		const [task] = await env.client.tasks(queue.id);
		expect(String(task.data[1])).toContain('/webhook-waiting/numbered-1/');
		expect(task.data[3]).toBe('Refund 20 EUR');
		await env.client.complete(queue.id, task.id, { by: 'alice@example.com', data: { 2: 'ok' } });
		const call = await callWaitingNode(waiting, queryOf(String(task.data[1])));
		const [items] = call.result.workflowData as INodeExecutionData[][];
		expect(items[0].json).toMatchObject({ id: task.id, approved: true, data: { 2: 'ok' } });
	});
});
