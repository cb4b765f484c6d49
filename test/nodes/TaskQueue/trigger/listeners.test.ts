// Several Task Queue Triggers of one n8n on one queue: the first holds the queue's one webhook, the
// others listen: the holder nudges them after each delivery and each reads the queue itself, from
// its own cursor. Each emits every completion once; deactivating one leaves the others emitting.
// Triggers of several workflows behind one stand-in n8n address (the same origin, as in one n8n),
// every call run through webhook() as n8n runs it.
import http from 'http';
import type { AddressInfo } from 'net';

import { forgetAsAfterRestart } from '../../../../nodes/TaskQueue/runtime/processMemory';
import { locator, oneN8n, WebhookTriggerUnderTest } from './env';
import { listenerSuite } from './listenersEnv';

const QUEUE = 101;
const { suite, trigger, holderAndListener, completeNew, target, emittedIds, callsTo, until } =
	listenerSuite(QUEUE);

describe('several Task Queue Triggers of one n8n on one queue', () => {
	test('the second listens through the first instead of failing; each emits every completion once, duplicates included, and the listener only from its own reads', async () => {
		const a = trigger('a0000000-0000-4000-8000-00000000000a');
		const b = trigger('b0000000-0000-4000-8000-00000000000b');
		const n8n = await oneN8n([a, b]);
		try {
			await a.activate();
			const held = await target();
			await b.activate();
			// the queue's one webhook is still the first trigger's; the second listens
			expect(await target()).toBe(held);
			expect(b.state().registration).toMatchObject({ listening: true });
			// the holder keeps the listener's address, nothing else
			expect(a.state().listeners).toEqual([b.url()]);
			n8n.calls.length = 0;
			await suite.env.client.setFaults([{ webhook: 'duplicate', count: 2 }]);
			const ids = await completeNew(3);
			await suite.env.client.waitForWebhookCalls(5);
			await until(() => emittedIds(b).length === 3);
			await new Promise((resolve) => setTimeout(resolve, 300));
			expect(emittedIds(a)).toEqual(ids);
			expect(emittedIds(b)).toEqual(ids);
			// nothing but nudges reached the listener: what it emitted, it read from the service
			expect(new Set(callsTo(n8n, b))).toEqual(new Set(['taskQueueNudge']));
		} finally {
			await suite.env.client.clearFaults();
			await n8n.close();
		}
	});

	test('deactivating the holder hands the queue to the listener, which loses nothing meanwhile; the person-set target comes back when the last one goes', async () => {
		await suite.env.client.setWebhook(QUEUE, 'https://hooks.example.com/intake');
		const { a, b, n8n } = await holderAndListener({ replaceExistingWebhook: true });
		try {
			const before = await completeNew(2);
			await suite.env.client.waitForWebhookCalls(2);
			await a.delete();
			expect(await target()).toBe(`${b.url()}?secret=${b.secret()}`);
			// b answered the hand-over, then n8n saved what it wrote
			await until(() => (b.state().registration as { listening: boolean }).listening === false);
			expect(b.state().registration).toMatchObject({
				listening: false,
				previousTarget: 'https://hooks.example.com/intake',
			});
			const after = await completeNew(2);
			await suite.env.client.waitForWebhookCalls(4);
			await until(() => emittedIds(b).length === 4);
			expect(emittedIds(b)).toEqual([...before, ...after]);
			expect(emittedIds(a)).toEqual(before);
			await b.delete();
			expect(await target()).toBe('https://hooks.example.com/intake');
		} finally {
			await n8n.close();
		}
	});

	test('a deactivated listener is dropped at the next nudge (n8n no longer knows its address), and the holder goes on emitting', async () => {
		const { a, b, n8n } = await holderAndListener();
		try {
			await b.delete();
			n8n.down.add(b);
			const ids = await completeNew(2);
			await suite.env.client.waitForWebhookCalls(2);
			await until(() => emittedIds(a).length === 2);
			expect(emittedIds(a)).toEqual(ids);
			expect(emittedIds(b)).toEqual([]);
			// n8n 2.x may not save what a delivery wrote: the holder's check drops it for good
			await a.reconcile();
			expect(a.state().listeners).toBeUndefined();
		} finally {
			await n8n.close();
		}
	});

	test('the listener deactivated, then the holder at once (bench 14): the hand-over reaches the listener while n8n still routes its address, and it takes no queue: no trigger is left named', async () => {
		const { a, b, n8n } = await holderAndListener();
		try {
			const registration = structuredClone(b.state().registration);
			await b.delete();
			// n8n stops routing a trigger's address after its removal ran, and a call loads the static
			// data as n8n last saved it: the holder's look still reaches the listener, registered
			// (bench 14, stop 72: the queue then named a deactivated trigger, and its deliveries 404)
			b.state().registration = registration;
			await a.delete();
			expect(await target()).toBe('');
			const ids = await completeNew(1);
			await suite.env.client.waitForWebhookCalls(0);
			expect(ids).toHaveLength(1);
			expect(await suite.env.client.webhookCalls()).toEqual([]);
		} finally {
			await n8n.close();
		}
	});

	test('a listener whose nudges are lost (it did not answer, as during a restart) emits every completion at its next check, and is nudged again', async () => {
		const { a, b, n8n } = await holderAndListener();
		try {
			n8n.down.add(b);
			const lost = await completeNew(2);
			await suite.env.client.waitForWebhookCalls(2);
			expect(emittedIds(b)).toEqual([]);
			await a.reconcile();
			expect(a.state().listeners).toBeUndefined();
			n8n.down.delete(b);
			// the check nudges its own trigger to look: it joins the holder again and reads
			expect(await b.reconcile()).toBeNull();
			expect(a.state().listeners).toEqual([b.url()]);
			// answered before its read: what it reads is emitted as the call ends
			await until(() => emittedIds(b).length >= lost.length);
			expect(emittedIds(b)).toEqual(lost);
			const ids = await completeNew(1);
			await suite.env.client.waitForWebhookCalls(3);
			await until(() => emittedIds(b).length === 3);
			expect(emittedIds(b)).toEqual([...lost, ...ids]);
		} finally {
			await n8n.close();
		}
	});
});

