// A backlog of 25,000 completions on a service that answers each request 600 ms late, read by the
// one reader (nodes/TaskQueue/reader/reader.ts) for Catch Up (on the next deliveries), a listener
// (on the holder's next nudges) and the Poll Trigger (on its next polls, within n8n 2.x's poll
// budget): every completion once, the
// backlog oldest first, every round moving. The rounds and seconds are recorded
// (.tmp/reliability/backlog-readers.json; bench/RESULTS.md quotes them), not asserted, with the
// heap the reading rounds took above what was there before (the sandbox and its backlog run in this
// process). TQ_BACKLOG sets the size: `TQ_BACKLOG=250000 npx jest test/reliability/backlog-readers`.
import type { INodeParameters } from 'n8n-workflow';

import { timeKey } from '../../nodes/TaskQueue/reader/completions';
import { forgetAsAfterRestart } from '../../nodes/TaskQueue/runtime/processMemory';
import { startWaitingRun, WaitingEndpoint } from '../helpers/waiting';
import {
	locator,
	oneN8n,
	PollTriggerUnderTest,
	startTriggerEnv,
	startWebhookServer,
	WebhookTriggerUnderTest,
	type TriggerTestEnv,
} from '../nodes/TaskQueue/trigger/env';
import { recordFigures } from './figures';

const QUEUE = 101;
const BY = { by: 'bob@example.com' };
const BACKLOG = Number(process.env.TQ_BACKLOG ?? 25_000);
/** Enough rounds for any size: a round reads at least 1,000 (20 s of 600 ms pages). */
const MAX_ROUNDS = 10 + Math.ceil(BACKLOG / 1000);
const LATENCY_MS = 600;
/** Backstops grow with the size: 25,000 has 120 s to be delivered, and each test 10 to 15 minutes. */
const SCALE = Math.max(1, BACKLOG / 25_000);

let env: TriggerTestEnv;
beforeAll(async () => (env = await startTriggerEnv()));
afterAll(async () => await env.close());
beforeEach(async () => await env.client.reset());

const key = (t: { id?: unknown; completed_at?: unknown }) =>
	`${String(t.id)}:${timeKey(String(t.completed_at))}`;

/** The queue's completions made since `before`, oldest first, as keys. */
async function listedSince(before: Set<string>): Promise<string[]> {
	return (await env.client.tasks(QUEUE))
		.filter((x) => x.status === 'completed')
		.sort((a, b) =>
			timeKey(String(a.completed_at)) === timeKey(String(b.completed_at))
				? a.id - b.id
				: timeKey(String(a.completed_at)) < timeKey(String(b.completed_at))
					? -1
					: 1,
		)
		.map(key)
		.filter((k) => !before.has(k));
}

async function completedNow(): Promise<Set<string>> {
	return new Set((await env.client.tasks(QUEUE)).filter((x) => x.status === 'completed').map(key));
}

const figures: Record<string, unknown> = { backlog: BACKLOG, latencyMs: LATENCY_MS };

/**
 * Runs `rounds` on a service answering LATENCY_MS late, and measures the heap meanwhile, in MB above
 * the heap when they started: its peak, and what was still held after (the harness keeps every
 * emitted item; a GC first where node runs with --expose-gc).
 */
async function slowRounds(
	rounds: () => Promise<void>,
): Promise<{ peakMb: number; heldAfterMb: number }> {
	const gc = (global as { gc?: () => void }).gc;
	gc?.();
	const base = process.memoryUsage().heapUsed;
	let peak = base;
	const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().heapUsed)), 50);
	await env.client.setLatency(LATENCY_MS);
	try {
		await rounds();
	} finally {
		clearInterval(sampler);
		await env.client.setLatency(0);
	}
	peak = Math.max(peak, process.memoryUsage().heapUsed);
	gc?.();
	const mb = (bytes: number) => Math.round(bytes / 1e5) / 10;
	return { peakMb: mb(peak - base), heldAfterMb: mb(process.memoryUsage().heapUsed - base) };
}
afterAll(() => recordFigures('backlog-readers', figures));

