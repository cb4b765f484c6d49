// The Task Queue Poll Trigger through n8n-core's PollContext against the sandbox over HTTP:
// cursor placement, idle cost, order, manual mode (the 2,500-completion backlogs, one read while
// completions keep arriving, one under n8n 2.x's poll budget: TaskQueuePollTrigger.volume.test.ts).
import type { IDataObject, INodeParameters } from 'n8n-workflow';

import { locator, PollTriggerUnderTest, startTriggerEnv, type TriggerTestEnv } from './trigger/env';

const QUEUE = 101;
const BY = { by: 'alice@example.com' };

let env: TriggerTestEnv;

beforeAll(async () => {
	env = await startTriggerEnv();
});

afterAll(async () => {
	await env.close();
});

beforeEach(async () => {
	await env.client.reset();
});

function trigger(options: Record<string, unknown> = {}, queueId = QUEUE) {
	return new PollTriggerUnderTest({
		credentials: env.credentials(),
		parameters: { queue: locator(queueId), options: options as INodeParameters },
	});
}

async function completedRequests() {
	return (await env.client.requests())
		.filter((r) => r.path.endsWith('/tasks/completed'))
		.map((r) => ({ method: r.method, path: r.path, query: r.query, status: r.status }));
}

/** The queue's completed tasks, newest first, as the API lists them. */
async function completedNewestFirst(queueId = QUEUE): Promise<IDataObject[]> {
	const page = await env.client.tasks(queueId);
	return page
		.filter((t) => t.status === 'completed')
		.sort((a, b) => micros(b).localeCompare(micros(a))) as unknown as IDataObject[];
}

/** The sandbox writes six fraction digits, none on a whole second ("…:22Z" is before "…:22.1Z"). */
function micros(task: { completed_at: string | null }): string {
	return String(task.completed_at).replace(/:(\d{2})Z$/, ':$1.000000Z');
}

describe('first activation', () => {
	it('starts from "now": the first poll emits nothing and places the cursor at the newest completion, in one request', async () => {
		const t = trigger();
		const [newest] = await completedNewestFirst();
		await env.client.clearRequests();
		expect(await t.poll()).toBeNull();
		expect(t.state()).toEqual({
			queueId: QUEUE,
			cursor: { at: expect.any(String), ids: [newest.id] },
		});
		expect(await completedRequests()).toEqual([
			{
				method: 'GET',
				path: '/orgs/1/queues/101/tasks/completed',
				query: { limit: '20' },
				status: 200,
			},
		]);
	});

	it('an idle poll costs exactly one request', async () => {
		const t = trigger();
		await t.poll();
		for (let i = 0; i < 3; i++) {
			await env.client.clearRequests();
			expect(await t.poll()).toBeNull();
			expect(await env.client.requests()).toHaveLength(1);
		}
	});

	it('then emits each new completion once, oldest first, as the service sends it', async () => {
		const t = trigger();
		await t.poll();
		const { ids } = await env.client.createTasks(QUEUE, 5);
		const done = [];
		for (const id of ids) done.push(await env.client.complete(QUEUE, id, BY));
		await env.client.clearRequests();
		const result = await t.poll();
		expect(result).toEqual([done.map((task) => ({ json: task }))]);
		expect(await env.client.requests()).toHaveLength(1);
		expect(await t.poll()).toBeNull();
	});

	it('with Include Existing, the first poll emits every completion so far, oldest first', async () => {
		const t = trigger({ includeExisting: true });
		const existing = await completedNewestFirst();
		expect(existing).toHaveLength(3);
		const result = await t.poll();
		expect(result?.[0].map((i) => i.json.id)).toEqual([...existing].reverse().map((x) => x.id));
		expect(await t.poll()).toBeNull();
	});

	it('Output Data Only emits the data object', async () => {
		const t = trigger({ dataOnly: true });
		await t.poll();
		const { ids } = await env.client.createTasks(QUEUE, 1);
		const task = await env.client.complete(QUEUE, ids[0], BY);
		expect(await t.poll()).toEqual([[{ json: task.data }]]);
	});

	it('a forced re-completion is a new event', async () => {
		const t = trigger();
		await t.poll();
		const [older] = await completedNewestFirst();
		const again = await env.client.recomplete(older.id as number);
		expect(await t.poll()).toEqual([[{ json: again }]]);
	});
});

describe('manual mode', () => {
	it('returns the latest completed task, one item, without touching the cursor', async () => {
		const t = trigger();
		const [newest] = await completedNewestFirst();
		await env.client.clearRequests();
		const result = await t.poll('manual');
		expect(result).toEqual([[{ json: newest }]]);
		expect(t.db).toEqual({});
		expect(await completedRequests()).toEqual([
			{
				method: 'GET',
				path: '/orgs/1/queues/101/tasks/completed',
				query: { limit: '1' },
				status: 200,
			},
		]);
	});

	it('says so when the queue has no completed task yet', async () => {
		const t = trigger({}, 102);
		const error = await t.poll('manual').catch((e: Error) => e);
		expect((error as Error).message).toBe('No task of queue 102 has been completed yet');
	});
});
