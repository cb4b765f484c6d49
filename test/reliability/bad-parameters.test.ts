// Reliability 4: every parameter of the Task Queue node and of both triggers, given bad values
// (empty, wrong type, malformed, out of range, unknown queue, values that do not fit the queue's
// blocks). Each gives a NodeOperationError naming the field, before any request is sent (the
// sandbox's request log stays empty). Two kinds of check need the service and are asserted as such:
// values checked against the queue's blocks (only the read of the queue's configuration is sent,
// never a create), and an unknown queue (a NodeApiError naming the queue after one read, no write).
import type { IDataObject, INodeParameters } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { TaskQueuePollTrigger } from '../../nodes/TaskQueue/TaskQueuePollTrigger.node';
import { TaskQueueTrigger } from '../../nodes/TaskQueue/TaskQueueTrigger.node';
import { hookContext, makePollEnv, makeWebhookEnv, pollContext } from '../helpers/n8n';
import { locator, startEnv, type TestEnv } from '../nodes/TaskQueue/env';
import { recordFigures } from './figures';

let env: TestEnv;
beforeAll(async () => (env = await startEnv()));
afterAll(async () => {
	recordFigures('bad-parameters', tally);
	await env.close();
});
beforeEach(async () => await env.client.clearRequests());

const tally = {
	cases: 0,
	nodeOperationErrors: 0,
	refusedByN8nParameterCheck: 0,
	nodeApiErrorsUnknownQueue: 0,
	requestsBeforeError: 0,
	writes: 0,
};

/**
 * Runs the node; n8n itself may refuse to start it (WorkflowHasIssuesError: a required parameter
 * is empty, or a locator value fails the node's own validation regex), which also names the field.
 */
async function run(
	parameters: INodeParameters,
	input?: IDataObject[],
): Promise<{
	error?: { name?: string; message: string; description?: string | null };
	byN8n: boolean;
}> {
	try {
		const { error, items } = await env.run(parameters, input);
		expect(items).toEqual([]);
		return { error: error as never, byN8n: false };
	} catch (error) {
		expect((error as Error).name).toBe('WorkflowHasIssuesError');
		return { error: error as never, byN8n: true };
	}
}

const rl = (value: unknown, mode = 'id') => ({ __rl: true, mode, value });
const defineBelow = (value: unknown) =>
	({
		mappingMode: 'defineBelow',
		value,
		matchingColumns: [],
		schema: [],
	}) as unknown as INodeParameters[string];
const GOOD_DATA = defineBelow({ customer_message: 'hello', order_total: 1 });

/** Bad values of the queue locator, shared by every operation and both triggers. */
const BAD_QUEUES: Array<[string, unknown]> = [
	['empty', rl('')],
	['blank', rl('   ')],
	['missing', undefined],
	['not a number', rl('refunds')],
	['negative', rl('-5')],
	['zero', rl('0')],
	['fraction', rl('1.5')],
	['a list', rl([101])],
	['an object', rl({ id: 101 })],
	['a URL without a queue', rl('http://127.0.0.1:5680/app/', 'url')],
	['a URL of another page', rl('https://example.com/queues/abc', 'url')],
	['a huge number', rl('99999999999999999999')],
];

const OPERATIONS: Array<[string, INodeParameters]> = [
	['task create', { resource: 'task', operation: 'create', taskData: GOOD_DATA }],
	['task getCompleted', { resource: 'task', operation: 'getCompleted', limit: 5 }],
	['queue get', { resource: 'queue', operation: 'get' }],
	['queue flush', { resource: 'queue', operation: 'flush' }],
	['webhook get', { resource: 'webhook', operation: 'get' }],
	['webhook set', { resource: 'webhook', operation: 'set', url: 'https://hooks.example.com/x' }],
	['webhook remove', { resource: 'webhook', operation: 'remove' }],
];

interface Case {
	name: string;
	parameters: INodeParameters;
	/** what the message or description must name */
	field: RegExp;
}

