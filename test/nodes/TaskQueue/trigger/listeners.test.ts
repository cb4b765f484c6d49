// Several Task Queue Triggers of one n8n on one queue: the first holds the queue's one webhook, the
// others listen through it. Each receives every completion once; deactivating one leaves the others
// receiving. Two triggers of two workflows behind one stand-in n8n address (the same origin, as in
// one n8n), their deliveries run through webhook() as n8n runs them.
import http from 'http';
import type { AddressInfo } from 'net';
import type { IDataObject } from 'n8n-workflow';

import { forgetAsAfterRestart } from '../../../../nodes/TaskQueue/runtime/processMemory';
import {
	locator,
	oneN8n,
	startTriggerEnv,
	WebhookTriggerUnderTest,
	type TriggerTestEnv,
} from './env';

const QUEUE = 101;
let env: TriggerTestEnv;

beforeAll(async () => (env = await startTriggerEnv()));
afterAll(async () => await env.close());
// each test is a new n8n: what a process remembered of another test's queue is gone
beforeEach(async () => {
	forgetAsAfterRestart();
	await env.client.reset();
});

function trigger(webhookId: string, options: Record<string, boolean> = {}) {
	return new WebhookTriggerUnderTest({
		credentials: env.credentials(),
		parameters: { event: 'taskCompleted', queue: locator(QUEUE), options },
		webhookId,
	});
}

/** The first trigger holds the queue, the second listens through it, both behind one n8n address. */
async function holderAndListener(holderOptions: Record<string, boolean> = {}) {
	const a = trigger('a0000000-0000-4000-8000-00000000000a', holderOptions);
	const b = trigger('b0000000-0000-4000-8000-00000000000b');
	const n8n = await oneN8n([a, b]);
	try {
		await a.activate();
		await b.activate();
	} catch (error) {
		await n8n.close();
		throw error;
	}
	return { a, b, n8n };
}

async function completeNew(count: number): Promise<number[]> {
	const { ids } = await env.client.createTasks(QUEUE, count);
	for (const id of ids) await env.client.complete(QUEUE, id, { by: 'alice@example.com' });
	return ids;
}

const target = async () =>
	((await env.client.getQueue(QUEUE)) as unknown as { webhook?: { target?: string } }).webhook
		?.target ?? '';
const emittedIds = (t: WebhookTriggerUnderTest) => t.emitted.map((task) => task.id);
/** What a holder keeps of a listener: its address and the hash of its leave token, never its secret. */
const listenerEntry = (t: WebhookTriggerUnderTest) => ({
	url: t.url(),
	leaveHash: expect.stringMatching(/^[0-9a-f]{64}$/),
});

