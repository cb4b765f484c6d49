// Each error class, as the node reports it after a real request to the sandbox.

import { TaskQueueTrigger } from '../../../../nodes/TaskQueue/TaskQueueTrigger.node';
import { isMalformedAnswer } from '../../../../nodes/TaskQueue/transport/errors';
import { setWebhookTarget } from '../../../../nodes/TaskQueue/transport/endpoints';
import { hookContext, makeWebhookEnv } from '../../../helpers/n8n';
import { closedPort } from '../../../helpers/ports';
import { startProxy } from '../proxy';
import { locator, startEnv, type TestEnv } from '../env';

let env: TestEnv;
beforeAll(async () => (env = await startEnv()));
afterAll(async () => await env.close());
beforeEach(async () => await env.client.reset());

const getQueue = { resource: 'queue', operation: 'get', queue: locator(101) };
const createTask = {
	resource: 'task',
	operation: 'create',
	queue: locator(101),
	taskData: {
		mappingMode: 'defineBelow',
		value: { customer_message: 'x', order_total: 5, decision: 'approve' },
		matchingColumns: [],
		schema: [],
	},
};

const WRONG_KEY = ['tqs', 'wrong', 'value', '123'].join('_');
const OTHER_WRONG_KEY = ['tqs', 'wrong', 'value', '456'].join('_');

function expectNoSecret(value: unknown, secret: string) {
	expect(JSON.stringify(value)).not.toContain(secret);
}

