// The sandbox's paging of 1,205 completed tasks (the rest tier: jest.config.js leaves *.volume.test.ts
// out of `npm run test:quick`); the rest of its API is in api.test.ts.
import { ALICE, call, useSandbox } from './helpers';

const env = useSandbox();

const api = (method: string, path: string, options?: Parameters<typeof call>[3]) =>
	call(env.sandbox.baseUrl, method, path, options);

describe('pagination of completed tasks', () => {
	let queueId: number;
	const path = () => `/orgs/1/queues/${queueId}/tasks/completed`;

	beforeEach(async () => {
		const queue = await env.client.createQueue({
			name: 'Paging',
			blocks: [{ id: 'n', name: 'N', type: 'number', number: {} }],
		});
		queueId = queue.id;
		await env.client.createTasks(queueId, 1205);
		await env.client.completeMany(queueId, 1205, { by: ALICE });
	});

	test('default limit 100, count is the total, next is an absolute URL from the Host header', async () => {
		const res = await api('GET', path());
		const body = res.json as {
			next: string;
			previous: null;
			count: number;
			tasks: Array<{ id: number }>;
		};
		expect(body.count).toBe(1205);
		expect(body.tasks).toHaveLength(100);
		expect(body.next).toBe(`${env.sandbox.baseUrl}${path()}?limit=100&offset=100`);
		expect(body.previous).toBeNull();
		const viaProxy = await api('GET', path(), { headers: { Host: 'proxy.internal:8000' } });
		expect((viaProxy.json as { next: string }).next).toBe(
			`http://proxy.internal:8000${path()}?limit=100&offset=100`,
		);
	});

	test('newest completion first across pages', async () => {
		const all = await env.client.tasks(queueId);
		const byCompletion = [...all].reverse().map((t) => t.id);
		const first = (await api('GET', `${path()}?limit=3`)).json as { tasks: Array<{ id: number }> };
		expect(first.tasks.map((t) => t.id)).toEqual(byCompletion.slice(0, 3));
		const second = (await api('GET', `${path()}?limit=3&offset=3`)).json as {
			tasks: Array<{ id: number }>;
			previous: string;
			next: string;
		};
		expect(second.tasks.map((t) => t.id)).toEqual(byCompletion.slice(3, 6));
		expect(second.previous).toBe(`${env.sandbox.baseUrl}${path()}?limit=3`);
		expect(second.next).toBe(`${env.sandbox.baseUrl}${path()}?limit=3&offset=6`);
		const third = (await api('GET', `${path()}?limit=3&offset=7`)).json as { previous: string };
		expect(third.previous).toBe(`${env.sandbox.baseUrl}${path()}?limit=3&offset=4`);
	});

	test('a limit above 1000 is silently capped at 1000', async () => {
		const res = (await api('GET', `${path()}?limit=5000`)).json as {
			tasks: unknown[];
			next: string;
			count: number;
		};
		expect(res.tasks).toHaveLength(1000);
		expect(res.count).toBe(1205);
		expect(res.next).toBe(`${env.sandbox.baseUrl}${path()}?limit=1000&offset=1000`);
		const last = (await api('GET', `${path()}?limit=1000&offset=1000`)).json as {
			tasks: unknown[];
			next: null;
			previous: string;
		};
		expect(last.tasks).toHaveLength(205);
		expect(last.next).toBeNull();
		expect(last.previous).toBe(`${env.sandbox.baseUrl}${path()}?limit=1000`);
	});

	test('offset past the end: empty page, count kept, no next', async () => {
		const res = (await api('GET', `${path()}?offset=5000&limit=10`)).json as Record<
			string,
			unknown
		>;
		expect(res).toEqual({
			next: null,
			previous: `${env.sandbox.baseUrl}${path()}?offset=4990&limit=10`,
			count: 1205,
			tasks: [],
		});
	});

	test('invalid limit and offset fall back to the defaults', async () => {
		for (const q of ['limit=0', 'limit=-5', 'limit=abc', 'offset=-1', 'offset=x']) {
			const res = (await api('GET', `${path()}?${q}`)).json as { tasks: unknown[] };
			expect([q, res.tasks.length]).toEqual([q, 100]);
		}
	});

	test('start_date / end_date filter by completion day; unparseable values are ignored', async () => {
		const today = new Date().toISOString().slice(0, 10);
		const count = async (query: string) =>
			((await api('GET', `/orgs/1/queues/101/tasks/completed?${query}`)).json as { count: number })
				.count;
		await env.client.complete(101, 4, { by: ALICE, data: { decision: 'approve' } });
		expect(await count('')).toBe(4);
		expect(await count('start_date=2024-06-02')).toBe(3);
		expect(await count('start_date=2024-06-02&end_date=2024-06-02')).toBe(1);
		expect(await count('end_date=2024-06-01')).toBe(1);
		expect(await count(`start_date=${today}`)).toBe(1);
		expect(await count('start_date=yesterday')).toBe(4);
		expect(await count('start_date=2024-13-45&end_date=06/02/2024')).toBe(4);
	});
});