describe('several Task Queue Triggers of one n8n on one queue', () => {
	test('the second joins the first instead of failing; each receives every completion once, duplicates included', async () => {
		const a = trigger('a0000000-0000-4000-8000-00000000000a');
		const b = trigger('b0000000-0000-4000-8000-00000000000b');
		const n8n = await oneN8n([a, b]);
		try {
			await a.activate();
			const held = await target();
			await b.activate();
			// the queue's one webhook is still the first trigger's; the second listens through it
			expect(await target()).toBe(held);
			expect(b.state().registration).toMatchObject({ listening: true });
			expect(a.state().listeners).toEqual([listenerEntry(b)]);
			await env.client.setFaults([{ webhook: 'duplicate', count: 2 }]);
			const ids = await completeNew(3);
			await env.client.waitForWebhookCalls(5);
			await until(() => emittedIds(b).length === 3);
			expect(emittedIds(a)).toEqual(ids);
			expect(emittedIds(b)).toEqual(ids);
		} finally {
			await env.client.clearFaults();
			await n8n.close();
		}
	});

	test('deactivating the holder hands the queue to the listener, which goes on receiving; the person-set target comes back when the last one goes', async () => {
		await env.client.setWebhook(QUEUE, 'https://hooks.example.com/intake');
		const { a, b, n8n } = await holderAndListener({ replaceExistingWebhook: true });
		try {
			await a.delete();
			expect(await target()).toBe(`${b.url()}?secret=${b.secret()}`);
			expect(b.state().registration).toMatchObject({
				listening: false,
				previousTarget: 'https://hooks.example.com/intake',
			});
			const ids = await completeNew(2);
			await env.client.waitForWebhookCalls(2);
			expect(emittedIds(b)).toEqual(ids);
			expect(emittedIds(a)).toEqual([]);
			await b.delete();
			expect(await target()).toBe('https://hooks.example.com/intake');
		} finally {
			await n8n.close();
		}
	});

	test('deactivating a listener leaves the holder receiving, and the listener receives nothing more', async () => {
		const { a, b, n8n } = await holderAndListener();
		try {
			await b.delete();
			expect(a.state().listeners).toBeUndefined();
			const ids = await completeNew(2);
			await env.client.waitForWebhookCalls(2);
			expect(emittedIds(a)).toEqual(ids);
			expect(emittedIds(b)).toEqual([]);
		} finally {
			await n8n.close();
		}
	});

	test('a listener activated again while the holder cannot answer (n8n 1.x at start) keeps its secret: deliveries still reach it', async () => {
		const { a, b, n8n } = await holderAndListener();
		try {
			const secret = b.secret();
			n8n.down.add(a);
			expect(await b.checkExists()).toBe(false);
			expect(await b.create()).toBe(true);
			n8n.down.delete(a);
			expect(b.secret()).toBe(secret);
			const ids = await completeNew(1);
			await env.client.waitForWebhookCalls(1);
			await until(() => emittedIds(b).length === 1);
			expect(emittedIds(b)).toEqual(ids);
		} finally {
			await n8n.close();
		}
	});

	test('a listener the holder dropped (it did not answer, as during a restart) joins again at its next check', async () => {
		const { a, b, n8n } = await holderAndListener();
		try {
			n8n.down.add(b);
			await completeNew(1);
			await env.client.waitForWebhookCalls(1);
			expect(emittedIds(b)).toEqual([]);
			// the holder dropped it (n8n 1.x saves that with the delivery; 2.x may not, and passes on again)
			delete (a.db['node:Task Queue Trigger'] as IDataObject).listeners;
			n8n.down.delete(b);
			expect(await b.reconcile()).toBeNull();
			expect(a.state().listeners).toEqual([listenerEntry(b)]);
			const ids = await completeNew(1);
			await env.client.waitForWebhookCalls(2);
			await until(() => emittedIds(b).length === 1);
			expect(emittedIds(b)).toEqual(ids);
		} finally {
			await n8n.close();
		}
	});
});

/** A POST to a trigger with its secret, as a caller who read the queue's webhook target sends it. */
async function withSecretOf(t: WebhookTriggerUnderTest, body: unknown) {
	return (await t.deliver({ body, query: { secret: t.secret() as string } })).response;
}
const hex = (c: string) => c.repeat(64);

describe('triggers published together', () => {
	test('a trigger whose holder is still being activated (its registration not saved yet: 401) joins it as soon as it is, within the activation', async () => {
		const a = trigger('a0000000-0000-4000-8000-00000000000a');
		const b = trigger('b0000000-0000-4000-8000-00000000000b');
		const n8n = await oneN8n([a, b]);
		try {
			await a.activate();
			// n8n has not saved A's activation yet: its address knows no registration for 1.5 s
			const saved = a.db;
			a.db = {};
			const restore = new Promise<void>((resolve) =>
				setTimeout(() => {
					a.db = saved;
					resolve();
				}, 1_500),
			);
			await b.activate();
			await restore;
			expect(a.state().listeners).toEqual([listenerEntry(b)]);
			expect(b.state().registration).toMatchObject({ listening: true });
			const ids = await completeNew(1);
			await env.client.waitForWebhookCalls(1);
			await until(() => emittedIds(b).length === 1);
			expect(emittedIds(b)).toEqual(ids);
		} finally {
			await n8n.close();
		}
	}, 30_000);
});

