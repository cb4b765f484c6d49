// Several Task Queue Triggers of one n8n on one queue: the first holds the queue's one webhook, the
// others listen through it. Each receives every completion once; deactivating one leaves the others
// receiving. Two triggers of two workflows behind one stand-in n8n address (the same origin, as in
// one n8n), their deliveries run through webhook() as n8n runs them.
import http from 'http';
import type { AddressInfo } from 'net';
import type { IDataObject } from 'n8n-workflow';

import { locator, startTriggerEnv, WebhookTriggerUnderTest, type TriggerTestEnv } from './env';

const QUEUE = 101;
let env: TriggerTestEnv;

beforeAll(async () => (env = await startTriggerEnv()));
afterAll(async () => await env.close());
beforeEach(async () => await env.client.reset());

/** One stand-in n8n address serving every trigger's webhook path; `down` answers 404 for one. */
async function oneN8n(triggers: WebhookTriggerUnderTest[]) {
	const down = new Set<WebhookTriggerUnderTest>();
	const server = http.createServer((req, res) => {
		const chunks: Buffer[] = [];
		req.on('data', (chunk: Buffer) => chunks.push(chunk));
		req.on('end', () => {
			const url = new URL(req.url ?? '/', 'http://127.0.0.1');
			const trigger = triggers.find((t) => new URL(t.url()).pathname === url.pathname);
			if (!trigger || down.has(trigger)) {
				res.statusCode = 404;
				res.end(JSON.stringify({ message: 'The requested webhook is not registered.' }));
				return;
			}
			let body: unknown;
			try {
				body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
			} catch {
				body = {};
			}
			trigger
				.deliver({ body, query: Object.fromEntries(url.searchParams) })
				.then(({ response }) => {
					res.statusCode = response.statusCode;
					res.setHeader('content-type', 'application/json');
					res.end(JSON.stringify(response.body ?? { message: 'Workflow was started' }));
				})
				.catch((error: Error) => {
					res.statusCode = 500;
					res.end(JSON.stringify({ message: error.message }));
				});
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const { port } = server.address() as AddressInfo;
	for (const t of triggers) {
		t.webhookBaseUrl = `http://127.0.0.1:${port}/webhook`;
		t.webhookWaitingBaseUrl = `http://127.0.0.1:${port}/webhook-waiting`;
	}
	return {
		down,
		close: async () =>
			await new Promise<void>((resolve) => {
				server.close(() => resolve());
				server.closeAllConnections();
			}),
	};
}

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
			expect(a.state().listeners).toEqual([`${b.url()}?secret=${b.secret()}`]);
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

	test('a join naming an address that is not a Task Queue Trigger of this n8n is refused: the holder never passes deliveries elsewhere', async () => {
		const a = trigger('a0000000-0000-4000-8000-00000000000a');
		const n8n = await oneN8n([a]);
		try {
			await a.activate();
			const secret = a.secret() as string;
			for (const join of [
				'https://collector.example.com/webhook/x/task-completed?secret=s',
				`${new URL(a.url()).origin}/webhook/x/elsewhere`,
			]) {
				const { response } = await a.deliver({
					body: { taskQueueListener: { join } },
					query: { secret },
				});
				expect(response.statusCode).toBe(400);
			}
			expect(a.state().listeners).toBeUndefined();
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
			expect(a.state().listeners).toEqual([`${b.url()}?secret=${b.secret()}`]);
			const ids = await completeNew(1);
			await env.client.waitForWebhookCalls(2);
			await until(() => emittedIds(b).length === 1);
			expect(emittedIds(b)).toEqual(ids);
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
