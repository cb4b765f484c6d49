// Fault injection per route (429, 503, reset, html500, slow, truncated), count and
// probability, latency, and the legacy 1.0.x defect mode.
import { SandboxClient } from '../../sandbox/client';
import { call, useSandbox } from './helpers';

const env = useSandbox();

const api = (method: string, path: string, options?: Parameters<typeof call>[3]) =>
	call(env.sandbox.baseUrl, method, path, options);
const createTask = async () =>
	await api('POST', '/orgs/1/queues/101/tasks/create', {
		body: { data: { customer_message: 'x' } },
	});
const pending = async () => (await env.client.getQueue(101)).n_tasks;

test('test control needs the admin secret', async () => {
	const none = await call(env.sandbox.baseUrl, 'POST', '/_sandbox/reset', {
		token: null,
		body: {},
	});
	expect(none.status).toBe(401);
	const wrong = await call(env.sandbox.baseUrl, 'GET', '/_sandbox/requests', {
		token: null,
		headers: { 'x-sandbox-admin': 'nope' },
	});
	expect(wrong.status).toBe(401);
	await expect(new SandboxClient(env.sandbox.baseUrl, 'wrong').tasks(101)).rejects.toMatchObject({
		status: 401,
	});
});

test('429 with Retry-After, applied count times, nothing stored', async () => {
	await env.client.setFaults([{ route: 'createTask', kind: '429', retryAfter: 3, count: 2 }]);
	const a = await createTask();
	expect(a.status).toBe(429);
	expect(a.headers['retry-after']).toBe('3');
	expect(a.json).toEqual({
		status_code: 429,
		errors: [{ message: 'Request was throttled. Expected available in 3 seconds.' }],
	});
	expect((await createTask()).status).toBe(429);
	expect(await pending()).toBe(3);
	expect((await createTask()).status).toBe(201);
	expect(await pending()).toBe(4);
	// other routes untouched
	expect((await api('GET', '/orgs/1/queues')).status).toBe(200);
});

test('after N: the first N matching requests pass, then the fault applies (count times)', async () => {
	await env.client.setFaults([{ route: 'createTask', kind: '429', after: 2, count: 1 }]);
	expect((await api('GET', '/orgs/1/queues')).status).toBe(200); // another route: not counted
	expect((await createTask()).status).toBe(201);
	expect((await createTask()).status).toBe(201);
	expect((await createTask()).status).toBe(429);
	expect((await createTask()).status).toBe(201);
	await expect(
		env.client.setFaults([{ route: 'createTask', kind: '429', after: -1 }]),
	).rejects.toMatchObject({ status: 400 });
});

test('503 (HTML, with Retry-After when given)', async () => {
	await env.client.setFaults([{ route: 'listQueues', kind: '503', retryAfter: 1 }]);
	const res = await api('GET', '/orgs/1/workflows');
	expect(res.status).toBe(503);
	expect(res.headers['retry-after']).toBe('1');
	expect(res.headers['content-type']).toMatch(/^text\/html/);
	expect(res.json).toBeUndefined();
});

test('reset destroys the connection before the request is processed', async () => {
	await env.client.setFaults([{ route: 'createTask', kind: 'reset', count: 1 }]);
	await expect(createTask()).rejects.toMatchObject({ code: 'ECONNRESET' });
	expect(await pending()).toBe(3);
	expect((await createTask()).status).toBe(201);
	const log = await env.client.requests();
	expect(log.map((e) => [e.route, e.status, e.fault])).toEqual([
		['createTask', null, 'reset'],
		['createTask', 201, null],
	]);
});

test('html500 on any route with "*"', async () => {
	await env.client.setFaults([{ route: '*', kind: 'html500' }]);
	for (const [method, path] of [
		['GET', '/orgs/1/queues'],
		['GET', '/orgs/1/queues/101'],
		['PUT', '/orgs/1/workflows/101/flush'],
		['GET', '/orgs/1/queues/101/webhook'],
	]) {
		const res = await api(method, path);
		expect(res.status).toBe(500);
		expect(res.text).toContain('Server Error (500)');
	}
	expect(await pending()).toBe(3);
});