describe('errors become NodeApiErrors that say what happened and how to fix it', () => {
	test('401: a wrong API key', async () => {
		const { error } = await env.run(getQueue, [{}], {
			credentials: env.credentials({ apiKey: WRONG_KEY }),
		});
		expect(error).toMatchObject({
			name: 'NodeApiError',
			message: 'The API key was refused while trying to get queue 101',
			description:
				'Open the Task Queue API credential and paste the API key again from the organization settings of the service.',
			httpCode: '401',
		});
		expectNoSecret(error, WRONG_KEY);
		expect((await env.requests()).map((r) => [r.status, r.authorization])).toEqual([
			[401, `Token ${WRONG_KEY}`],
		]);
	});

	test('403: a member who is not an admin may read the queue but not create a task', async () => {
		const bobKey = await env.client.mintApiKey('bob@example.com');
		const { error } = await env.run(createTask, [{}], {
			credentials: env.credentials({ apiKey: bobKey }),
		});
		expect(error).toMatchObject({
			name: 'NodeApiError',
			message: "The API key's user may not create a task in queue 101 in organization 1",
			description:
				'Check the Organization ID of the credential. Creating tasks, reading completed tasks and webhooks need an API key of an organization admin.',
			httpCode: '403',
		});
		expectNoSecret(error, bobKey);
		expect((await env.requests()).map((r) => [r.method, r.status])).toEqual([
			['GET', 200],
			['POST', 403],
		]);
	});

	test('404: an unknown queue', async () => {
		const { error } = await env.run({ ...getQueue, queue: locator(999) });
		expect(error).toMatchObject({
			name: 'NodeApiError',
			message: 'Not found: could not get queue 999',
			description:
				"Check the queue ID: pick the queue from the list, or copy the number from the queue's URL in the service. A queue of another organization is not found either (the credential's Organization ID is 1).",
			httpCode: '404',
		});
	});

	test("400: the service's own field message (a server stricter than the node)", async () => {
		// the proxy spoils the checked value on its way, as a server with other rules would see it
		const proxy = await startProxy(env.sandbox.baseUrl, (request) =>
			request.method === 'POST'
				? { ...request, body: request.body.replace('"order_total":5', '"order_total":"five"') }
				: undefined,
		);
		try {
			const { error } = await env.run(createTask, [{}], {
				credentials: env.credentials({ baseUrl: proxy.baseUrl }),
			});
			expect(error).toMatchObject({
				name: 'NodeApiError',
				message:
					'The service refused to create a task in queue 101: data: order_total: A valid number is required.',
				description:
					'Fix the value the service names and run the item again. Field names are the block IDs of the queue.',
				httpCode: '400',
			});
		} finally {
			await proxy.close();
		}
	});

	test('429: retried with Retry-After, then reported when it lasts', async () => {
		await env.client.setFaults([{ route: 'getQueue', kind: '429', retryAfter: 0 }]);
		const { error } = await env.run(getQueue);
		expect(error).toMatchObject({
			name: 'NodeApiError',
			message: 'The service is rate limiting requests; could not get queue 101 (after 5 attempts)',
			description: 'Lower the Max Concurrency option of the node, or run the workflow again later.',
			httpCode: '429',
		});
		expect((await env.requests()).map((r) => r.status)).toEqual([429, 429, 429, 429, 429]);
	});

	test('503 on a read: retried, and it recovers', async () => {
		await env.client.setFaults([{ route: 'getQueue', kind: '503', count: 2, retryAfter: 0 }]);
		const { items, error } = await env.run(getQueue);
		expect(error).toBeUndefined();
		expect(items[0].json).toMatchObject({ id: 101 });
		expect((await env.requests()).map((r) => r.status)).toEqual([503, 503, 200]);
	});

	// A server can store the task and then fail (real deployments do without a list value): a 5xx
	// on a create says the task may exist, shows what was sent, and is not retried.
	const SENT = 'Values sent: {"customer_message":"x","order_total":5,"decision":"approve"}';

	test('503 without Retry-After on a create: not retried (the task may exist), reported', async () => {
		await env.client.setFaults([{ route: 'createTask', kind: '503', count: 1 }]);
		const { error } = await env.run(createTask);
		expect(error).toMatchObject({
			name: 'NodeApiError',
			message:
				'The service failed (HTTP 503) after receiving the request to create a task in queue 101: the task may have been created',
			description: `Check the queue before running this item again: the service may have stored the task before it failed, and a rerun would create it a second time. ${SENT}`,
			httpCode: '503',
		});
		expect((await env.requests()).map((r) => [r.path, r.status])).toEqual([
			['/orgs/1/queues/101', 200],
			['/orgs/1/queues/101/tasks/create', 503],
		]);
	});

	test('HTML 500 on a create: the task may exist, not retried', async () => {
		await env.client.setFaults([{ route: 'createTask', kind: 'html500', count: 1 }]);
		const { error } = await env.run(createTask);
		expect(error).toMatchObject({
			name: 'NodeApiError',
			message:
				'The service failed (HTTP 500) after receiving the request to create a task in queue 101: the task may have been created',
			description: `Check the queue before running this item again: the service may have stored the task before it failed, and a rerun would create it a second time. ${SENT}`,
			httpCode: '500',
		});
		expect((await env.requests()).filter((r) => r.path.endsWith('/create'))).toHaveLength(1);
	});

	test('an answer that is not valid HTTP is reported as such, not as "could not reach"', async () => {
		// a removal on a queue without webhook: the real 204 with a body, met through n8n-core
		const hookEnv = makeWebhookEnv({
			types: { taskQueueTrigger: new TaskQueueTrigger() },
			node: { type: 'taskQueueTrigger', parameters: { queue: locator(101) } },
			credentials: env.credentials(),
		});
		const error = await setWebhookTarget.call(hookContext(hookEnv), 101, '').then(
			() => undefined,
			(e: unknown) => e,
		);
		expect(error).toMatchObject({
			name: 'NodeApiError',
			message:
				'The service answered the request to remove the webhook of queue 101 with a malformed HTTP response (HPE_INVALID_CONSTANT)',
			description:
				'The service received the request and may have acted on it; n8n could not read its answer. Check the queue in the service, or read it again with a Get operation.',
		});
		expect(isMalformedAnswer(error)).toBe(true);
		expect((await env.requests()).map((r) => [r.method, r.path, r.status])).toEqual([
			['PUT', '/orgs/1/queues/101/webhook', 204],
		]);
	});

	test('a connection reset during a create: not retried, and the message says the task may exist', async () => {
		await env.client.setFaults([{ route: 'createTask', kind: 'reset', count: 1 }]);
		const { error } = await env.run(createTask);
		expect(error).toMatchObject({
			name: 'NodeApiError',
			message: 'Could not reach the Task Queue Service to create a task in queue 101 (ECONNRESET)',
		});
		expect((error as unknown as { description: string }).description).toContain(
			'The task may or may not have been created: check the queue before running this item again.',
		);
		expect((await env.requests()).filter((r) => r.path.endsWith('/create'))).toHaveLength(1);
	});

	test('a truncated answer', async () => {
		await env.client.setFaults([{ route: 'getQueue', kind: 'truncated', count: 1 }]);
		const { error } = await env.run(getQueue);
		expect(error).toMatchObject({
			name: 'NodeApiError',
			message: 'The service\'s answer to "get queue 101" has an unexpected shape',
		});
	});

	test('connection refused on a closed port: retried, then reported with the Base URL to check', async () => {
		const baseUrl = `http://127.0.0.1:${await closedPort()}`;
		const { error } = await env.run(getQueue, [{}], { credentials: env.credentials({ baseUrl }) });
		expect(error).toMatchObject({
			name: 'NodeApiError',
			message:
				'Could not reach the Task Queue Service to get queue 101 (ECONNREFUSED) (after 5 attempts)',
			description: `Check the Base URL of the Task Queue API credential (${baseUrl}) and that the service is running and reachable from n8n.`,
		});
	});

	test('a Base URL with a user name and password: the error shows it without them', async () => {
		const port = await closedPort();
		const { error } = await env.run(getQueue, [{}], {
			credentials: env.credentials({ baseUrl: `http://admin:s3cret-pass@127.0.0.1:${port}` }),
		});
		expect(error).toMatchObject({
			name: 'NodeApiError',
			description: `Check the Base URL of the Task Queue API credential (http://127.0.0.1:${port}) and that the service is running and reachable from n8n.`,
		});
		expect(JSON.stringify(error)).not.toContain('s3cret-pass');
	});

	test('continue on fail: a paired error item, no secret in it', async () => {
		const { items, error } = await env.run(getQueue, [{}, {}], {
			continueOnFail: true,
			credentials: env.credentials({ apiKey: OTHER_WRONG_KEY }),
		});
		expect(error).toBeUndefined();
		const json = {
			error: 'The API key was refused while trying to get queue 101',
			description:
				'Open the Task Queue API credential and paste the API key again from the organization settings of the service.',
			httpCode: '401',
		};
		expect(items).toEqual([
			{ json, pairedItem: { item: 0 } },
			{ json, pairedItem: { item: 1 } },
		]);
		expectNoSecret(items, OTHER_WRONG_KEY);
	});
});

describe('work done once per execution', () => {
	test('50 items: the credential decrypted once, the queue configuration read once', async () => {
		const credentials = env.credentials();
		const input = Array.from({ length: 50 }, (_, i) => ({
			customer_message: `m${i}`,
			decision: 'approve',
		}));
		const { items } = await env.run(
			{
				...createTask,
				taskData: { mappingMode: 'autoMapInputData', value: null, matchingColumns: [], schema: [] },
			},
			input,
			{ credentials },
		);
		expect(items).toHaveLength(50);
		expect(credentials.decryptCount).toBe(1);
		const requests = await env.requests();
		expect(requests.filter((r) => r.method === 'GET')).toHaveLength(1);
		expect(requests).toHaveLength(51);
	});
});
