// Webhook > Remove's decisions, fast: n8n-core's WorkflowExecute runs the real node, with the
// endpoint layer (transport/endpoints.ts) standing in for the service. The sandbox tests beside
// this one (webhook.test.ts) prove the same over HTTP; these reach the branches a sandbox cannot
// time reliably (the webhook set again between the malformed answer and the second read).
import { NodeApiError } from 'n8n-workflow';

import { TaskQueue } from '../../../../../nodes/TaskQueue/TaskQueue.node';
import * as endpoints from '../../../../../nodes/TaskQueue/transport/endpoints';
import { malformedAnswerError } from '../../../../../nodes/TaskQueue/transport/errors';
import { runActionNode, TestCredentialsHelper } from '../../../../helpers/n8n';

// The operations call the endpoints through the module's exports, so spies stand in for them.
const getQueue = jest.spyOn(endpoints, 'getQueue');
const getWebhookTarget = jest.spyOn(endpoints, 'getWebhookTarget');
const setWebhookTarget = jest.spyOn(endpoints, 'setWebhookTarget');

const node = new TaskQueue();
const credentials = new TestCredentialsHelper({
	baseUrl: 'http://127.0.0.1:9',
	apiKey: 'unused',
	organizationId: 1,
	apiPaths: 'queues',
	ignoreSslIssues: false,
});

async function remove() {
	return await runActionNode({
		types: { taskQueue: node },
		node: {
			type: 'taskQueue',
			parameters: {
				resource: 'webhook',
				operation: 'remove',
				queue: { __rl: true, mode: 'id', value: '101' },
			},
		},
		input: [{}],
		credentials,
	});
}

const REMOVED = [{ json: { queueId: 101, target: null, removed: true }, pairedItem: { item: 0 } }];

afterAll(() => jest.restoreAllMocks());

beforeEach(() => {
	jest.resetAllMocks();
	getQueue.mockResolvedValue({ id: 101, name: 'Refund Requests', data: [] });
	setWebhookTarget.mockResolvedValue(null);
});

test('nothing set: reads, writes nothing', async () => {
	getWebhookTarget.mockResolvedValue(null);
	const run = await remove();
	expect(run.error).toBeUndefined();
	expect(run.items).toEqual(REMOVED);
	expect(setWebhookTarget).not.toHaveBeenCalled();
});

test('a target set: writes the empty target once', async () => {
	getWebhookTarget.mockResolvedValue('https://example.com/hook');
	expect((await remove()).items).toEqual(REMOVED);
	expect(setWebhookTarget.mock.calls).toEqual([[101, '', 0]]);
});

test('a malformed answer to the write, and the webhook gone on the second read: removed', async () => {
	getWebhookTarget.mockResolvedValueOnce('https://example.com/hook').mockResolvedValueOnce(null);
	setWebhookTarget.mockImplementation(async function (this: { getNode(): never }) {
		throw malformedAnswerError(
			this.getNode(),
			{
				method: 'PUT',
				path: '/101/webhook',
				retry: 'idempotent',
				action: 'remove the webhook of queue 101',
				itemIndex: 0,
			},
			'HPE_INVALID_CONSTANT',
		);
	});
	const { items, error } = await remove();
	expect(error).toBeUndefined();
	expect(items).toEqual(REMOVED);
	expect(getWebhookTarget).toHaveBeenCalledTimes(2);
});

test('a malformed answer, and a target still there on the second read: the malformed answer is the error', async () => {
	getWebhookTarget
		.mockResolvedValueOnce('https://example.com/hook')
		.mockResolvedValueOnce('https://example.com/new');
	setWebhookTarget.mockImplementation(async function (this: { getNode(): never }) {
		throw malformedAnswerError(
			this.getNode(),
			{
				method: 'PUT',
				path: '/101/webhook',
				retry: 'idempotent',
				action: 'remove the webhook of queue 101',
				itemIndex: 0,
			},
			'HPE_INVALID_CONSTANT',
		);
	});
	const { error } = await remove();
	expect(error).toMatchObject({
		name: 'NodeApiError',
		message:
			'The service answered the request to remove the webhook of queue 101 with a malformed HTTP response (HPE_INVALID_CONSTANT)',
	});
});

test('any other failure of the write is not read again', async () => {
	getWebhookTarget.mockResolvedValue('https://example.com/hook');
	setWebhookTarget.mockImplementation(async function (this: { getNode(): never }) {
		throw new NodeApiError(
			this.getNode(),
			{ statusCode: 403 },
			{
				message: "The API key's user may not remove the webhook of queue 101 in organization 1",
				httpCode: '403',
			},
		);
	});
	const { error } = await remove();
	expect(error).toMatchObject({ name: 'NodeApiError', httpCode: '403' });
	expect(getWebhookTarget).toHaveBeenCalledTimes(1);
});
