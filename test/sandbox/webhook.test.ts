// Webhook delivery as real deployments do it: one POST of the bare task per completion, no
// retry, no signature, the target called verbatim; failures only recorded; delivery faults.
import http from 'http';
import type { AddressInfo } from 'net';

import { asDelivered } from '../../sandbox/time';
import {
	ALICE,
	BOB,
	call,
	ISO_MICROS,
	ISO_MS,
	sleep,
	startListener,
	type Listener,
	useSandbox,
} from './helpers';

const env = useSandbox();
let listener: Listener;

beforeEach(async () => {
	listener = await startListener();
});

afterEach(async () => {
	await listener.close();
});

test('completing a task POSTs the bare task once, to the target verbatim, without signature', async () => {
	const target = `${listener.url}/webhook/abc?token=x&y=1`;
	const set = await call(env.sandbox.baseUrl, 'PUT', '/orgs/1/queues/101/webhook', {
		body: { target },
	});
	expect(set.status).toBe(201);
	const taken = await env.client.takeNext(101, ALICE);
	const done = await env.client.complete(101, taken.id, {
		by: ALICE,
		data: { decision: 'approve', note: 'fine' },
	});
	expect(done).toEqual({
		...taken,
		status: 'completed',
		completed_at: expect.stringMatching(ISO_MICROS),
		completed_by: ALICE,
		data: { ...taken.data, decision: 'approve', note: 'fine' },
	});
	// the delivery carries the same instants at millisecond precision, as real deployments send them
	expect(asDelivered(done).completed_at).toMatch(ISO_MS);
	const [hook] = await listener.waitFor(1);
	await sleep(100);
	expect(listener.received).toHaveLength(1);
	expect(hook.method).toBe('POST');
	expect(hook.url).toBe('/webhook/abc?token=x&y=1');
	expect(hook.headers['content-type']).toBe('application/json');
	expect(hook.headers.authorization).toBeUndefined();
	expect(Object.keys(hook.headers).filter((h) => /signature|hmac/i.test(h))).toEqual([]);
	expect(JSON.parse(hook.body)).toEqual(asDelivered(done));
	const calls = await env.client.waitForWebhookCalls(1);
	expect(calls).toEqual([
		expect.objectContaining({
			url: target,
			queueId: 101,
			taskId: done.id,
			status: 200,
			error: null,
			state: 'done',
			fault: null,
			body: asDelivered(done),
		}),
	]);
});

test('no webhook set: nothing is called', async () => {
	await env.client.complete(101, undefined, { by: ALICE });
	await sleep(100);
	expect(await env.client.webhookCalls()).toEqual([]);
});

test('forced re-completion fires again with the same id and a new completed_at', async () => {
	await env.client.setWebhook(101, `${listener.url}/hook`);
	const first = await env.client.complete(101, 4, { by: ALICE, data: { decision: 'reject' } });
	await listener.waitFor(1);
	await sleep(2);
	const again = await env.client.recomplete(first.id, { by: BOB });
	await listener.waitFor(2);
	const [a, b] = listener.received.map((r) => JSON.parse(r.body) as typeof first);
	expect(a).toEqual(asDelivered(first));
	expect(b).toEqual(asDelivered(again));
	expect(b.id).toBe(a.id);
	expect(b.completed_by).toBe(BOB);
	expect(Date.parse(b.completed_at!)).toBeGreaterThan(Date.parse(a.completed_at!));
	// it moves to the front of the completed list
	const page = await call(env.sandbox.baseUrl, 'GET', '/orgs/1/queues/101/tasks/completed');
	expect((page.json as { tasks: Array<{ id: number }> }).tasks[0]).toEqual(again);
});

test('a receiver that is down or answers an error: recorded, never retried', async () => {
	listener.status = 500;
	await env.client.setWebhook(101, `${listener.url}/hook`);
	await env.client.complete(101, undefined, { by: ALICE });
	await listener.waitFor(1);
	const [call500] = await env.client.waitForWebhookCalls(1);
	expect(call500).toMatchObject({ status: 500, error: 'HTTP 500', state: 'failed' });

	await env.client.clearWebhookCalls();
	await env.client.setWebhook(101, 'http://127.0.0.1:9/closed-port');
	await env.client.complete(101, undefined, { by: ALICE });
	const [refused] = await env.client.waitForWebhookCalls(1);
	expect(refused).toMatchObject({ status: null, error: 'ECONNREFUSED', state: 'failed' });
	await sleep(300);
	expect(listener.received).toHaveLength(1);
	expect(await env.client.webhookCalls()).toHaveLength(1);
});

test('delivery does not block the completing request', async () => {
	// a receiver that never answers
	const hanging = http.createServer(() => undefined);
	await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
	const port = (hanging.address() as AddressInfo).port;
	try {
		await env.client.setWebhook(101, `http://127.0.0.1:${port}/slow`);
		const done = await env.client.complete(101, undefined, { by: ALICE });
		expect(done.status).toBe('completed');
		const calls = await env.client.webhookCalls();
		expect(calls).toEqual([expect.objectContaining({ taskId: done.id, state: 'pending' })]);
	} finally {
		hanging.closeAllConnections();
		await new Promise((resolve) => hanging.close(resolve));
	}
});

