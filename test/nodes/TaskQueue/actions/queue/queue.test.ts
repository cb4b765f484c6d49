import { createServer } from 'http';
import type { AddressInfo } from 'net';

import { locator, startEnv, type TestEnv } from '../../env';

let env: TestEnv;
beforeAll(async () => (env = await startEnv()));
afterAll(async () => await env.close());
beforeEach(async () => await env.client.reset());

const KEY_HEADER = 'Token tqs_sandbox_2f8a61c4e9d07b35';

function request(method: string, path: string, status: number, body: unknown = null) {
	return { method, path, query: {}, body, status, authorization: KEY_HEADER };
}

describe('Queue > Get', () => {
	test('returns the queue with its block configuration', async () => {
		const { items, error } = await env.run({
			resource: 'queue',
			operation: 'get',
			queue: locator(102, 'list'),
		});
		expect(error).toBeUndefined();
		expect(await env.requests()).toEqual([request('GET', '/orgs/1/queues/102', 200)]);
		const queue = await env.client.getQueue(102);
		expect(items).toEqual([{ json: queue, pairedItem: { item: 0 } }]);
		expect(items[0].json).toMatchObject({ id: 102, name: 'Content Review', org_id: 1 });
		expect((items[0].json.data as unknown[]).length).toBe(17);
	});

	test('one item per input item, each paired', async () => {
		const { items } = await env.run(
			{
				resource: 'queue',
				operation: 'get',
				queue: { __rl: true, mode: 'id', value: '={{ $json.q }}' },
			},
			[{ q: 103 }, { q: 101 }],
		);
		expect(items.map((i) => [i.json.id, i.pairedItem])).toEqual([
			[103, { item: 0 }],
			[101, { item: 1 }],
		]);
	});
});

describe('Queue > Get Many', () => {
	test('Limit: the first queues of the list', async () => {
		const { items } = await env.run({ resource: 'queue', operation: 'getMany', limit: 2 });
		expect(await env.requests()).toEqual([request('GET', '/orgs/1/queues', 200)]);
		expect(items.map((i) => i.json.name)).toEqual(['Refund Requests', 'Content Review']);
	});

	test("Return All: the organization's queues only, as the service lists them", async () => {
		const { items } = await env.run({ resource: 'queue', operation: 'getMany', returnAll: true });
		expect(items).toEqual([
			{
				json: {
					id: 101,
					name: 'Refund Requests',
					created_at: '2024-05-01T09:00:00.000Z',
					active_users: [],
					n_tasks: 3,
					is_running: true,
					guidelines_url: null,
					pinned_block: null,
					task_description: 'Decide on customer refund requests.',
				},
				pairedItem: { item: 0 },
			},
			{
				json: {
					id: 102,
					name: 'Content Review',
					created_at: '2024-05-02T09:00:00.000Z',
					active_users: [],
					n_tasks: 2,
					is_running: true,
					guidelines_url: null,
					pinned_block: null,
					task_description: 'Review articles before they are published.',
				},
				pairedItem: { item: 0 },
			},
			{
				json: {
					id: 103,
					name: 'Data Labeling',
					created_at: '2024-05-03T09:00:00.000Z',
					active_users: [],
					n_tasks: 2,
					is_running: true,
					guidelines_url: null,
					pinned_block: null,
					task_description: 'Label entities, boxes and addresses.',
				},
				pairedItem: { item: 0 },
			},
			{
				json: {
					id: 104,
					name: 'Refund Decisions',
					created_at: '2024-05-04T09:00:00.000Z',
					active_users: [],
					n_tasks: 0,
					is_running: true,
					guidelines_url: null,
					pinned_block: null,
					task_description:
						'Decide on refund requests while the workflow waits for the answer (Create and Wait).',
				},
				pairedItem: { item: 0 },
			},
			{
				json: {
					id: 105,
					name: 'Agent Approvals',
					created_at: '2024-05-05T09:00:00.000Z',
					active_users: [],
					n_tasks: 0,
					is_running: true,
					guidelines_url: null,
					pinned_block: null,
					task_description:
						"Approve or deny what an AI agent wants to do (the agent's human review).",
				},
				pairedItem: { item: 0 },
			},
			{
				json: {
					id: 106,
					name: 'Questions',
					created_at: '2024-05-06T09:00:00.000Z',
					active_users: [],
					n_tasks: 0,
					is_running: true,
					guidelines_url: null,
					pinned_block: null,
					task_description: 'Ask a person a question; they write the answer.',
				},
				pairedItem: { item: 0 },
			},
			{
				json: {
					id: 107,
					name: 'Supervisors',
					created_at: '2024-05-07T09:00:00.000Z',
					active_users: [],
					n_tasks: 0,
					is_running: true,
					guidelines_url: null,
					pinned_block: null,
					task_description:
						'Escalation level for refund decisions: a supervisor decides an item nobody decided in time (Create and Wait > Escalate).',
				},
				pairedItem: { item: 0 },
			},
		]);
	});
});

