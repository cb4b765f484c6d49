import { sleep } from 'n8n-workflow';

import { locator, startEnv, type TestEnv } from '../../env';

let env: TestEnv;
beforeAll(async () => (env = await startEnv()));
afterAll(async () => await env.close());
beforeEach(async () => await env.client.reset());

const KEY_HEADER = 'Token tqs_sandbox_2f8a61c4e9d07b35';

function request(method: string, status: number | null, body: unknown = null, queueId = 101) {
	return {
		method,
		path: `/orgs/1/queues/${queueId}/webhook`,
		query: {},
		body,
		status,
		authorization: KEY_HEADER,
	};
}

/** The read through the organization that every webhook operation starts with. */
function queueRead(status = 200, queueId = 101) {
	return {
		method: 'GET',
		path: `/orgs/1/queues/${queueId}`,
		query: {},
		body: null,
		status,
		authorization: KEY_HEADER,
	};
}

const webhook = (operation: string, extra: Record<string, unknown> = {}) => ({
	resource: 'webhook',
	operation,
	queue: locator(101),
	...extra,
});

describe('Webhook', () => {
	test('Get with none set: target null, not active (the service says {"target": ""})', async () => {
		const { items } = await env.run(webhook('get'));
		expect(await env.requests()).toEqual([queueRead(), request('GET', 200)]);
		expect(items).toEqual([
			{ json: { queueId: 101, target: null, active: false }, pairedItem: { item: 0 } },
		]);
	});

	test('Set, then Get, then Set again (an update), then Remove', async () => {
		const set = await env.run(webhook('set', { url: 'https://example.com/hooks/a' }));
		expect(set.items).toEqual([
			{ json: { queueId: 101, target: 'https://example.com/hooks/a' }, pairedItem: { item: 0 } },
		]);
		const get = await env.run(webhook('get'));
		expect(get.items).toEqual([
			{
				json: { queueId: 101, target: 'https://example.com/hooks/a', active: true },
				pairedItem: { item: 0 },
			},
		]);
		await env.run(
			webhook('set', { url: 'http://localhost:5678/webhook/abc/task-completed?secret=s' }),
		);
		const removed = await env.run(webhook('remove'));
		expect(removed.items).toEqual([
			{ json: { queueId: 101, target: null, removed: true }, pairedItem: { item: 0 } },
		]);
		expect(await env.requests()).toEqual([
			queueRead(),
			request('PUT', 201, { target: 'https://example.com/hooks/a' }),
			queueRead(),
			request('GET', 200),
			queueRead(),
			request('PUT', 200, { target: 'http://localhost:5678/webhook/abc/task-completed?secret=s' }),
			queueRead(),
			request('GET', 200),
			request('PUT', 204, { target: '' }),
		]);
		expect((await env.run(webhook('get'))).items[0].json).toEqual({
			queueId: 101,
			target: null,
			active: false,
		});
	});

	test("the trigger's secret never shows in an output: Get and Set mask it", async () => {
		const secret = ['tq', 'trigger', 'secret', Date.now()].join('');
		const target = `http://localhost:5678/webhook/abc/task-completed?secret=${secret}`;
		const set = await env.run(webhook('set', { url: target }));
		expect(set.items[0].json).toEqual({
			queueId: 101,
			target: 'http://localhost:5678/webhook/abc/task-completed?secret=(hidden)',
		});
		const get = await env.run(webhook('get'));
		expect(get.items[0].json).toEqual({
			queueId: 101,
			target: 'http://localhost:5678/webhook/abc/task-completed?secret=(hidden)',
			active: true,
		});
		expect(JSON.stringify([set, get].map((run) => run.items))).not.toContain(secret);
		// the service still has the real one
		expect((await env.requests()).find((r) => r.method === 'PUT')?.body).toEqual({ target });
	});

	test('Remove with none set writes nothing and succeeds (the real 204 with a body cannot be parsed)', async () => {
		const { items, error } = await env.run(webhook('remove'));
		expect(error).toBeUndefined();
		expect(items).toEqual([
			{ json: { queueId: 101, target: null, removed: true }, pairedItem: { item: 0 } },
		]);
		expect(await env.requests()).toEqual([queueRead(), request('GET', 200)]);
	});

	test('Remove whose write meets a malformed answer: read again, done when the webhook is gone', async () => {
		await env.client.setWebhook(101, 'https://example.com/hooks/a');
		// someone else removes it between the node's read and its write (held back here): the
		// service then answers the node's removal with the 204 that carries a body
		await env.client.setFaults([{ route: 'setWebhook', kind: 'slow', delayMs: 1500, count: 1 }]);
		const running = env.run(webhook('remove'));
		while (!(await env.requests()).some((r) => r.method === 'GET' && r.path.endsWith('/webhook'))) {
			await sleep(20);
		}
		await env.client.setWebhook(101, '');
		const { items, error } = await running;
		expect(error).toBeUndefined();
		expect(items).toEqual([
			{ json: { queueId: 101, target: null, removed: true }, pairedItem: { item: 0 } },
		]);
		expect(await env.requests()).toEqual([
			queueRead(),
			request('GET', 200),
			request('PUT', 204, { target: '' }),
			request('GET', 200),
		]);
	});

	test.each([
		['get', {}],
		['set', { url: 'https://example.com/hooks/mine' }],
		['remove', {}],
	])(
		'%s refuses a queue of another organization before touching its webhook',
		async (operation, extra) => {
			await env.client.setWebhook(201, 'https://other-org.example.com/hook', {
				by: 'carol@example.com',
			});
			const { error } = await env.run({ ...webhook(operation, extra), queue: locator(201) });
			expect(error).toMatchObject({
				name: 'NodeApiError',
				message: 'Not found: could not get queue 201',
				httpCode: '404',
			});
			expect(await env.requests()).toEqual([queueRead(404, 201)]);
			expect((await env.client.getQueue(201)).webhook).toEqual({
				target: 'https://other-org.example.com/hook',
			});
		},
	);

	test.each([
		['', 'No webhook URL given'],
		['example.com/hook', '"example.com/hook" is not a URL the service accepts'],
		['https://intranet/hook', '"https://intranet/hook" is not a URL the service accepts'],
		[
			`https://example.com/${'a'.repeat(240)}`,
			'The webhook URL is 260 characters long; the service keeps at most 255',
		],
	])('Set refuses %j before sending anything', async (url, message) => {
		const { error } = await env.run(webhook('set', { url: url === '' ? '={{ "" }}' : url }));
		expect(error).toMatchObject({
			name: 'NodeOperationError',
			message,
			description:
				'Enter a full http:// or https:// address whose host has a dot (or is localhost), at most 255 characters. To clear the webhook, use the Remove operation.',
		});
		expect(await env.requests()).toEqual([]);
	});
});