const ACTION_CASES: Case[] = [
	{
		name: 'resource unknown',
		parameters: { resource: 'tasks', operation: 'create' },
		field: /resource/i,
	},
	{
		name: 'operation unknown',
		parameters: { resource: 'task', operation: 'delete' },
		field: /operation/i,
	},
	{
		name: 'operation of another resource',
		parameters: { resource: 'queue', operation: 'create' },
		field: /operation/i,
	},
	...OPERATIONS.flatMap(([op, base]) =>
		BAD_QUEUES.map(([what, queue]) => ({
			name: `${op}: queue ${what}`,
			parameters: { ...base, ...(queue === undefined ? {} : { queue }) } as INodeParameters,
			field: /queue/i,
		})),
	),
	...[-1, 0, 1.5, 'ten', Number.NaN].map((limit) => ({
		name: `task getCompleted: limit ${String(limit)}`,
		parameters: {
			resource: 'task',
			operation: 'getCompleted',
			queue: locator(101),
			returnAll: false,
			limit,
		} as INodeParameters,
		field: /limit/i,
	})),
	...[-1, 0, 2.5, 'all'].map((limit) => ({
		name: `queue getMany: limit ${String(limit)}`,
		parameters: {
			resource: 'queue',
			operation: 'getMany',
			returnAll: false,
			limit,
		} as INodeParameters,
		field: /limit/i,
	})),
	...['yesterday', '2024-13-45', '31/12/2024', '2024-02-30T10:00:00'].flatMap((date) => [
		{
			name: `task getCompleted: completedAfter "${date}"`,
			parameters: {
				resource: 'task',
				operation: 'getCompleted',
				queue: locator(101),
				limit: 5,
				filters: { completedAfter: date },
			},
			field: /completed after/i,
		},
		{
			name: `task getCompleted: completedBefore "${date}"`,
			parameters: {
				resource: 'task',
				operation: 'getCompleted',
				queue: locator(101),
				limit: 5,
				filters: { completedBefore: date },
			},
			field: /completed before/i,
		},
	]),
	{
		name: 'task getCompleted: completedAfter later than completedBefore',
		parameters: {
			resource: 'task',
			operation: 'getCompleted',
			queue: locator(101),
			limit: 5,
			filters: { completedAfter: '2024-06-02T00:00:00Z', completedBefore: '2024-06-01T00:00:00Z' },
		},
		field: /completed after/i,
	},
	...[
		'',
		'   ',
		'not a url',
		'ftp://files.example.com/x',
		'https://nodot/x',
		'javascript:alert(1)',
		`https://hooks.example.com/${'x'.repeat(260)}`,
	].map((url) => ({
		name: `webhook set: url "${url.slice(0, 40)}"`,
		parameters: { resource: 'webhook', operation: 'set', queue: locator(101), url },
		field: /url/i,
	})),
	...[-1, 0, 'many', 1.5].map((concurrency) => ({
		name: `task create: concurrency ${String(concurrency)}`,
		parameters: {
			resource: 'task',
			operation: 'create',
			queue: locator(101),
			taskData: GOOD_DATA,
			options: { concurrency },
		} as INodeParameters,
		field: /concurrency/i,
	})),
	{
		name: 'task create: taskData mapping mode unknown',
		parameters: {
			resource: 'task',
			operation: 'create',
			queue: locator(101),
			taskData: { mappingMode: 'magic', value: {} },
		},
		field: /task data|mapping/i,
	},
];

/** Checked against the queue's blocks: only the queue read goes out, never a create. */
const BLOCK_CASES: Array<[string, IDataObject, RegExp]> = [
	['no value at all', {}, /no field has a value/i],
	['every value empty', { customer_message: '', order_total: null }, /no field has a value/i],
	['a number block given words', { customer_message: 'x', order_total: 'ninety' }, /order_total/],
	[
		'a number block given an object',
		{ customer_message: 'x', order_total: { value: 1 } },
		/order_total/,
	],
	['a text block given an object', { customer_message: { text: 'x' } }, /customer_message/],
	['a text block given a list', { customer_message: ['x'] }, /customer_message/],
	['an image block given a non-URL', { customer_message: 'x', receipt: 'receipt.png' }, /receipt/],
	['an image block given a number', { customer_message: 'x', receipt: 42 }, /receipt/],
	['a selection given an unknown option', { customer_message: 'x', decision: 'maybe' }, /decision/],
	['a selection given a list', { customer_message: 'x', decision: ['approve'] }, /decision/],
	['a field the queue does not have', { customer_message: 'x', refund_amount: 3 }, /refund_amount/],
];

async function expectRefusedBeforeAnyRequest(
	error: { name?: string; message: string; description?: string | null } | undefined,
	field: RegExp,
	byN8n = false,
): Promise<void> {
	tally.cases++;
	// run errors come back from WorkflowExecute as plain copies: their name tells the class
	if (byN8n) tally.refusedByN8nParameterCheck++;
	else {
		expect(error?.name ?? (error as object | undefined)?.constructor?.name).toBe(
			'NodeOperationError',
		);
		tally.nodeOperationErrors++;
	}
	const text = `${error!.message} ${error!.description ?? ''}`;
	expect(text).toMatch(field);
	const requests = await env.client.requests();
	tally.requestsBeforeError += requests.length;
	expect(requests).toEqual([]);
}