describe('Queue > Flush', () => {
	test('deletes the pending tasks, keeps the completed ones; the empty non-JSON answer is fine', async () => {
		const { items, error } = await env.run({
			resource: 'queue',
			operation: 'flush',
			queue: locator(101),
		});
		expect(error).toBeUndefined();
		expect(await env.requests()).toEqual([
			request('GET', '/orgs/1/queues/101', 200),
			request('PUT', '/orgs/1/queues/101/flush', 200),
		]);
		expect(items).toEqual([{ json: { queueId: 101, flushed: true }, pairedItem: { item: 0 } }]);
		expect((await env.client.tasks(101)).map((t) => [t.id, t.status])).toEqual([
			[1, 'completed'],
			[2, 'completed'],
			[3, 'completed'],
		]);
	});

	test('flushing twice is harmless', async () => {
		const { items } = await env.run(
			{ resource: 'queue', operation: 'flush', queue: locator(101) },
			[{}, {}],
		);
		expect(items.map((i) => i.json)).toEqual([
			{ queueId: 101, flushed: true },
			{ queueId: 101, flushed: true },
		]);
	});
});

describe('the Legacy API Paths setting against a self-hosted 1.0.x server', () => {
	beforeEach(async () => await env.client.setLegacyDefect(true));

	// Flush and the webhook operations read the queue through the organization first (its webhook
	// routes find a queue by id alone), so that read is the request that meets the defect.
	test.each([
		['get', { resource: 'queue', operation: 'get' }, 'get queue 101'],
		['flush', { resource: 'queue', operation: 'flush' }, 'get queue 101'],
		['webhook get', { resource: 'webhook', operation: 'get' }, 'get queue 101'],
		[
			'webhook set',
			{ resource: 'webhook', operation: 'set', url: 'https://example.com/hook' },
			'get queue 101',
		],
	])('%s on /queues fails with the hint', async (_, parameters, action) => {
		const { error } = await env.run({ ...parameters, queue: locator(101) });
		expect(error).toMatchObject({
			name: 'NodeApiError',
			message: `The service crashed (HTTP 500) trying to ${action}`,
			description:
				'Self-hosted 1.0.x servers fail on this /queues route. Set "API Paths" to "Legacy (/workflows)" in the Task Queue API credential.',
			httpCode: '500',
		});
	});

	test('with Legacy (/workflows) every operation works', async () => {
		const credentials = env.credentials({ apiPaths: 'workflows' });
		const run = async (parameters: Record<string, unknown>) =>
			await env.run({ queue: locator(101), ...parameters }, [{}], { credentials });
		expect((await run({ resource: 'queue', operation: 'get' })).items[0].json).toMatchObject({
			id: 101,
		});
		expect(
			(await run({ resource: 'queue', operation: 'getMany', returnAll: true })).items,
		).toHaveLength(7);
		expect(
			(await run({ resource: 'webhook', operation: 'set', url: 'https://example.com/hook' }))
				.items[0].json,
		).toEqual({
			queueId: 101,
			target: 'https://example.com/hook',
		});
		expect((await run({ resource: 'webhook', operation: 'get' })).items[0].json).toEqual({
			queueId: 101,
			target: 'https://example.com/hook',
			active: true,
		});
		expect((await run({ resource: 'webhook', operation: 'remove' })).items[0].json).toEqual({
			queueId: 101,
			target: null,
			removed: true,
		});
		const created = await run({
			resource: 'task',
			operation: 'create',
			taskData: {
				mappingMode: 'defineBelow',
				value: { customer_message: 'x', decision: 'approve' },
				matchingColumns: [],
				schema: [],
			},
		});
		expect(created.error).toBeUndefined();
		expect(
			(await run({ resource: 'task', operation: 'getCompleted', limit: 1 })).items,
		).toHaveLength(1);
		expect((await run({ resource: 'queue', operation: 'flush' })).items[0].json).toEqual({
			queueId: 101,
			flushed: true,
		});
		const requests = await env.requests();
		expect(requests.every((r) => r.path.startsWith('/orgs/1/workflows'))).toBe(true);
		expect(requests.every((r) => r.status !== null && r.status < 300)).toBe(true);
	});
});