describe('n8n restarts with a listener (issue 46, CI 17)', () => {
	test("completions arrive while the listener activates again (a new secret, the holder joined again): the holder's nudges reach it with the registration before it, the activation saves its own older copy; each completion is emitted once", async () => {
		const { a, b, n8n } = await holderAndListener();
		try {
			const before = await completeNew(2);
			await suite.env.client.waitForWebhookCalls(2);
			const emits = async (count: number) =>
				await until(() => emittedIds(b).length >= count).catch(() => {
					throw new Error(`the listener emitted ${JSON.stringify(emittedIds(b))}, not ${count}`);
				});
			await emits(2);
			// the process stops: the calls it was serving end first (a restart never lets an old call's
			// copy of the static data be saved after the new process has read it; issue 59 found this
			// test letting one do that under load: a call of the old process saved its older copy after
			// the restart, and 1000 and 1001 came twice)
			await Promise.all([a.idle(), b.idle()]);
			// n8n restarts: the listener activates again (a new secret, the holder joined again) while
			// completions arrive and the holder nudges it with each
			forgetAsAfterRestart();
			const secret = b.secret();
			const activation = b.activate();
			const meanwhile = await completeNew(2);
			await activation;
			expect(b.secret()).not.toBe(secret);
			await suite.env.client.waitForWebhookCalls(4);
			await b.reconcile();
			await emits(4);
			const after = await completeNew(1);
			await suite.env.client.waitForWebhookCalls(5);
			await emits(5);
			expect(await b.reconcile()).toBeNull();
			await new Promise((resolve) => setTimeout(resolve, 500));
			expect(emittedIds(b)).toEqual([...before, ...meanwhile, ...after]);
			expect(emittedIds(a)).toEqual([...before, ...meanwhile, ...after]);
		} finally {
			await n8n.close();
		}
	});
});

/** A POST to a trigger with its secret, as a caller who read the queue's webhook target sends it. */
async function withSecretOf(t: WebhookTriggerUnderTest, body: unknown) {
	return (await t.deliver({ body, query: { secret: t.secret() as string } })).response;
}