test(
	`Catch Up: ${BACKLOG.toLocaleString('en')} completions between two deliveries, ${LATENCY_MS} ms a request: all once, oldest first, every delivery moves`,
	async () => {
		const t = new WebhookTriggerUnderTest({
			credentials: env.credentials(),
			parameters: {
				event: 'taskCompleted',
				queue: locator(QUEUE),
				options: { catchUp: true } as INodeParameters,
			},
		});
		const server = await startWebhookServer(t);
		try {
			await t.activate();
			const before = await completedNow();
			await env.client.createTasks(QUEUE, BACKLOG + 20);
			await env.client.completeMany(QUEUE, 1, BY);
			await env.client.waitForWebhookCount(1);
			await env.client.setFaults([{ webhook: 'drop', count: BACKLOG }]);
			await env.client.completeMany(QUEUE, BACKLOG, BY);
			await env.client.waitForWebhookCount(BACKLOG + 1, 120_000 * SCALE);
			await env.client.clearFaults();
			const delivered: number[] = [];
			const perDelivery: Array<{ emitted: number; seconds: number }> = [];
			const heap = await slowRounds(async () => {
				for (let round = 0; round < MAX_ROUNDS && t.emitted.length < BACKLOG + 1 + round; round++) {
					const emittedBefore = t.emitted.length;
					const started = Date.now();
					const { ids } = await env.client.completeMany(QUEUE, 1, BY);
					delivered.push(ids[0]);
					await env.client.waitForWebhookCount(BACKLOG + 2 + round, 120_000);
					// the trigger answers the service, then returns the items (respondWritten): the
					// delivery's items are counted once its webhook() returned (250,000: a round's 28,972
					// items were counted with the next round's, which then seemed not to move)
					await t.idle();
					perDelivery.push({
						emitted: t.emitted.length - emittedBefore,
						seconds: (Date.now() - started) / 1000,
					});
				}
			});
			figures.catchUp = { deliveries: perDelivery.length, perDelivery, heap };
			// every delivery moved: it emitted more than itself until the backlog was read
			expect(perDelivery.slice(0, -1).every((d) => d.emitted > 1)).toBe(true);
			const listed = await listedSince(before);
			const emitted = t.emitted.map(key);
			expect(new Set(emitted).size).toBe(emitted.length); // none twice
			expect([...emitted].sort()).toEqual([...listed].sort()); // none missing
			// the backlog (all but the deliveries that prompted the reads) came oldest first
			const prompts = new Set(delivered.map(String));
			const backlogOrder = emitted.filter((k) => !prompts.has(k.split(':')[0]));
			expect(backlogOrder).toEqual(listed.filter((k) => !prompts.has(k.split(':')[0])));
		} finally {
			await server.close();
		}
	},
	600_000 * SCALE,
);

test(
	`a listener: ${BACKLOG.toLocaleString('en')} completions between two nudges, ${LATENCY_MS} ms a request: all once, oldest first, every nudge moves`,
	async () => {
		forgetAsAfterRestart();
		const trigger = (webhookId: string) =>
			new WebhookTriggerUnderTest({
				credentials: env.credentials(),
				parameters: { event: 'taskCompleted', queue: locator(QUEUE), options: {} },
				webhookId,
			});
		const holder = trigger('a0000000-0000-4000-8000-00000000000a');
		const listener = trigger('b0000000-0000-4000-8000-00000000000b');
		const n8n = await oneN8n([holder, listener]);
		try {
			await holder.activate();
			await listener.activate();
			expect(listener.state().registration).toMatchObject({ listening: true });
			const before = await completedNow();
			await env.client.createTasks(QUEUE, BACKLOG + 20);
			// the backlog's deliveries are lost: the holder never nudges for them
			await env.client.setFaults([{ webhook: 'drop', count: BACKLOG }]);
			await env.client.completeMany(QUEUE, BACKLOG, BY);
			await env.client.waitForWebhookCount(BACKLOG, 120_000 * SCALE);
			await env.client.clearFaults();
			const perNudge: Array<{ emitted: number; seconds: number }> = [];
			const heap = await slowRounds(async () => {
				for (
					let round = 0;
					round < MAX_ROUNDS && listener.emitted.length < BACKLOG + round;
					round++
				) {
					const emittedBefore = listener.emitted.length;
					const started = Date.now();
					// one delivery: the holder emits it and nudges the listener, which reads from its cursor
					await env.client.completeMany(QUEUE, 1, BY);
					const deadline = Date.now() + 120_000;
					while (listener.emitted.length === emittedBefore) {
						if (Date.now() > deadline) throw new Error(`round ${round}: the listener did not read`);
						await new Promise((resolve) => setTimeout(resolve, 100));
					}
					perNudge.push({
						emitted: listener.emitted.length - emittedBefore,
						seconds: (Date.now() - started) / 1000,
					});
				}
			});
			figures.listener = { nudges: perNudge.length, perNudge, heap };
			const listed = await listedSince(before);
			const emitted = listener.emitted.map(key);
			expect(new Set(emitted).size).toBe(emitted.length); // none twice
			expect([...emitted].sort()).toEqual([...listed].sort()); // none missing
			// oldest first: the listener reads from its cursor, so all it emits comes in the list's order
			expect(emitted).toEqual(listed);
			expect(perNudge.slice(0, -1).every((n) => n.emitted > 1)).toBe(true);
		} finally {
			await n8n.close();
		}
	},
	900_000 * SCALE,
);