describe('Catch Up with several triggers on one queue', () => {
	test('three triggers with Catch Up, 60 completions with 20% of deliveries dropped: each emits every completion after its activation exactly once', async () => {
		const [a, b, c] = ['a', 'b', 'c'].map((x) =>
			trigger(`${x.repeat(8)}-0000-4000-8000-00000000000${x}`, { catchUp: true }),
		);
		const n8n = await oneN8n([a, b, c]);
		try {
			const before = new Set(
				(await env.client.tasks(QUEUE)).filter((t) => t.status === 'completed').map((t) => t.id),
			);
			await a.activate();
			await b.activate();
			await c.activate();
			expect(a.state().listeners).toHaveLength(2);
			await env.client.createTasks(QUEUE, 61);
			await env.client.setFaults({ rules: [{ webhook: 'drop', probability: 0.2 }], seed: 3 });
			await env.client.completeMany(QUEUE, 60, { by: 'alice@example.com' });
			await env.client.clearFaults();
			// a last delivery that arrives: each trigger catches up with it
			await env.client.completeMany(QUEUE, 1, { by: 'alice@example.com' });
			const expected = (await env.client.tasks(QUEUE))
				.filter((t) => t.status === 'completed' && !before.has(t.id))
				.map((t) => t.id)
				.sort((x, y) => x - y);
			expect(expected.length).toBeGreaterThanOrEqual(61);
			const dropped = (await env.client.webhookCalls()).filter((w) => w.fault === 'dropped');
			expect(dropped.length).toBeGreaterThan(0);
			const sorted = (t: WebhookTriggerUnderTest) =>
				emittedIds(t)
					.map(Number)
					.sort((x, y) => x - y);
			for (const t of [a, b, c]) await until(() => emittedIds(t).length >= expected.length, 20_000);
			await new Promise((resolve) => setTimeout(resolve, 300));
			for (const t of [a, b, c]) expect(sorted(t)).toEqual(expected);
		} finally {
			await env.client.clearFaults();
			await n8n.close();
		}
	}, 60_000);
});