/** `a` activated, then `b` while n8n has not saved `a`'s activation (its address knows no registration). */
async function activatedTogether(a: WebhookTriggerUnderTest, b: WebhookTriggerUnderTest) {
	await a.activate();
	const saved = a.db;
	a.db = {};
	await b.activate();
	a.db = saved;
}

describe('triggers published together', () => {
	test('a trigger whose holder is still being activated (its registration not saved yet: 401) tries the join again every 2 s: it is nudged within seconds of the holder answering, no check needed', async () => {
		const a = trigger('a0000000-0000-4000-8000-00000000000a');
		const b = trigger('b0000000-0000-4000-8000-00000000000b');
		const n8n = await oneN8n([a, b]);
		try {
			await activatedTogether(a, b);
			expect(b.state().registration).toMatchObject({ listening: true });
			// no check runs here: a try (2 s after the activation, the holder saved meanwhile) is admitted
			await until(() => a.state().listeners !== undefined, 50_000);
			expect(a.state().listeners).toEqual([b.url()]);
			expect(callsTo(n8n, a).filter((kind) => kind === 'taskQueueListener')).toHaveLength(2);
			const ids = await completeNew(3);
			await until(() => emittedIds(b).length >= ids.length);
			expect(emittedIds(b)).toEqual(ids);
			expect(emittedIds(a)).toEqual(ids);
		} finally {
			await n8n.close();
		}
	}, 60_000);

	test('when its tries end unanswered (as while the holder catches up for over a minute), its first check joins the holder and reads what it missed', async () => {
		const a = trigger('a0000000-0000-4000-8000-00000000000a');
		const b = trigger('b0000000-0000-4000-8000-00000000000b');
		const n8n = await oneN8n([a, b]);
		try {
			await activatedTogether(a, b);
			// the tries stopped before the first (the process's memory of them gone)
			forgetAsAfterRestart();
			expect(b.state().registration).toMatchObject({ listening: true });
			expect(a.state().listeners).toBeUndefined();
			const ids = await completeNew(1);
			await suite.env.client.waitForWebhookCalls(1);
			expect(emittedIds(b)).toEqual([]);
			await b.reconcile();
			expect(a.state().listeners).toEqual([b.url()]);
			await until(() => emittedIds(b).length >= ids.length);
			expect(emittedIds(b)).toEqual(ids);
		} finally {
			await n8n.close();
		}
	}, 30_000);
});

describe('a listener that joined late (real server F5)', () => {
	test("it keeps what the holder puts back: after a hand-over, the person's own webhook comes back when the last trigger goes", async () => {
		await suite.env.client.setWebhook(QUEUE, 'https://hooks.example.com/intake');
		const a = trigger('a0000000-0000-4000-8000-00000000000a', { replaceExistingWebhook: true });
		const b = trigger('b0000000-0000-4000-8000-00000000000b');
		const n8n = await oneN8n([a, b]);
		try {
			await activatedTogether(a, b);
			expect(b.state().registration).toMatchObject({ listening: true, previousTarget: null });
			// its first check joins the holder, and learns what the holder would put back
			await b.reconcile();
			// the check's nudge is answered before n8n saves what it wrote
			await until(
				() => (b.state().registration as { previousTarget: string | null }).previousTarget !== null,
			);
			expect(b.state().registration).toMatchObject({
				listening: true,
				previousTarget: 'https://hooks.example.com/intake',
			});
			await a.delete();
			expect(await target()).toBe(`${b.url()}?secret=${b.secret()}`);
			await until(() => (b.state().registration as { listening: boolean }).listening === false);
			await b.delete();
			expect(await target()).toBe('https://hooks.example.com/intake');
		} finally {
			await n8n.close();
		}
	});
});

