// Incoming deliveries of the Task Queue Trigger through n8n-core's WebhookContext: refused calls
// (no execution), deduplication, re-completions, and real deliveries from the sandbox (its POSTs
// forwarded into webhook()) including its drop and duplicate faults, with catch-up.
import type { IDataObject, INodeParameters } from 'n8n-workflow';

import type { Task } from '../../../sandbox/types';
import { forgetAsAfterRestart } from '../../../nodes/TaskQueue/runtime/processMemory';
import { shifted, timeKey } from '../../../nodes/TaskQueue/reader/cursor';
import {
	locator,
	startTriggerEnv,
	startWebhookServer,
	WebhookTriggerUnderTest,
	type TriggerTestEnv,
} from './trigger/env';

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
	// each test is a new n8n: what an earlier test left in this process (a completion owed to the
	// check, a consumer's cursor) is not this one's, and the sandbox hands out the same ids again
	forgetAsAfterRestart();
	await env.client.reset();
});

function trigger(options: Record<string, unknown> = {}) {
	return new WebhookTriggerUnderTest({
		credentials: env.credentials(),
		parameters: {
			event: 'taskCompleted',
			queue: locator(QUEUE),
			options: options as INodeParameters,
		},
	});
}

/** One completion, at the millisecond precision a delivery and the completed list share. */
const key = (t: { id?: unknown; completed_at?: unknown }) =>
	`${String(t.id)}:${Date.parse(String(t.completed_at))}`;
/** The same key as the trigger stores it in static data (`seen`). */
const storedKey = (t: { id: number; completed_at: string | null }) =>
	`${t.id}:${new Date(Date.parse(String(t.completed_at))).toISOString().slice(0, 23)}`;

/** Completes one new task in the queue (the sandbox posts it to whatever target is set). */
async function completeOne(queueId = QUEUE): Promise<Task> {
	const { ids } = await env.client.createTasks(queueId, 1);
	return await env.client.complete(queueId, ids[0], BY);
}

describe('refused calls start no execution', () => {
	let t: WebhookTriggerUnderTest;
	let task: Task;

	beforeEach(async () => {
		t = trigger();
		await t.activate();
		task = await completeOne();
	});

	it.each([
		['no secret', {}],
		['a wrong secret of the same length', { secret: 'f'.repeat(64) }],
		['a wrong secret of another length', { secret: 'abc' }],
		['an empty secret', { secret: '' }],
	])('401 for %s', async (_label, query) => {
		const { response, result } = await t.deliver({ body: task, query });
		expect(response).toEqual({ statusCode: 401, body: { message: 'Unauthorized' }, ended: true });
		expect(result).toEqual({ noWebhookResponse: true });
		expect(t.executions).toBe(0);
	});

	it('before n8n has saved the registration (or once it is lost), only the secret this trigger signed for its address and queue is taken; any other gets 401', async () => {
		const secret = t.secret() as string;
		t.db = {};
		const other = trigger();
		other.webhookBaseUrl = 'http://localhost:5678/other';
		await other.activate();
		for (const wrong of [
			'f'.repeat(64),
			`${secret.slice(0, 32)}${'0'.repeat(32)}`,
			other.secret() as string, // signed by the same key, for another address
			secret.slice(0, 62),
		]) {
			const { response } = await t.deliver({ body: task, query: { secret: wrong } });
			expect(response.statusCode).toBe(401);
		}
		expect(t.executions).toBe(0);
		const { response } = await t.deliver({ body: task, query: { secret } });
		expect(response.statusCode).toBe(200);
		expect(t.emitted.map((x) => x.id)).toEqual([task.id]);
		// nothing written: n8n's save of the activation is not raced
		expect(t.db).toEqual({});
		const { response: again } = await t.deliver({ body: task, query: { secret } });
		expect(again.body).toEqual({ received: true, ignored: 'duplicate' });
		// a body other than a delivery is never taken that way
		const join = { taskQueueListener: { join: { url: t.url() } } };
		expect((await t.deliver({ body: join, query: { secret } })).response.statusCode).toBe(401);
	});

	it.each([
		['a string', 'hello', 'The body is not a task object'],
		['an array', [1, 2], 'The body is not a task object'],
		[
			'a task that is not completed',
			{ status: 'new' },
			'The task\'s status is "new", not "completed"',
		],
	])('400 for %s', async (_label, body, message) => {
		const { response, result } = await t.deliver({ body, query: { secret: t.secret() as string } });
		expect(response).toEqual({ statusCode: 400, body: { message }, ended: true });
		expect(result).toEqual({ noWebhookResponse: true });
		expect(t.executions).toBe(0);
	});

	it('400 for a completed task without completed_at or with a wrong type', async () => {
		const body = { ...task, completed_at: null, id: 'x' };
		const { response } = await t.deliver({ body, query: { secret: t.secret() as string } });
		expect(response.statusCode).toBe(400);
		expect((response.body as IDataObject).message).toBe(
			'The body is not a completed task (id: Expected number, received string; completed_at: Expected string, received null)',
		);
		expect(t.executions).toBe(0);
	});

	it('400 for a task of another queue', async () => {
		const other = { ...task, queue_id: 102, queue: 'Content Review' };
		const { response } = await t.deliver({ body: other, query: { secret: t.secret() as string } });
		expect(response).toEqual({
			statusCode: 400,
			body: { message: 'The task belongs to queue 102, not 101' },
			ended: true,
		});
		expect(t.executions).toBe(0);
	});
});

