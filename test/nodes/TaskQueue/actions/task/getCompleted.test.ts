import { PAGES_IN_FLIGHT } from '../../../../../nodes/TaskQueue/transport/completedPages';
import { startProxy, type TestProxy } from '../../proxy';
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

	describe('paging across 2,500 completed tasks while people keep completing', () => {
		let queueId: number;
		let proxy: TestProxy;
		let completeBeforePage: Map<number, number>;
		let pagesSeen: number;

		beforeEach(async () => {
			const queue = await env.client.createQueue({
				name: 'Paging',
				blocks: [{ id: 'n', name: 'N', type: 'text', text: { read_only: true } }],
			});
			queueId = queue.id;
			await env.client.createTasks(
				queueId,
				Array.from({ length: 2700 }, (_, i) => ({ n: `task ${i}` })),
			);
			await env.client.completeMany(queueId, 2500, { by: 'alice@example.com' });
			pagesSeen = 0;
			completeBeforePage = new Map();
			// completions arrive just before the service answers a given page
			proxy = await startProxy(env.sandbox.baseUrl, async (request) => {
				if (!request.url.includes('/tasks/completed')) return;
				pagesSeen++;
				const count = completeBeforePage.get(pagesSeen);
				if (count) await env.client.completeMany(queueId, count, { by: 'bob@example.com' });
			});
		});
		afterEach(async () => await proxy.close());

		test('Return All: every task completed before the run, each once, though offsets shift between pages', async () => {
			const before = (await env.client.tasks(queueId))
				.filter((t) => t.status === 'completed')
				.map((t) => t.id);
			completeBeforePage.set(2, 50).set(3, 70);
			const { items, error } = await env.run(
				getCompleted(locator(queueId), { returnAll: true }),
				[{}],
				{
					credentials: env.credentials({ baseUrl: proxy.baseUrl }),
				},
			);
			expect(error).toBeUndefined();
			const ids = items.map((i) => i.json.id as number);
			expect(new Set(ids).size).toBe(ids.length);
			expect(ids).toHaveLength(2500);
			expect([...ids].sort((a, b) => a - b)).toEqual([...before].sort((a, b) => a - b));
			expect(
				items.every(
					(i) => i.json.status === 'completed' && (i.pairedItem as { item: number }).item === 0,
				),
			).toBe(true);
			// 2,500 + 50 + 70 completed by the end; pages computed from offset + limit, not the `next` URL,
			// each after the first starting on the last task of the page before it
			expect((await env.requests()).map((r) => r.query)).toEqual([
				{ limit: '1000', offset: '0' },
				{ limit: '1000', offset: '999' },
				{ limit: '1000', offset: '1998' },
			]);
		});

		test('Limit: stops at the limit, asking only for what is missing, skipping tasks seen on the previous page', async () => {
			completeBeforePage.set(2, 40);
			const { items } = await env.run(getCompleted(locator(queueId), { limit: 1500 }), [{}], {
				credentials: env.credentials({ baseUrl: proxy.baseUrl }),
			});
			const ids = items.map((i) => i.json.id as number);
			expect(ids).toHaveLength(1500);
			expect(new Set(ids).size).toBe(1500);
			expect((await env.requests()).map((r) => r.query)).toEqual([
				{ limit: '1000', offset: '0' },
				{ limit: '501', offset: '999' }, // 41 of these were already seen
				{ limit: '40', offset: '1500' },
			]);
		});

		test('pages after the first are in flight together', async () => {
			let inFlight = 0;
			let most = 0;
			await proxy.close();
			await env.client.createTasks(
				queueId,
				Array.from({ length: 6000 }, (_, i) => ({ n: `more ${i}` })),
			);
			await env.client.completeMany(queueId, 6000, { by: 'alice@example.com' });
			proxy = await startProxy(env.sandbox.baseUrl, async (request) => {
				if (!request.url.includes('/tasks/completed')) return;
				inFlight++;
				most = Math.max(most, inFlight);
				await new Promise((resolve) => setTimeout(resolve, 30));
				inFlight--;
			});
			const { items } = await env.run(getCompleted(locator(queueId), { returnAll: true }), [{}], {
				credentials: env.credentials({ baseUrl: proxy.baseUrl }),
			});
			expect(items).toHaveLength(8500);
			expect(new Set(items.map((i) => i.json.id)).size).toBe(8500);
			expect(most).toBe(PAGES_IN_FLIGHT);
			const offsets = (await env.requests()).map((r) => Number(r.query.offset));
			expect(offsets).toEqual(Array.from({ length: 9 }, (_, i) => i * 999));
		});

		test('answers in random order with completions between them (seeded, 12 runs of 3,000 tasks): every task completed before the run comes out once', async () => {
			await proxy.close();
			let seed = 20261121;
			const random = () => {
				// mulberry32: reproducible runs
				seed = (seed + 0x6d2b79f5) | 0;
				let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
				t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
				return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
			};
			let runQueue = 0;
			let arrived = 0;
			proxy = await startProxy(env.sandbox.baseUrl, async (request) => {
				if (!request.url.includes('/tasks/completed')) return;
				await new Promise((resolve) => setTimeout(resolve, Math.floor(random() * 25)));
				if (random() < 0.6) {
					const count = 1 + Math.floor(random() * 40);
					arrived += (await env.client.completeMany(runQueue, count, { by: 'bob@example.com' }))
						.count;
				}
			});
			let pagedAgain = 0;
			for (let run = 0; run < 12; run++) {
				const queue = await env.client.createQueue({
					name: `Random ${run}`,
					blocks: [{ id: 'n', name: 'N', type: 'text', text: { read_only: true } }],
				});
				runQueue = queue.id;
				await env.client.createTasks(
					runQueue,
					Array.from({ length: 3600 }, (_, i) => ({ n: `r${run} ${i}` })),
				);
				await env.client.completeMany(runQueue, 3000, { by: 'alice@example.com' });
				const before = (await env.client.tasks(runQueue))
					.filter((t) => t.status === 'completed')
					.map((t) => t.id);
				await env.client.clearRequests();
				const { items, error } = await env.run(
					getCompleted(locator(runQueue), { returnAll: true }),
					[{}],
					{
						credentials: env.credentials({ baseUrl: proxy.baseUrl }),
					},
				);
				expect(error).toBeUndefined();
				const ids = items.map((i) => i.json.id as number);
				expect(new Set(ids).size).toBe(ids.length);
				const got = new Set(ids);
				expect(before.filter((id) => !got.has(id))).toEqual([]);
				const offsets = (await env.requests()).map((r) => Number(r.query.offset));
				if (new Set(offsets).size < offsets.length) pagedAgain++;
			}
			expect(arrived).toBeGreaterThan(100); // completions did arrive while paging
			expect(pagedAgain).toBeGreaterThan(0); // and some runs had to page again one by one
		});

		test('a later page answered first, then completions, then the page before it: paged again one by one from there, none missed', async () => {
			const before = (await env.client.tasks(queueId))
				.filter((t) => t.status === 'completed')
				.map((t) => t.id);
			await proxy.close();
			// the page at offset 999 waits until the one at 1998 has been answered, then 100 completions arrive
			proxy = await startProxy(env.sandbox.baseUrl, async (request) => {
				if (!request.url.includes('offset=999&') && !request.url.endsWith('offset=999')) return;
				for (let waited = 0; waited < 5000; waited += 10) {
					const answered = (await env.client.requests()).some((r) => r.query.offset === '1998');
					if (answered) break;
					await new Promise((resolve) => setTimeout(resolve, 10));
				}
				await env.client.completeMany(queueId, 100, { by: 'bob@example.com' });
			});
			const { items, error } = await env.run(
				getCompleted(locator(queueId), { returnAll: true }),
				[{}],
				{
					credentials: env.credentials({ baseUrl: proxy.baseUrl }),
				},
			);
			expect(error).toBeUndefined();
			const ids = items.map((i) => i.json.id as number);
			expect(new Set(ids).size).toBe(ids.length);
			expect([...ids].sort((a, b) => a - b)).toEqual([...before].sort((a, b) => a - b));
			// answered in this order: the later page first; then 1998 again, after the page before it
			expect((await env.requests()).map((r) => r.query.offset)).toEqual([
				'0',
				'1998',
				'999',
				'1998',
			]);
		});
	});
});