describe('Catch Up with several triggers on one queue', () => {
	test('three triggers with Catch Up, 60 completions with 20% of deliveries dropped: each emits every completion after its activation exactly once', async () => {
		const [a, b, c] = ['a', 'b', 'c'].map((x) =>
			trigger(`${x.repeat(8)}-0000-4000-8000-00000000000${x}`, { catchUp: true }),
		);
		const n8n = await oneN8n([a, b, c]);
		try {
			const before = new Set(
				(await suite.env.client.tasks(QUEUE))
					.filter((t) => t.status === 'completed')
					.map((t) => t.id),
			);
			await a.activate();
			await b.activate();
			await c.activate();
			expect(a.state().listeners).toHaveLength(2);
			await suite.env.client.createTasks(QUEUE, 61);
			await suite.env.client.setFaults({ rules: [{ webhook: 'drop', probability: 0.2 }], seed: 3 });
			await suite.env.client.completeMany(QUEUE, 60, { by: 'alice@example.com' });
			await suite.env.client.clearFaults();
			// a last delivery that arrives: each trigger catches up with it
			await suite.env.client.completeMany(QUEUE, 1, { by: 'alice@example.com' });
			const expected = (await suite.env.client.tasks(QUEUE))
				.filter((t) => t.status === 'completed' && !before.has(t.id))
				.map((t) => t.id)
				.sort((x, y) => x - y);
			expect(expected.length).toBeGreaterThanOrEqual(61);
			const dropped = (await suite.env.client.webhookCalls()).filter((w) => w.fault === 'dropped');
			expect(dropped.length).toBeGreaterThan(0);
			const sorted = (t: WebhookTriggerUnderTest) =>
				emittedIds(t)
					.map(Number)
					.sort((x, y) => x - y);
			for (const t of [a, b, c]) await until(() => emittedIds(t).length >= expected.length, 20_000);
			await new Promise((resolve) => setTimeout(resolve, 300));
			for (const t of [a, b, c]) expect(sorted(t)).toEqual(expected);
		} finally {
			await suite.env.client.clearFaults();
			await n8n.close();
		}
	}, 60_000);
});