describe('accepted deliveries', () => {
	it('emit the task exactly as sent, or its data with Output Data Only', async () => {
		const t = trigger();
		await t.activate();
		const task = await completeOne();
		const { items, response, result } = await t.deliver({
			body: task,
			query: { secret: t.secret() as string },
		});
		expect(items).toEqual([{ json: task }]);
		// nothing written to static data: n8n answers the service once the execution has started,
		// as for its own Webhook node ("Workflow was started")
		expect(result).toEqual({ workflowData: [[{ json: task }]] });
		expect(response.ended).toBe(false);
		expect(t.saves).toBe(0);

		const d = trigger({ dataOnly: true });
		await d.activate();
		const other = await completeOne();
		const dataOnly = await d.deliver({ body: other, query: { secret: d.secret() as string } });
		expect(dataOnly.items).toEqual([{ json: other.data }]);
	});

	it.each([1, 2] as const)(
		'n8n %i.x saves what webhook() wrote (cursor, seen) with the delivery that starts the execution',
		async (major) => {
			const t = trigger({ catchUp: true });
			t.n8nMajor = major;
			await t.activate();
			const now = t.state().cursor as { at: string; ids: number[] };
			const task = await completeOne();
			const query = { secret: t.secret() as string };
			const { response } = await t.deliver({ body: task, query });
			// the node answers itself, so that n8n saves its static data before the execution starts
			expect(response).toEqual({
				statusCode: 200,
				body: { message: 'Workflow was started' },
				ended: true,
			});
			expect(t.executions).toBe(1);
			expect(t.saves).toBe(1);
			expect(t.state().seen).toEqual([storedKey(task)]);
			// and its window (reader/cursor.ts): from "now" at activation (no read has closed it yet)
			const at = timeKey(String(task.completed_at));
			const recent = now.ids.map((id) => `${id}:${now.at}`);
			const floor = shifted(now.at, -1);
			expect(t.state().cursor).toEqual({ at, ids: [task.id], recent, floor });
			// a copy changes nothing: no save, no execution
			await t.deliver({ body: task, query });
			expect(t.saves).toBe(1);
			expect(t.executions).toBe(1);
		},
	);

	it('deduplicate the same completion delivered twice: one execution, 200 for the copy', async () => {
		const t = trigger();
		await t.activate();
		const task = await completeOne();
		const query = { secret: t.secret() as string };
		await t.deliver({ body: task, query });
		const copy = await t.deliver({ body: task, query });
		expect(copy.response).toEqual({
			statusCode: 200,
			body: { received: true, ignored: 'duplicate' },
			ended: true,
		});
		expect(copy.result).toEqual({ noWebhookResponse: true });
		expect(t.executions).toBe(1);
		// remembered by this n8n process; static data only where it must outlive it (Catch Up, or
		// Emit Re-Completions off)
		expect(t.state().seen).toBeUndefined();
	});

	it('emit a forced re-completion (same id, new completed_at) as a new event', async () => {
		const t = trigger();
		await t.activate();
		const task = await completeOne();
		const again = await env.client.recomplete(task.id);
		expect(again.id).toBe(task.id);
		expect(again.completed_at).not.toBe(task.completed_at);
		const query = { secret: t.secret() as string };
		await t.deliver({ body: task, query });
		const second = await t.deliver({ body: again, query });
		expect(second.items).toEqual([{ json: again }]);
		expect(t.executions).toBe(2);
	});

	it('ignore re-completions when Emit Re-Completions is off', async () => {
		const t = trigger({ emitRecompletions: false });
		await t.activate();
		const task = await completeOne();
		const again = await env.client.recomplete(task.id);
		const query = { secret: t.secret() as string };
		await t.deliver({ body: task, query });
		const second = await t.deliver({ body: again, query });
		expect(second.response).toEqual({
			statusCode: 200,
			body: { received: true, ignored: 'recompletion' },
			ended: true,
		});
		expect(t.executions).toBe(1);
	});

	it('concurrent deliveries whose static data saves overwrite one another (n8n saves it whole): after a restart a late copy of any of them is still a duplicate', async () => {
		const t = trigger({ emitRecompletions: false });
		await t.activate();
		const query = { secret: t.secret() as string };
		const { ids } = await env.client.createTasks(QUEUE, 20);
		const tasks: Task[] = [];
		for (const id of ids) tasks.push(await env.client.complete(QUEUE, id, BY));
		// each call loads the static data before the others have saved theirs
		t.dbLatencyMs = 20;
		await Promise.all(tasks.map((task) => t.deliver({ body: task, query })));
		expect(t.executions).toBe(20);
		forgetAsAfterRestart();
		t.dbLatencyMs = 0;
		for (const task of tasks) {
			const copy = await t.deliver({ body: task, query });
			expect([task.id, copy.response.body]).toEqual([
				task.id,
				{ received: true, ignored: 'duplicate' },
			]);
		}
		expect(t.executions).toBe(20);
	});

	it('keep at most 1,000 keys for deduplication, in memory and in static data', async () => {
		for (const options of [{}, { emitRecompletions: false }]) {
			const t = trigger(options);
			t.dbLatencyMs = 0;
			await t.activate();
			const task = await completeOne();
			const query = { secret: t.secret() as string };
			const delivery = (i: number) => ({ body: { ...task, id: 100_000 + i }, query });
			for (let i = 0; i < 1005; i++) await t.deliver(delivery(i));
			expect(t.executions).toBe(1005);
			if ('emitRecompletions' in options) {
				const seen = t.state().seen as string[];
				expect(seen).toHaveLength(1000);
				expect(seen[999]).toBe(storedKey({ ...task, id: 100_000 + 1004 }));
			} else {
				expect(t.state().seen).toBeUndefined();
			}
			// the newest is still known, the oldest forgotten
			expect((await t.deliver(delivery(1004))).result).toEqual({ noWebhookResponse: true });
			await t.deliver(delivery(0));
			expect(t.executions).toBe(1006);
		}
		// 2,010 deliveries one after the other: a backstop for a loaded machine, not jest's 60 s
	}, 300_000);
});