describe('Task Queue node: each bad parameter is refused, naming the field, before any request', () => {
	test.each(ACTION_CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
		const { error, byN8n } = await run(c.parameters);
		await expectRefusedBeforeAnyRequest(error, c.field, byN8n);
	});
});

describe('Task Queue node: task data that does not fit the queue is refused after reading its configuration only', () => {
	test.each(BLOCK_CASES)('%s', async (_name, value, field) => {
		const { error } = await run({
			resource: 'task',
			operation: 'create',
			queue: locator(101),
			taskData: defineBelow(value),
		});
		tally.cases++;
		expect(error?.name).toBe('NodeOperationError');
		tally.nodeOperationErrors++;
		expect(error!.message).toMatch(field);
		const requests = await env.client.requests();
		tally.writes += requests.filter((r) => r.method !== 'GET').length;
		expect(requests.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /orgs/1/queues/101']);
	});

	test('auto-mapped input items with bad values: every problem of every item, nothing created', async () => {
		const { error } = await run(
			{
				resource: 'task',
				operation: 'create',
				queue: locator(101),
				taskData: { mappingMode: 'autoMapInputData', value: null },
			},
			[
				{ customer_message: 'ok', order_total: 1 },
				{ customer_message: 'x', order_total: 'n/a' },
			],
		);
		expect(error?.name).toBe('NodeOperationError');
		expect(error!.message).toMatch(/order_total/);
		expect((await env.client.requests()).filter((r) => r.method !== 'GET')).toEqual([]);
	});
});

describe('an unknown queue: a NodeApiError naming the queue after one read, nothing written', () => {
	test.each(OPERATIONS)('%s', async (_name, base) => {
		const { error } = await run({ ...base, queue: locator(424242) });
		tally.cases++;
		expect(error?.name).toBe('NodeApiError');
		tally.nodeApiErrorsUnknownQueue++;
		expect(`${error!.message} ${error!.description ?? ''}`).toMatch(/queue/i);
		expect(error!.message).toMatch(/424242/);
		const requests = await env.client.requests();
		expect(requests).toHaveLength(1);
		expect(requests[0].status).toBe(404);
		tally.writes += requests.filter((r) => r.method !== 'GET' && r.status !== 404).length;
	});
});

describe('the triggers: a bad queue is refused, naming the field, before any request', () => {
	const webhookTrigger = new TaskQueueTrigger();
	const pollTrigger = new TaskQueuePollTrigger();

	test.each(BAD_QUEUES)(
		'Task Queue Trigger, queue %s: activation refused',
		async (_what, queue) => {
			const hookEnv = makeWebhookEnv({
				types: { taskQueueTrigger: webhookTrigger },
				node: {
					type: 'taskQueueTrigger',
					name: 'Trigger',
					webhookId: '0f0e0d0c-0b0a-4909-8807-060504030201',
					parameters: {
						event: 'taskCompleted',
						...(queue === undefined ? {} : { queue }),
						options: {},
					} as INodeParameters,
				},
				credentials: env.credentials(),
			});
			const context = hookContext(hookEnv);
			let thrown: NodeOperationError | undefined;
			try {
				const exists = await webhookTrigger.webhookMethods.default.checkExists.call(
					context as never,
				);
				if (!exists) await webhookTrigger.webhookMethods.default.create.call(context as never);
			} catch (error) {
				thrown = error as NodeOperationError;
			}
			expect(thrown).toBeInstanceOf(NodeOperationError);
			await expectRefusedBeforeAnyRequest(thrown, /queue/i);
		},
	);

	test.each(BAD_QUEUES)('Task Queue Poll Trigger, queue %s: poll refused', async (_what, queue) => {
		const pollEnv = makePollEnv({
			types: { taskQueuePollTrigger: pollTrigger },
			node: {
				type: 'taskQueuePollTrigger',
				name: 'Poll',
				parameters: { ...(queue === undefined ? {} : { queue }), options: {} } as INodeParameters,
			},
			credentials: env.credentials(),
		});
		let thrown: NodeOperationError | undefined;
		try {
			await pollTrigger.poll.call(pollContext(pollEnv) as never);
		} catch (error) {
			thrown = error as NodeOperationError;
		}
		expect(thrown).toBeInstanceOf(NodeOperationError);
		await expectRefusedBeforeAnyRequest(thrown, /queue/i);
	});
});
