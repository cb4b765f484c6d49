import { locator, startEnv, type TestEnv } from '../../env';

let env: TestEnv;
beforeAll(async () => (env = await startEnv()));
afterAll(async () => await env.close());
beforeEach(async () => await env.client.reset());

const KEY_HEADER = 'Token tqs_sandbox_2f8a61c4e9d07b35';

function getCompleted(queue: unknown, rest: Record<string, unknown> = {}) {
	return { resource: 'task', operation: 'getCompleted', queue, ...rest };
}

function pageRequest(queueId: number, query: Record<string, string>) {
	return {
		method: 'GET',
		path: `/orgs/1/queues/${queueId}/tasks/completed`,
		query,
		body: null,
		status: 200,
		authorization: KEY_HEADER,
	};
}

describe('Task > Get Completed', () => {
	test('Limit: one page of exactly that size, newest first, one item per task', async () => {
		const { items, error } = await env.run(getCompleted(locator(101), { limit: 2 }));
		expect(error).toBeUndefined();
		expect(await env.requests()).toEqual([pageRequest(101, { limit: '2', offset: '0' })]);
		const stored = new Map((await env.client.tasks(101)).map((t) => [t.id, t]));
		expect(items).toEqual([
			{ json: stored.get(3), pairedItem: { item: 0 } },
			{ json: stored.get(2), pairedItem: { item: 0 } },
		]);
		expect(items[0].json).toMatchObject({
			id: 3,
			status: 'completed',
			completed_by: 'alice@example.com',
		});
	});

	test('Return All: pages of 1000', async () => {
		const { items } = await env.run(getCompleted(locator(101), { returnAll: true }));
		expect(await env.requests()).toEqual([pageRequest(101, { limit: '1000', offset: '0' })]);
		expect(items.map((i) => i.json.id)).toEqual([3, 2, 1]);
	});

	test('an empty queue gives no items', async () => {
		const { items, error } = await env.run(getCompleted(locator(103), { returnAll: true }));
		expect(error).toBeUndefined();
		expect(items).toEqual([]);
	});

	test('dates: sent as whole days, and applied exactly to completed_at', async () => {
		const { items } = await env.run(
			getCompleted(locator(101), {
				returnAll: true,
				filters: {
					completedAfter: '2024-06-02T10:00:00Z',
					completedBefore: '2024-06-03T11:00:00Z',
				},
			}),
		);
		expect(await env.requests()).toEqual([
			pageRequest(101, {
				start_date: '2024-06-02',
				end_date: '2024-06-03',
				limit: '1000',
				offset: '0',
			}),
		]);
		// task 3 (2024-06-03T11:45) is after the end, though on the end day; task 2 (06-02T10:30) is in
		expect(items.map((i) => i.json.id)).toEqual([2]);
		const after = await env.run(
			getCompleted(locator(101), {
				limit: 50,
				filters: { completedAfter: '2024-06-02T10:31:00Z' },
			}),
		);
		expect(after.items.map((i) => i.json.id)).toEqual([3]);
	});

	test('a date n8n cannot read, or After not before Before, is refused before any request', async () => {
		const bad = await env.run(
			getCompleted(locator(101), { filters: { completedAfter: '={{ "last tuesday" }}' } }),
		);
		expect(bad.error).toMatchObject({
			name: 'NodeOperationError',
			message: 'Completed After is not a date: "last tuesday"',
			description:
				'Pick a date and time for Completed After, or give an ISO 8601 value such as 2024-06-01T09:00:00.',
		});
		const swapped = await env.run(
			getCompleted(locator(101), {
				filters: {
					completedAfter: '2024-06-03T00:00:00Z',
					completedBefore: '2024-06-02T00:00:00Z',
				},
			}),
		);
		expect(swapped.error).toMatchObject({
			name: 'NodeOperationError',
			message: 'Completed After must be earlier than Completed Before',
		});
		expect(await env.requests()).toEqual([]);
	});
});
