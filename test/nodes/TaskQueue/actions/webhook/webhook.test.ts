import { locator, startEnv, type TestEnv } from '../../env';

let env: TestEnv;
beforeAll(async () => (env = await startEnv()));
afterAll(async () => await env.close());
beforeEach(async () => await env.client.reset());

const KEY_HEADER = 'Token tqs_sandbox_2f8a61c4e9d07b35';

function request(method: string, status: number, body: unknown = null) {
	return { method, path: '/orgs/1/queues/101/webhook', query: {}, body, status, authorization: KEY_HEADER };
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
		expect(await env.requests()).toEqual([request('GET', 200)]);
		expect(items).toEqual([{ json: { queueId: 101, target: null, active: false }, pairedItem: { item: 0 } }]);
	});

	test('Set, then Get, then Set again (an update), then Remove', async () => {
		const set = await env.run(webhook('set', { url: 'https://example.com/hooks/a' }));
		expect(set.items).toEqual([{ json: { queueId: 101, target: 'https://example.com/hooks/a' }, pairedItem: { item: 0 } }]);
		const get = await env.run(webhook('get'));
		expect(get.items).toEqual([
			{ json: { queueId: 101, target: 'https://example.com/hooks/a', active: true }, pairedItem: { item: 0 } },
		]);
		await env.run(webhook('set', { url: 'http://localhost:5678/webhook/abc/task-completed?secret=s' }));
		const removed = await env.run(webhook('remove'));
		expect(removed.items).toEqual([{ json: { queueId: 101, target: null, removed: true }, pairedItem: { item: 0 } }]);
		expect(await env.requests()).toEqual([
			request('PUT', 201, { target: 'https://example.com/hooks/a' }),
			request('GET', 200),
			request('PUT', 200, { target: 'http://localhost:5678/webhook/abc/task-completed?secret=s' }),
			request('PUT', 204, { target: '' }),
		]);
		expect((await env.run(webhook('get'))).items[0].json).toEqual({ queueId: 101, target: null, active: false });
	});

	test.each([
		['', 'No webhook URL given'],
		['example.com/hook', '"example.com/hook" is not a URL the service accepts'],
		['https://intranet/hook', '"https://intranet/hook" is not a URL the service accepts'],
		[`https://example.com/${'a'.repeat(240)}`, 'The webhook URL is 260 characters long; the service keeps at most 255'],
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