describe("the trigger's door, against a caller who has the holder's secret (the service, its admins, the workflow's readers)", () => {
	test('no message makes a trigger call itself: a join or a hold naming the holder, or a pass-on from itself, is refused; one completion is passed on once', async () => {
		const { a, b, n8n } = await holderAndListener();
		try {
			expect(
				(await withSecretOf(a, { taskQueueListener: { join: { url: a.url() } } })).statusCode,
			).toBe(403);
			const hold = { from: a.url(), others: [a.url()], signature: hex('a') };
			expect((await withSecretOf(a, { taskQueueListener: { hold } })).statusCode).toBe(401);
			const selfPass = {
				taskQueuePassedOn: { from: a.url(), to: a.url(), delivery: '{}', signature: hex('b') },
			};
			expect((await a.deliver({ body: selfPass })).response.statusCode).toBe(401);
			expect(a.state().listeners).toEqual([listenerEntry(b)]);
			n8n.calls.length = 0;
			const ids = await completeNew(1);
			await env.client.waitForWebhookCalls(1);
			await until(() => emittedIds(b).length === 1);
			await new Promise((resolve) => setTimeout(resolve, 300));
			// the service's one delivery, and one pass-on to the listener: nothing more
			expect(n8n.calls.map((c) => c.kind)).toEqual(['delivery', 'taskQueuePassedOn']);
			expect(emittedIds(a)).toEqual(ids);
			expect(emittedIds(b)).toEqual(ids);
		} finally {
			await n8n.close();
		}
	});

	test('the holder joins only addresses that prove, at the address, that they are Task Queue Triggers on the queue; a redirect is never followed', async () => {
		let outside = 0;
		const collector = http.createServer((_req, res) => {
			outside++;
			res.end('{}');
		});
		await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
		const collectorUrl = `http://127.0.0.1:${(collector.address() as AddressInfo).port}/stolen`;
		const a = trigger('a0000000-0000-4000-8000-00000000000a');
		const redirecting = '/webhook/c0ffee00-0000-4000-8000-000000000000/task-completed';
		const n8n = await oneN8n([a], {
			// another workflow's Webhook node at a trigger-like path, answering with a 307
			[redirecting]: (_req, res) => {
				res.statusCode = 307;
				res.setHeader('location', collectorUrl);
				res.end();
			},
		});
		try {
			await a.activate();
			const origin = n8n.origin;
			for (const url of [
				`${origin}${redirecting}`,
				`${origin}/webhook/user-form/task-completed`,
				`${origin}/rest/task-completed`,
				`${origin}/task-completed`,
				`${origin}/webhook/%2Fx/task-completed`,
				`${origin}/webhook/%zz/task-completed`,
				`http://user:pw@${new URL(origin).host}/webhook/d0000000-0000-4000-8000-00000000000d/task-completed`,
				`http://127.1:${new URL(origin).port}/webhook/d0000000-0000-4000-8000-00000000000d/task-completed`,
				`${origin}/webhook/d0000000-0000-4000-8000-00000000000d/task-completed?x=1`,
				'https://collector.example.com/webhook/d0000000-0000-4000-8000-00000000000d/task-completed',
			]) {
				const response = await withSecretOf(a, { taskQueueListener: { join: { url } } });
				expect([url, response.statusCode]).toEqual([url, 403]);
			}
			// the old format, with a secret in the address, is not a message at all
			const old = await withSecretOf(a, {
				taskQueueListener: { join: `${origin}${redirecting}?secret=s` },
			});
			expect(old.statusCode).toBe(400);
			expect(a.state().listeners).toBeUndefined();
			expect(outside).toBe(0);
			const ids = await completeNew(1);
			await env.client.waitForWebhookCalls(1);
			expect(emittedIds(a)).toEqual(ids);
			expect(outside).toBe(0);
		} finally {
			await n8n.close();
			await new Promise<void>((resolve) => collector.close(() => resolve()));
		}
	});

	test("no workflow keeps another's secret, and a listener tells a genuine pass-on from a forged one", async () => {
		const { a, b, n8n } = await holderAndListener();
		try {
			expect(JSON.stringify(a.db)).not.toContain(b.secret() as string);
			const delivery = JSON.stringify({ id: 99999, status: 'completed' });
			for (const passed of [
				{ from: a.url(), to: b.url(), delivery, signature: hex('c') },
				// signed with the holder's secret as the live target holds it, but for another address
				{ from: b.url(), to: b.url(), delivery, signature: hex('d') },
			]) {
				const { response } = await b.deliver({ body: { taskQueuePassedOn: passed } });
				expect(response.statusCode).toBe(401);
			}
			expect(b.executions).toBe(0);
		} finally {
			await n8n.close();
		}
	});

	test('a forged hold does not choose what is put back: the target restored at the end is one the service held', async () => {
		await env.client.setWebhook(QUEUE, 'https://hooks.example.com/intake');
		const { a, b, n8n } = await holderAndListener({ replaceExistingWebhook: true });
		try {
			// to the holder: refused (it holds the queue); the old `previous` is no field of any message
			const forged = { hold: [], previous: 'https://collector.example.com/stolen' };
			expect((await withSecretOf(a, { taskQueueListener: forged })).statusCode).toBe(400);
			await a.delete();
			expect(await target()).toBe(`${b.url()}?secret=${b.secret()}`);
			await b.delete();
			expect(await target()).toBe('https://hooks.example.com/intake');
		} finally {
			await n8n.close();
		}
	});

	test('no message removes or locks out a genuine listener: a forged leave is refused, junk joins take no place, a full list says so', async () => {
		const { a, b, n8n } = await holderAndListener();
		try {
			const leave = { taskQueueListener: { leave: { url: b.url(), token: hex('e') } } };
			expect((await withSecretOf(a, leave)).statusCode).toBe(403);
			for (let i = 0; i < 25; i++) {
				const url = `${n8n.origin}/webhook/e${String(i).padStart(7, '0')}-0000-4000-8000-000000000000/task-completed`;
				expect((await withSecretOf(a, { taskQueueListener: { join: { url } } })).statusCode).toBe(
					403,
				);
			}
			expect(a.state().listeners).toEqual([listenerEntry(b)]);
			const ids = await completeNew(1);
			await env.client.waitForWebhookCalls(1);
			await until(() => emittedIds(b).length === 1);
			expect(emittedIds(b)).toEqual(ids);
		} finally {
			await n8n.close();
		}
	});

	test('a full list refuses the next trigger: its activation fails and says what to do', async () => {
		const holder = trigger('a0000000-0000-4000-8000-00000000000a');
		const many = Array.from({ length: 21 }, (_, i) =>
			trigger(`f${String(i).padStart(7, '0')}-0000-4000-8000-000000000000`),
		);
		const n8n = await oneN8n([holder, ...many]);
		try {
			await holder.activate();
			for (const t of many.slice(0, 20)) await t.activate();
			expect(holder.state().listeners).toHaveLength(20);
			await expect(many[20].activate()).rejects.toThrow(
				/already has 20 other Task Queue Triggers of this n8n listening/,
			);
			expect(holder.state().listeners).toHaveLength(20);
		} finally {
			await n8n.close();
		}
	});
});

async function until(probe: () => boolean, timeoutMs = 10_000): Promise<void> {
	const deadline = Date.now() + timeoutMs;
	while (!probe()) {
		if (Date.now() > deadline) throw new Error('timed out');
		await new Promise((resolve) => setTimeout(resolve, 20));
	}
}