test('slow: delays, then processes normally', async () => {
	await env.client.setFaults([{ route: 'createTask', kind: 'slow', delayMs: 200 }]);
	const started = Date.now();
	const res = await createTask();
	expect(res.status).toBe(201);
	expect(Date.now() - started).toBeGreaterThanOrEqual(190);
	expect(await pending()).toBe(4);
});

test('truncated: processed, then half a JSON body', async () => {
	await env.client.setFaults([{ route: 'createTask', kind: 'truncated', count: 1 }]);
	const res = await createTask();
	expect(res.status).toBe(201);
	expect(res.json).toBeUndefined();
	expect(res.text.startsWith('{"id":')).toBe(true);
	expect(() => JSON.parse(res.text) as unknown).toThrow();
	expect(await pending()).toBe(4);
	const tasks = await env.client.tasks(101);
	const full = JSON.stringify(tasks[tasks.length - 1]);
	expect(res.text).toBe(full.slice(0, Math.floor(full.length / 2)));
});

test('probability draws from a seeded PRNG: the same seed gives the same faults', async () => {
	const run = async () => {
		await env.client.setFaults({
			rules: [{ route: 'listQueues', kind: '503', probability: 0.3 }],
			seed: 42,
		});
		const statuses: number[] = [];
		for (let i = 0; i < 30; i++) statuses.push((await api('GET', '/orgs/1/queues')).status);
		return statuses;
	};
	const first = await run();
	expect(await run()).toEqual(first);
	expect(first).toContain(503);
	expect(first).toContain(200);
	await env.client.clearFaults();
	expect((await env.client.faults()).rules).toEqual([]);
});

test('latencyMs delays every API answer; setLatency keeps the rules', async () => {
	await env.client.setFaults([{ route: 'flush', kind: '429', count: 5 }]);
	await env.client.setLatency(150);
	const started = Date.now();
	expect((await api('GET', '/orgs/1/queues')).status).toBe(200);
	expect(Date.now() - started).toBeGreaterThanOrEqual(140);
	const state = await env.client.faults();
	expect(state.latencyMs).toBe(150);
	expect(state.rules).toEqual([{ route: 'flush', kind: '429', count: 5, remaining: 5 }]);
	await env.client.clearFaults();
	expect((await env.client.faults()).latencyMs).toBe(0);
});

test('the request log counts the API requests in flight when each arrived', async () => {
	await env.client.setLatency(1000);
	await Promise.all(Array.from({ length: 6 }, async () => await createTask()));
	await api('GET', '/orgs/1/queues');
	const log = await env.client.requests();
	// each entry counts itself and every request that arrived before it and was answered after its
	// arrival, by the log's own order of events (under load the six may not all overlap: CI27's loop)
	const inFlightAt = (arrived: number) =>
		log.filter((r) => r.arrivedAt <= arrived && r.answeredAt > arrived).length;
	expect(log.map((r) => r.inFlight)).toEqual(log.map((r) => inFlightAt(r.arrivedAt)));
	expect(Math.max(...log.map((r) => r.inFlight))).toBeGreaterThanOrEqual(2);
	expect(log.at(-1)).toMatchObject({ route: 'listQueues', inFlight: 1 });
});

test('capacity: at most N requests served at once, the others wait their turn (answers slow down)', async () => {
	await env.client.setFaults({ latencyMs: 100, capacity: 2 });
	expect(await env.client.faults()).toMatchObject({ latencyMs: 100, capacity: 2 });
	const started = Date.now();
	const answers = await Promise.all(
		Array.from({ length: 6 }, async () => {
			const res = await createTask();
			return { status: res.status, ms: Date.now() - started };
		}),
	);
	expect(answers.map((a) => a.status)).toEqual(Array(6).fill(201));
	// three rounds of two: 100, 200 and 300 ms at least (without a capacity, all six take 100)
	const ms = answers.map((a) => a.ms).sort((a, b) => a - b);
	expect(ms[2]).toBeGreaterThanOrEqual(190);
	expect(ms[4]).toBeGreaterThanOrEqual(290);
	await expect(env.client.setCapacity(0)).rejects.toMatchObject({ status: 400 });
	await env.client.setCapacity(null);
	expect((await env.client.faults()).capacity).toBeNull();
	await env.client.setCapacity(1);
	await env.client.clearFaults();
	expect((await env.client.faults()).capacity).toBeNull();
});

