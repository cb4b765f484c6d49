// The helpers of the listener tests (listeners.test.ts, listeners.volume.test.ts): triggers of one
// queue behind one stand-in n8n address, the first holding the queue, the second listening.
import { forgetAsAfterRestart } from '../../../../nodes/TaskQueue/runtime/processMemory';
import {
	locator,
	oneN8n,
	startTriggerEnv,
	WebhookTriggerUnderTest,
	type TriggerTestEnv,
} from './env';

/** The suite's sandbox (`suite.env`), each test a new n8n, and the helpers on `queue`. */
export function listenerSuite(queue: number) {
	const suite = { env: undefined as unknown as TriggerTestEnv };
	beforeAll(async () => (suite.env = await startTriggerEnv()));
	afterAll(async () => await suite.env.close());
	// each test is a new n8n: what a process remembered of another test's queue is gone
	beforeEach(async () => {
		forgetAsAfterRestart();
		await suite.env.client.reset();
	});
	return { suite, ...listenerHelpers(() => suite.env, queue) };
}

export function listenerHelpers(env: () => TriggerTestEnv, queue: number) {
	function trigger(webhookId: string, options: Record<string, boolean> = {}) {
		return new WebhookTriggerUnderTest({
			credentials: env().credentials(),
			parameters: { event: 'taskCompleted', queue: locator(queue), options },
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
		const { ids } = await env().client.createTasks(queue, count);
		for (const id of ids) await env().client.complete(queue, id, { by: 'alice@example.com' });
		return ids;
	}

	const target = async () =>
		((await env().client.getQueue(queue)) as unknown as { webhook?: { target?: string } }).webhook
			?.target ?? '';
	const emittedIds = (t: WebhookTriggerUnderTest) => t.emitted.map((task) => task.id);

	/** The reads of the completed list (their first pages), once their count stopped changing for a second. */
	async function readsSettled() {
		const reads = async () =>
			(await env().client.requests()).filter(
				(r) => r.route === 'completed' && r.query.offset === undefined,
			);
		for (let last = -1, now = (await reads()).length; now !== last; now = (await reads()).length) {
			last = now;
			await new Promise((resolve) => setTimeout(resolve, 1000));
		}
		return await reads();
	}

	/** The calls that reached a trigger's address, by kind (the body's first key, or `delivery`). */
	const callsTo = (
		n8n: { calls: Array<{ path: string; kind: string }> },
		t: WebhookTriggerUnderTest,
	) => n8n.calls.filter((c) => c.path === new URL(t.url()).pathname).map((c) => c.kind);

	async function until(probe: () => boolean, timeoutMs = 10_000): Promise<void> {
		const deadline = Date.now() + timeoutMs;
		while (!probe()) {
			if (Date.now() > deadline) throw new Error('timed out');
			await new Promise((resolve) => setTimeout(resolve, 20));
		}
	}

	return {
		trigger,
		holderAndListener,
		completeNew,
		target,
		emittedIds,
		readsSettled,
		callsTo,
		until,
	};
}
