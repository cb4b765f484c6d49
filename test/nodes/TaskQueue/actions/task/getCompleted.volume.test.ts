// Get Completed over thousands of completions (the rest tier: jest.config.js leaves *.volume.test.ts
// out of `npm run test:quick`); the small cases are in getCompleted.test.ts.
import { PAGES_IN_FLIGHT } from '../../../../../nodes/TaskQueue/reader/pages';
import { startProxy, type TestProxy } from '../../proxy';
import { locator, startEnv, type TestEnv } from '../../env';

let env: TestEnv;
beforeAll(async () => (env = await startEnv()));
afterAll(async () => await env.close());
beforeEach(async () => await env.client.reset());

function getCompleted(queue: unknown, rest: Record<string, unknown> = {}) {
	return { resource: 'task', operation: 'getCompleted', queue, ...rest };
}

describe('Task > Get Completed', () => {
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
			// the pages after the first are held until as many are in flight as the node may send at
			// once (then all pass): how long the node takes to send them (a loaded machine) does not
			// matter; a node sending fewer would be released by the 30 s backstop and `most` would say so
			// (a 30 ms hold saw 3 of 4 beside CI and a fast tier of four workers, CI18 of stop 66)
			let open: () => void = () => undefined;
			const allSent = new Promise<void>((resolve) => (open = resolve));
			proxy = await startProxy(env.sandbox.baseUrl, async (request) => {
				if (!request.url.includes('/tasks/completed')) return;
				inFlight++;
				most = Math.max(most, inFlight);
				if (inFlight >= PAGES_IN_FLIGHT) open();
				if (!/[?&]offset=0(&|$)/.test(request.url))
					await Promise.race([
						allSent,
						new Promise((resolve) => setTimeout(resolve, 30_000).unref()),
					]);
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