describe('real deliveries from the sandbox', () => {
	/**
	 * The node answers the service before webhook() returns (the caller sees the call finished a
	 * moment before the execution is counted): here a wait for the service's calls also waits for the
	 * deliveries under way to end, whatever the machine's load.
	 */
	async function withServer(t: WebhookTriggerUnderTest, run: () => Promise<void>) {
		const server = await startWebhookServer(t);
		const waitForCalls = env.client.waitForWebhookCalls.bind(env.client);
		env.client.waitForWebhookCalls = async (...args) => {
			const calls = await waitForCalls(...args);
			await t.idle();
			return calls;
		};
		try {
			await run();
		} finally {
			env.client.waitForWebhookCalls = waitForCalls;
			await server.close();
		}
	}

	/** Lost and duplicated completions, comparing what was emitted with what the service holds. */
	async function completedKeys(): Promise<string[]> {
		return (await env.client.tasks(QUEUE)).filter((x) => x.status === 'completed').map(key);
	}

	async function audit(t: WebhookTriggerUnderTest, before: string[]) {
		const expected = new Set((await completedKeys()).filter((k) => !before.includes(k)));
		const emittedKeys = t.emitted.map(key);
		const lost = [...expected].filter((k) => !emittedKeys.includes(k));
		const duplicated = emittedKeys.length - new Set(emittedKeys).size;
		return { expected: expected.size, emitted: emittedKeys.length, lost: lost.length, duplicated };
	}

	it('every completion starts one execution; the sandbox gets 200s', async () => {
		const t = trigger();
		await withServer(t, async () => {
			await t.activate();
			// Only completions after activation count; the seed's three are older.
			t.emitted = [];
			await env.client.createTasks(QUEUE, 30);
			await env.client.completeMany(QUEUE, 30, BY);
			const calls = await env.client.waitForWebhookCalls(30);
			expect(calls.map((c) => c.status)).toEqual(Array(30).fill(200));
			expect(calls.every((c) => c.url === `${t.url()}?secret=${t.secret()}`)).toBe(true);
			const completed = (await env.client.tasks(QUEUE)).filter((x) => x.status === 'completed');
			const recent = completed.filter((x) => calls.some((c) => c.taskId === x.id));
			expect(t.emitted.map(key).sort()).toEqual(recent.map(key).sort());
			expect(t.executions).toBe(30);
		});
	});

	it("the service's duplicate deliveries (sent at the same time) start one execution each", async () => {
		const t = trigger();
		await withServer(t, async () => {
			await t.activate();
			await env.client.setFaults([{ webhook: 'duplicate', probability: 1 }]);
			await env.client.createTasks(QUEUE, 20);
			await env.client.completeMany(QUEUE, 20, BY);
			const calls = await env.client.waitForWebhookCalls(40);
			expect(calls.filter((c) => c.fault === 'duplicate')).toHaveLength(20);
			expect(t.executions).toBe(20);
			const keys = t.emitted.map(key);
			expect(new Set(keys).size).toBe(20);
		});
	});

	it('catch-up: completions whose delivery was dropped are emitted with the next delivery, none twice', async () => {
		const t = trigger({ catchUp: true });
		await withServer(t, async () => {
			const before = await completedKeys();
			await t.activate();
			await env.client.createTasks(QUEUE, 60);
			// A first delivery places the cursor.
			await env.client.completeMany(QUEUE, 1, BY);
			await env.client.waitForWebhookCalls(1);
			// n8n "down": the next 25 deliveries are lost.
			await env.client.setFaults([{ webhook: 'drop', count: 25 }]);
			await env.client.completeMany(QUEUE, 25, BY);
			await env.client.waitForWebhookCalls(26);
			expect(t.executions).toBe(1);
			// Back up: the next delivery brings the 25 missed ones, oldest first, then itself.
			await env.client.completeMany(QUEUE, 1, BY);
			await env.client.waitForWebhookCalls(27);
			expect(t.executions).toBe(2);
			const calls = await env.client.webhookCalls();
			const order = calls.map((c) => c.taskId);
			expect(t.emitted.map((x) => x.id)).toEqual(order);
			// Mixed: random drops and duplicates over 30 more completions.
			await env.client.setFaults({
				rules: [
					{ webhook: 'drop', probability: 0.3 },
					{ webhook: 'duplicate', probability: 0.3 },
				],
				seed: 7,
			});
			await env.client.completeMany(QUEUE, 30, BY);
			await env.client.clearFaults();
			const total = (await env.client.webhookCalls()).length;
			await env.client.waitForWebhookCalls(total);
			// A last delivery without faults catches up whatever the drops left.
			await env.client.completeMany(QUEUE, 1, BY);
			await env.client.waitForWebhookCalls(total + 1);

			const result = await audit(t, before);
			console.log(`catch-up audit: ${JSON.stringify(result)}`);
			expect(result).toEqual({ expected: 58, emitted: 58, lost: 0, duplicated: 0 });
		});
	});

	it('catch-up from activation: completions whose delivery is lost before the first delivery are emitted with it; a re-publish opens no window', async () => {
		const t = trigger({ catchUp: true });
		await withServer(t, async () => {
			const before = await completedKeys();
			await t.activate();
			await env.client.createTasks(QUEUE, 10);
			await env.client.setFaults([{ webhook: 'drop', count: 2 }]);
			await env.client.completeMany(QUEUE, 2, BY);
			await env.client.clearFaults();
			await env.client.completeMany(QUEUE, 1, BY);
			await env.client.waitForWebhookCalls(3);
			expect(await audit(t, before)).toEqual({ expected: 3, emitted: 3, lost: 0, duplicated: 0 });
			// deactivated and activated again: what is completed after the new activation counts
			await t.delete();
			await t.activate();
			const republished = await completedKeys();
			await env.client.setFaults([{ webhook: 'drop', count: 1 }]);
			await env.client.completeMany(QUEUE, 1, BY);
			await env.client.clearFaults();
			await env.client.completeMany(QUEUE, 1, BY);
			await env.client.waitForWebhookCalls(5);
			const after = (await completedKeys()).filter((k) => !republished.includes(k));
			expect(t.emitted.slice(3).map(key)).toEqual(after);
		});
	});

	it('catch-up: a delivery dated in the future (a caller with the secret) does not move the cursor past completions still to come', async () => {
		const t = trigger({ catchUp: true });
		await withServer(t, async () => {
			const before = await completedKeys();
			await t.activate();
			await env.client.createTasks(QUEUE, 10);
			await env.client.completeMany(QUEUE, 1, BY);
			await env.client.waitForWebhookCalls(1);
			const [call] = await env.client.webhookCalls();
			const forged = { ...call.body, id: 999_999, completed_at: '2099-01-01T00:00:00.000Z' };
			const { response } = await t.deliver({
				body: forged,
				query: { secret: t.secret() as string },
			});
			expect(response.statusCode).toBe(200);
			expect(JSON.stringify(t.state().cursor)).not.toContain('2099');
			await env.client.setFaults([{ webhook: 'drop', count: 2 }]);
			await env.client.completeMany(QUEUE, 2, BY);
			await env.client.clearFaults();
			await env.client.completeMany(QUEUE, 1, BY);
			await env.client.waitForWebhookCalls(4);
			const real = t.emitted.filter((x) => x.id !== 999_999);
			expect(real.map(key).sort()).toEqual(
				(await completedKeys()).filter((k) => !before.includes(k)).sort(),
			);
		});
	});

	it('catch-up emits each delivered completion once, though the list writes its instant in microseconds', async () => {
		// a delivery says `…31.928Z`, the completed list `…31.928498Z` for the same completion
		const t = trigger({ catchUp: true });
		await withServer(t, async () => {
			await t.activate();
			await env.client.createTasks(QUEUE, 10);
			await env.client.completeMany(QUEUE, 1, BY);
			await env.client.waitForWebhookCalls(1);
			await env.client.setFaults([{ webhook: 'drop', count: 3 }]);
			await env.client.completeMany(QUEUE, 3, BY);
			await env.client.clearFaults();
			for (let n = 1; n <= 4; n++) {
				await env.client.completeMany(QUEUE, 1, BY);
				await env.client.waitForWebhookCalls(4 + n);
			}
			const calls = await env.client.webhookCalls();
			expect(calls[4].body.completed_at).toMatch(/\.\d{3}Z$/);
			expect(
				(await env.client.tasks(QUEUE)).find((x) => x.id === calls[4].taskId)?.completed_at,
			).toMatch(/\.\d{6}Z$/);
			// 1 delivered, 3 lost and caught up with the next delivery, then 3 more delivered: 8, each once
			expect(t.emitted.map((x) => x.id)).toEqual(calls.map((c) => c.taskId));
			expect(t.executions).toBe(5);
		});
	});

	it('catch-up survives a failing completed-tasks request: the task is emitted, the gap is filled next time', async () => {
		const t = trigger({ catchUp: true });
		await withServer(t, async () => {
			await t.activate();
			await env.client.createTasks(QUEUE, 10);
			await env.client.completeMany(QUEUE, 1, BY);
			await env.client.waitForWebhookCalls(1);
			await env.client.setFaults([{ webhook: 'drop', count: 3 }]);
			await env.client.completeMany(QUEUE, 3, BY);
			await env.client.setFaults([{ route: 'completed', kind: 'html500' }]);
			await env.client.completeMany(QUEUE, 1, BY);
			await env.client.waitForWebhookCalls(5);
			expect(t.executions).toBe(2);
			expect(t.emitted).toHaveLength(2);
			await env.client.clearFaults();
			await env.client.completeMany(QUEUE, 1, BY);
			await env.client.waitForWebhookCalls(6);
			expect(t.executions).toBe(3);
			const ids = t.emitted.map((x) => x.id);
			const calls = (await env.client.webhookCalls()).map((c) => c.taskId);
			expect([...ids].sort()).toEqual([...calls].sort());
			expect(new Set(t.emitted.map(key)).size).toBe(6);
		});
	});
});