describe("the trigger's door, against a caller who has the holder's secret (the service, its admins, the workflow's readers)", () => {
	test('no message makes a trigger call itself: a join naming the holder is refused without a call; a completion costs one nudge per listener', async () => {
		const { a, b, n8n } = await holderAndListener();
		try {
			n8n.calls.length = 0;
			expect((await withSecretOf(a, { taskQueueListener: { join: a.url() } })).statusCode).toBe(
				403,
			);
			expect(n8n.calls).toEqual([]);
			expect(a.state().listeners).toEqual([b.url()]);
			const ids = await completeNew(1);
			await suite.env.client.waitForWebhookCalls(1);
			await until(() => emittedIds(b).length === 1);
			await new Promise((resolve) => setTimeout(resolve, 300));
			// the service's one delivery, and one nudge to the listener: nothing more
			expect(n8n.calls.map((c) => c.kind)).toEqual(['delivery', 'taskQueueNudge']);
			expect(emittedIds(a)).toEqual(ids);
			expect(emittedIds(b)).toEqual(ids);
		} finally {
			await n8n.close();
		}
	});

	test('the holder keeps only addresses where a Task Queue Trigger listening to its queue answers; a redirect is never followed', async () => {
		let outside = 0;
		const collector = http.createServer((_req, res) => {
			outside++;
			res.end('{}');
		});
		await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
		const collectorUrl = `http://127.0.0.1:${(collector.address() as AddressInfo).port}/stolen`;
		const a = trigger('a0000000-0000-4000-8000-00000000000a');
		// a Task Queue Trigger of this n8n on another queue
		const elsewhere = new WebhookTriggerUnderTest({
			credentials: suite.env.credentials(),
			parameters: { event: 'taskCompleted', queue: locator(QUEUE + 1), options: {} },
			webhookId: 'e0000000-0000-4000-8000-00000000000e',
		});
		const redirecting = '/webhook/c0ffee00-0000-4000-8000-000000000000/task-completed';
		const n8n = await oneN8n([a, elsewhere], {
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
				elsewhere.url(),
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
				const response = await withSecretOf(a, { taskQueueListener: { join: url } });
				expect([url, response.statusCode]).toEqual([url, 403]);
			}
			// an earlier format is not a message at all
			const old = await withSecretOf(a, { taskQueueListener: { join: { url: elsewhere.url() } } });
			expect(old.statusCode).toBe(400);
			expect(a.state().listeners).toBeUndefined();
			expect(outside).toBe(0);
			const ids = await completeNew(1);
			await suite.env.client.waitForWebhookCalls(1);
			expect(emittedIds(a)).toEqual(ids);
			expect(emittedIds(elsewhere)).toEqual([]);
			expect(outside).toBe(0);
		} finally {
			await n8n.close();
			await new Promise<void>((resolve) => collector.close(() => resolve()));
		}
	});

	test('nudges from anyone, with anything in them, make a listener emit only what the service lists, each once, with one read at a time', async () => {
		const { a, b, n8n } = await holderAndListener();
		try {
			expect(JSON.stringify(a.db)).not.toContain(b.secret() as string);
			const made = { id: 99999, status: 'completed', queue_id: QUEUE, data: { refund: 5000 } };
			const nudge = async (look: boolean) =>
				(await b.deliver({ body: { taskQueueNudge: { look, task: made }, ...made } })).response;
			await suite.env.client.clearRequests();
			const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => nudge(i % 2 === 0)));
			expect(new Set(answers.map((r) => r.statusCode))).toEqual(new Set([200]));
			expect(b.emitted).toEqual([]);
			const requests = await suite.env.client.requests();
			const reads = requests
				.filter((r) => r.route === 'completed')
				.sort((x, y) => x.arrivedAt - y.arrivedAt);
			const webhookReads = requests.filter((r) => r.route === 'getWebhook');
			// 40 nudges at once: the listener's reads one after the other, never two at once, fewer
			// than the nudges; the queue's webhook read once (at most once every 2 s)
			expect(reads.length).toBeGreaterThan(0);
			expect(reads.length).toBeLessThan(20);
			for (const [i, read] of reads.entries())
				if (i > 0) expect(read.arrivedAt).toBeGreaterThan(reads[i - 1].answeredAt);
			expect(webhookReads).toHaveLength(1);
			const ids = await completeNew(2);
			await Promise.all(Array.from({ length: 20 }, () => nudge(false)));
			await suite.env.client.waitForWebhookCalls(2);
			await until(() => emittedIds(b).length === 2);
			await new Promise((resolve) => setTimeout(resolve, 300));
			expect(emittedIds(b)).toEqual(ids);
			// the delivery a caller makes up without the secret is refused
			expect((await b.deliver({ body: made })).response.statusCode).toBe(401);
			expect(emittedIds(b)).toEqual(ids);
		} finally {
			await n8n.close();
		}
	});

	test('a forged message does not choose what is put back, and a nudge to look never takes a webhook someone else set', async () => {
		await suite.env.client.setWebhook(QUEUE, 'https://hooks.example.com/intake');
		const { a, b, n8n } = await holderAndListener({ replaceExistingWebhook: true });
		try {
			const forged = { hold: [], previous: 'https://collector.example.com/stolen' };
			expect((await withSecretOf(a, { taskQueueListener: forged })).statusCode).toBe(400);
			// a person points the queue elsewhere: a nudge to look leaves it so
			await suite.env.client.setWebhook(QUEUE, 'https://hooks.example.com/other');
			await b.deliver({ body: { taskQueueNudge: { look: true } } });
			expect(await target()).toBe('https://hooks.example.com/other');
			await suite.env.client.setWebhook(QUEUE, `${a.url()}?secret=${a.secret()}`);
			await a.delete();
			expect(await target()).toBe(`${b.url()}?secret=${b.secret()}`);
			await b.delete();
			expect(await target()).toBe('https://hooks.example.com/intake');
		} finally {
			await n8n.close();
		}
	});

	test('junk joins take no place and remove no listener', async () => {
		const { a, b, n8n } = await holderAndListener();
		try {
			for (let i = 0; i < 25; i++) {
				const url = `${n8n.origin}/webhook/e${String(i).padStart(7, '0')}-0000-4000-8000-000000000000/task-completed`;
				expect((await withSecretOf(a, { taskQueueListener: { join: url } })).statusCode).toBe(403);
			}
			expect(a.state().listeners).toEqual([b.url()]);
			const ids = await completeNew(1);
			await suite.env.client.waitForWebhookCalls(1);
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