test('malformed rules are refused', async () => {
	await expect(
		env.client.setFaults([{ route: 'createTask', kind: 'boom' as '429' }]),
	).rejects.toMatchObject({ status: 400 });
	await expect(env.client.setFaults([{ webhook: 'lose' as 'drop' }])).rejects.toMatchObject({
		status: 400,
	});
});

describe('legacy defect mode (self-hosted 1.0.x)', () => {
	beforeEach(async () => {
		await env.client.setLegacyDefect(true);
	});

	test('HTML 500 on the /queues/ get, webhook and flush routes', async () => {
		for (const [method, path] of [
			['GET', '/orgs/1/queues/101'],
			['GET', '/orgs/1/queues/101/webhook'],
			['PUT', '/orgs/1/queues/101/webhook'],
			['PUT', '/orgs/1/queues/101/flush'],
		]) {
			const res = await api(method, path, { body: { target: 'https://hooks.example.com/x' } });
			expect([method, path, res.status]).toEqual([method, path, 500]);
			expect(res.headers['content-type']).toMatch(/^text\/html/);
		}
		expect(await pending()).toBe(3);
		expect((await env.client.getQueue(101)).webhook).toBeUndefined();
	});

	test('the /workflows/ routes all work, and list, create and completed work under both', async () => {
		expect((await api('GET', '/orgs/1/workflows/101')).status).toBe(200);
		expect((await api('GET', '/orgs/1/workflows/101/webhook')).json).toEqual({ target: '' });
		expect(
			(
				await api('PUT', '/orgs/1/workflows/101/webhook', {
					body: { target: 'https://hooks.example.com/x' },
				})
			).status,
		).toBe(201);
		expect((await api('PUT', '/orgs/1/workflows/101/flush')).status).toBe(200);
		for (const noun of ['queues', 'workflows']) {
			expect((await api('GET', `/orgs/1/${noun}`)).status).toBe(200);
			expect((await api('GET', `/orgs/1/${noun}/101/tasks/completed`)).status).toBe(200);
			expect(
				(await api('POST', `/orgs/1/${noun}/101/tasks/create`, { body: { data: { note: 'x' } } }))
					.status,
			).toBe(201);
		}
	});

	test('auth is still checked first; turning it off restores the routes', async () => {
		expect((await api('GET', '/orgs/1/queues/101', { token: null })).status).toBe(401);
		await env.client.setLegacyDefect(false);
		expect((await api('GET', '/orgs/1/queues/101')).status).toBe(200);
	});
});

test('the request log records method, path, query, headers, parsed body and status', async () => {
	await env.client.clearRequests();
	await api('POST', '/orgs/1/queues/101/tasks/create?x=1', { body: { data: { note: 'n' } } });
	await api('GET', '/orgs/1/queues/101/', { token: null });
	const log = await env.client.requests();
	expect(log).toEqual([
		expect.objectContaining({
			method: 'POST',
			path: '/orgs/1/queues/101/tasks/create',
			query: { x: '1' },
			headers: expect.objectContaining({
				authorization: `Token ${env.sandbox.apiKey}`,
				'content-type': 'application/json',
			}),
			body: { data: { note: 'n' } },
			route: 'createTask',
			status: 201,
			fault: null,
			timestamp: expect.any(String),
		}),
		expect.objectContaining({
			method: 'GET',
			path: '/orgs/1/queues/101/',
			route: null,
			status: 404,
		}),
	]);
	expect(await env.client.requests({ since: log[0].seq })).toEqual([log[1]]);
	await env.client.clearRequests();
	expect(await env.client.requests()).toEqual([]);
});