test(
	`the Poll Trigger: ${BACKLOG.toLocaleString('en')} completions between two polls, ${LATENCY_MS} ms a request, a 30 s poll budget: all once, oldest first, every poll moves`,
	async () => {
		const t = new PollTriggerUnderTest({
			credentials: env.credentials(),
			parameters: { queue: locator(QUEUE), options: {} },
		});
		t.budgetMs = 30_000;
		expect(await t.poll()).toBeNull(); // places the cursor
		const before = await completedNow();
		await env.client.createTasks(QUEUE, BACKLOG);
		await env.client.completeMany(QUEUE, BACKLOG, BY);
		const perPoll: Array<{ emitted: number; seconds: number }> = [];
		const heap = await slowRounds(async () => {
			for (let poll = 0; poll < MAX_ROUNDS && t.emitted.length < BACKLOG; poll++) {
				const started = Date.now();
				const items = await t.poll();
				perPoll.push({ emitted: items?.[0].length ?? 0, seconds: (Date.now() - started) / 1000 });
			}
		});
		figures.pollTrigger = { polls: perPoll.length, perPoll, heap };
		expect(perPoll.every((p) => p.emitted > 0)).toBe(true);
		expect(t.emitted.map(key)).toEqual(await listedSince(before));
		expect(await t.poll()).toBeNull();
	},
	600_000 * SCALE,
);

test(
	`Check for Lost Completions: a run's lost answer newer than ${BACKLOG.toLocaleString('en')} other completions, on a service answering ${LATENCY_MS} ms late, reaches the run in the first round`,
	async () => {
		forgetAsAfterRestart();
		const waiting = new WaitingEndpoint();
		const trigger = new WebhookTriggerUnderTest({
			credentials: env.credentials(),
			parameters: { event: 'taskCompleted', queue: locator(104), options: {} },
		});
		const server = await startWebhookServer(trigger, waiting);
		try {
			await trigger.activate();
			await trigger.reconcile(); // the check stands before the backlog
			await env.client.createTasks(104, BACKLOG); // older than the run's task: completed first
			const run = await startWaitingRun({
				credentials: env.credentials(),
				executionId: '4601',
				input: [{ message: 'only' }],
				waitingBaseUrl: server.waitingBaseUrl,
			});
			waiting.add('4601', run);
			const [task] = (await env.client.tasks(104)).filter((t) =>
				String(t.data.resume_url).includes('/4601/'),
			);
			await env.client.setWebhook(104, ''); // every delivery from here on is lost
			await env.client.completeMany(104, BACKLOG, BY);
			await env.client.complete(104, task.id, {
				by: 'alice@example.com',
				data: { decision: 'approve' },
			});
			await env.client.setLatency(LATENCY_MS);
			const started = Date.now();
			try {
				trigger.pollBudgetMs = 30_000; // n8n 2.x's budget for the round: 80% of it, at most 20 s
				expect(await trigger.reconcile()).toBeNull();
			} finally {
				await env.client.setLatency(0);
			}
			figures.checkNewestFirst = { rounds: 1, seconds: (Date.now() - started) / 1000 };
			expect(waiting.resumes.get('4601')).toBe(1);
			expect(trigger.executions).toBe(0);
		} finally {
			await server.close();
		}
	},
	600_000 * SCALE,
);