test('completeMany: one webhook per task', async () => {
	await env.client.setWebhook(102, `${listener.url}/burst`);
	await env.client.createTasks(102, 48);
	const { count, ids } = await env.client.completeMany(102, 100, { by: BOB });
	expect(count).toBe(50);
	await listener.waitFor(50);
	await sleep(100);
	expect(listener.received).toHaveLength(50);
	expect(
		listener.received.map((r) => (JSON.parse(r.body) as { id: number }).id).sort((x, y) => x - y),
	).toEqual([...ids].sort((x, y) => x - y));
});

describe('delivery faults', () => {
	test('drop: not sent at all, recorded as dropped', async () => {
		await env.client.setFaults([{ webhook: 'drop', count: 1 }]);
		await env.client.setWebhook(101, `${listener.url}/hook`);
		const dropped = await env.client.complete(101, undefined, { by: ALICE });
		const sent = await env.client.complete(101, undefined, { by: ALICE });
		await listener.waitFor(1);
		await sleep(100);
		expect(listener.received.map((r) => (JSON.parse(r.body) as { id: number }).id)).toEqual([
			sent.id,
		]);
		const calls = await env.client.webhookCalls();
		expect(calls.map((c) => [c.taskId, c.state, c.fault])).toEqual([
			[dropped.id, 'dropped', 'dropped'],
			[sent.id, 'done', null],
		]);
	});

	test('duplicate: the same body arrives twice', async () => {
		await env.client.setFaults([{ webhook: 'duplicate' }]);
		await env.client.setWebhook(101, `${listener.url}/hook`);
		const done = await env.client.complete(101, undefined, { by: ALICE });
		await listener.waitFor(2);
		expect(listener.received.map((r) => r.body)).toEqual([
			JSON.stringify(asDelivered(done)),
			JSON.stringify(asDelivered(done)),
		]);
		expect((await env.client.waitForWebhookCalls(2)).map((c) => c.fault)).toEqual([
			null,
			'duplicate',
		]);
	});

	test('delay: sent after delayMs', async () => {
		await env.client.setFaults([{ webhook: 'delay', delayMs: 300 }]);
		await env.client.setWebhook(101, `${listener.url}/hook`);
		await env.client.complete(101, undefined, { by: ALICE });
		await sleep(100);
		expect(listener.received).toHaveLength(0);
		await listener.waitFor(1);
		const [delayed] = await env.client.waitForWebhookCalls(1);
		expect(delayed.fault).toBe('delayed');
		expect(Date.parse(delayed.sentAt!) - Date.parse(delayed.queuedAt)).toBeGreaterThanOrEqual(250);
	});

	test('probability with a seeded PRNG is reproducible', async () => {
		const run = async () => {
			await env.client.reset();
			await env.client.setWebhook(102, `${listener.url}/hook`);
			await env.client.setFaults({ rules: [{ webhook: 'drop', probability: 0.5 }], seed: 7 });
			await env.client.createTasks(102, 20);
			await env.client.completeMany(102, 22, { by: ALICE });
			const calls = await env.client.waitForWebhookCalls(22);
			return calls.map((c) => c.state === 'dropped');
		};
		const first = await run();
		const second = await run();
		expect(second).toEqual(first);
		expect(first.filter(Boolean).length).toBeGreaterThan(0);
		expect(first.filter((d) => !d).length).toBeGreaterThan(0);
	});
});

test('a burst is delivered from a small pool of threads, newest first: every completion once, not in completion order', async () => {
	const queue = await env.client.createQueue({
		name: 'Burst',
		blocks: [{ id: 't', name: 'T', type: 'text', text: { placeholder: '' } }] as never,
	});
	await env.client.setWebhook(queue.id, `${listener.url}/burst`);
	const { ids } = await env.client.createTasks(queue.id, 40);
	// the first deliveries wait for their answer until all 40 completions are queued
	const release = listener.hold();
	await env.client.completeMany(queue.id, 40, { by: ALICE });
	await listener.waitFor(4, 10_000);
	await sleep(200);
	expect(listener.received).toHaveLength(4);
	release();
	await listener.waitFor(40, 10_000);
	const ours = new Set(ids);
	const order = listener.received
		.map((hook) => (JSON.parse(hook.body) as { id: number }).id)
		.filter((id) => ours.has(id));
	expect([...order].sort((a, b) => a - b)).toEqual([...ids].sort((a, b) => a - b));
	// 4 threads: the first four go out in completion order, then the newest waiting one each time
	expect(order).not.toEqual([...order].sort((a, b) => a - b));
	expect(order.slice(4, 5)).toEqual([Math.max(...ids)]);
	// with the pool off, every delivery goes out at once, in completion order
	await env.client.setRealism({ deliveryThreads: null });
	listener.received.length = 0;
	const more = await env.client.createTasks(queue.id, 10);
	await env.client.completeMany(queue.id, 10, { by: ALICE });
	await listener.waitFor(10, 10_000);
	expect(
		listener.received.map((hook) => (JSON.parse(hook.body) as { id: number }).id),
	).toHaveLength(10);
	expect(
		new Set(listener.received.map((hook) => (JSON.parse(hook.body) as { id: number }).id)),
	).toEqual(new Set(more.ids));
	await env.client.setRealism({ deliveryThreads: 4 });
});