describe('what a real server returns: one odd queue never breaks an organization', () => {
	/** n8n's Logger, which `this.logger` of every node context is. */
	const { Logger } = require(
		require.resolve('@n8n/backend-common', { paths: [require.resolve('n8n-core')] }),
	) as typeof import('@n8n/backend-common');
	const warn = jest.spyOn(Logger.prototype, 'warn');
	beforeEach(() => warn.mockClear());

	/** As the real server stores a queue made through its API with `"id": 1` (`Or(str, int)`). */
	async function numericIdQueue() {
		return await env.client.createQueue({
			name: 'Numbered fields',
			blocks: [
				{ id: 1, name: 'Claim', type: 'text', text: {} },
				{ id: 2, name: 'Amount', type: 'number', number: {} },
			],
		});
	}

	test('block ids that are numbers: Get Many lists every queue, Get reads the ids as text, Create fills them', async () => {
		const queue = await numericIdQueue();
		const many = await env.run({ resource: 'queue', operation: 'getMany', returnAll: true });
		expect(many.error).toBeUndefined();
		expect(many.items.map((i) => i.json.id)).toContain(queue.id);
		expect(many.items.length).toBe(
			(await env.client.state()).queues.filter(
				(q) => q.organizationId === env.sandbox.organizationId,
			).length,
		);

		const one = await env.run({ resource: 'queue', operation: 'get', queue: locator(queue.id) });
		expect(one.error).toBeUndefined();
		expect((one.items[0].json.data as Array<{ id: unknown }>).map((b) => b.id)).toEqual(['1', '2']);

		const created = await env.run({
			resource: 'task',
			operation: 'create',
			queue: locator(queue.id),
			taskData: {
				mappingMode: 'defineBelow',
				value: { 1: 'Broken kettle', 2: '12.5' },
				matchingColumns: [],
				schema: [],
			},
			options: {},
		});
		expect(created.error).toBeUndefined();
		const sent = (await env.requests()).filter((r) => r.path.endsWith('/tasks/create'));
		expect(sent.map((r) => r.body)).toEqual([{ data: { 1: 'Broken kettle', 2: 12.5 } }]);
		expect((await env.client.tasks(queue.id)).map((t) => t.data)).toEqual([
			{ 1: 'Broken kettle', 2: 12.5 },
		]);
	});

	test('a block kind the node does not know: Get shows it, Create passes its value through as given, nothing refused', async () => {
		const queue = await env.client.createQueue({
			name: 'New kinds',
			blocks: [
				{ id: 'claim', name: 'Claim', type: 'text', text: {} },
				{ id: 'heat', name: 'Heat', type: 'heatmap', heatmap: { colours: 3 } },
			],
		} as never);
		const one = await env.run({ resource: 'queue', operation: 'get', queue: locator(queue.id) });
		expect(one.error).toBeUndefined();
		expect(one.items[0].json.data).toEqual([
			{ id: 'claim', name: 'Claim', type: 'text', text: {} },
			{ id: 'heat', name: 'Heat', type: 'heatmap', heatmap: { colours: 3 } },
		]);
		const created = await env.run({
			resource: 'task',
			operation: 'create',
			queue: locator(queue.id),
			taskData: {
				mappingMode: 'defineBelow',
				value: { claim: 'Broken kettle', heat: 'hot' },
				matchingColumns: [],
				schema: [],
			},
			options: {},
		});
		expect(created.error).toBeUndefined();
		const sent = (await env.requests()).filter((r) => r.path.endsWith('/tasks/create'));
		expect(sent.map((r) => r.body)).toEqual([{ data: { claim: 'Broken kettle', heat: 'hot' } }]);
	});

	test('a queue the node cannot read is left out of Get Many with a warning naming it; the others are listed', async () => {
		// a real server lists each queue with its blocks (real-deployments.md); one of them odd
		const list = [
			{
				id: 7,
				name: 'Claims',
				is_running: true,
				task_description: '',
				data: [{ id: 1, name: 'Claim', type: 'text', text: {} }],
			},
			{
				id: 8,
				name: 'Odd',
				is_running: true,
				task_description: '',
				data: [{ id: 'x', name: 7, type: 'text' }],
			},
			{ id: 9, name: 'Refunds', is_running: false, task_description: 'Refunds', data: [] },
		];
		const server = createServer((_req, res) => {
			res.writeHead(200, { 'Content-Type': 'application/json' });
			res.end(JSON.stringify(list));
		});
		await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
		const { port } = server.address() as AddressInfo;
		try {
			const { items, error } = await env.run(
				{ resource: 'queue', operation: 'getMany', returnAll: true },
				[{}],
				{ credentials: env.credentials({ baseUrl: `http://127.0.0.1:${port}` }) },
			);
			expect(error).toBeUndefined();
			expect(
				items.map((i) => [i.json.id, (i.json.data as Array<{ id: string }>).map((b) => b.id)]),
			).toEqual([
				[7, ['1']],
				[9, []],
			]);
			expect(warn.mock.calls.map(([message]) => String(message))).toEqual([
				'Left out of the queue list: queue 8 "Odd": data.0.name: Expected string, received number',
			]);
		} finally {
			await new Promise((resolve) => server.close(resolve));
		}
	});

	test('an answer in JSON of a shape the node cannot read says what is wrong with it, not to check the Base URL', async () => {
		const odd = await env.client.createQueue({
			name: 'Odd',
			blocks: [{ id: 'x', name: 7, type: 'text' } as never],
		});
		const { error } = await env.run({
			resource: 'queue',
			operation: 'get',
			queue: locator(odd.id),
		});
		expect(error).toMatchObject({
			name: 'NodeApiError',
			message: `The service's answer to "get queue ${odd.id}" has an unexpected shape`,
			description:
				"data.0.name: Expected string, received number. The service answered in JSON, but not in a shape this node can read: check the value it names on the server (a queue's blocks, a task's fields), or report the answer to the node's maintainers.",
		});
	});
});
