// Reliability: a burst of 500 completions (2,000 with TQ_BURST=2000) at once with 20% of their deliveries lost and a
// quarter committed late (up to 5 s, below later ones, as a real server's containers commit: issue
// 59), three workflows on the queue (one holds it, two listen, each with Catch Up) and a Poll
// Trigger: each emits each completion once, none missing after the next delivery and a check round
// (issue 46; CI58 of stop 76: the holder, which read only on deliveries, missed 11 of 501). CI runs
// it in test:long (2.41.1) and in the n8n 1.x job; its waits fail only when nothing moves for two
// minutes, never on the machine's pace. In queue mode it runs by hand, each address routed by path (a
// listener's reads in two processes, round-robin, can each emit a completion; docs/operating.md):
//   npm run test:queue-mode -- --testPathPattern='burst\.e2e'   (bench/RESULTS-queue-mode.md)
import {
	activate,
	CHECK_EVERY_10_S,
	createWorkflow,
	deleteWorkflow,
	executionsOfTrigger,
	nodeOutput,
	queueLocator,
	countsSettle,
	setupE2E,
	triggerWorkflow,
	TYPES,
	uniq,
	untilDoneOrStalled,
	waitFor,
	webhookTarget,
	type E2E,
} from '../helpers';

const ALICE = 'alice@example.com';

let e: E2E;
beforeAll(async () => (e = await setupE2E()), 600_000);
afterAll(async () => await e?.stop());

describe('Catch Up in a burst', () => {
	beforeAll(async () => await e.queueMode?.setRouting('by-path'));
	afterAll(async () => await e.queueMode?.setRouting('round-robin'));
	// 500 in real n8n (CI), 2,000 by hand (TQ_BURST=2000): the unit twin, trigger/catchUp.test.ts,
	// keeps the burst of 2,000 with one and three triggers and 20% lost in n8n-core's contexts
	const BURST = Number(process.env.TQ_BURST ?? 500);
	test(`${BURST.toLocaleString('en')} completions at once, 20% of their deliveries lost, a quarter committed late (up to 5 s), three workflows on the queue (one holds it, two listen) and a Poll Trigger: each emits each once, none missing after the next delivery and a check round`, async () => {
		await e.client.reset();
		const webhookIds = ['a', 'b', 'c'].map((x) => uniq(`tq-burst-${x}`));
		const ids: string[] = [];
		for (const [i, webhookId] of webhookIds.entries())
			ids.push(
				await createWorkflow(
					e,
					triggerWorkflow(e, `e2e catch-up burst ${webhookId}`, {
						type: TYPES.trigger,
						webhookId,
						parameters: {
							event: 'taskCompleted',
							queue: queueLocator(101),
							// a check round every 10 s: the holder's round reads what no delivery brought
							pollTimes: CHECK_EVERY_10_S,
							options: { catchUp: true, ...(i === 0 ? { replaceExistingWebhook: true } : {}) },
						},
					}),
				),
			);
		// the Poll Trigger, every 10 s: its first poll places its cursor
		ids.push(
			await createWorkflow(
				e,
				triggerWorkflow(e, `e2e catch-up burst poll ${webhookIds[0]}`, {
					type: TYPES.poll,
					parameters: { queue: queueLocator(101), pollTimes: CHECK_EVERY_10_S, options: {} },
				}),
			),
		);
		const polls = async () =>
			(await e.client.requests()).filter(
				(r) => r.method === 'GET' && r.path.endsWith('/queues/101/tasks/completed'),
			).length;
		try {
			await activate(e, ids[0]);
			await waitFor('the first trigger registered', async () =>
				(await webhookTarget(e, 101)).includes(webhookIds[0]),
			);
			const listenersOf = async () =>
				JSON.stringify((await e.n8n.api.get(`/workflows/${ids[0]}`)).data.staticData);
			for (const [i, id] of ids.slice(0, 3).entries()) {
				if (i === 0) continue;
				await activate(e, id);
				await waitFor(`the ${i === 1 ? 'second' : 'third'} trigger listens`, async () =>
					(await listenersOf()).includes(webhookIds[i]) ? true : undefined,
				);
			}
			const keyOf = (t: { id?: unknown; completed_at?: unknown }) =>
				`${String(t.id)}:${Date.parse(String(t.completed_at))}`;
			const before = new Set(
				(await e.client.tasks(101)).filter((t) => t.status === 'completed').map(keyOf),
			);
			const pollsBefore = await polls();
			await activate(e, ids[3]);
			await waitFor('the first poll', async () => (await polls()) > pollsBefore, 60_000);
			await e.client.createTasks(101, BURST + 1);
			await e.client.setFaults({ rules: [{ webhook: 'drop', probability: 0.2 }], seed: 5 });
			// issue 59: a quarter of the completions become visible up to 5 s after later ones, below them
			await e.client.setRealism({ lateCommitShare: 0.25, lateCommitMs: 5_000 });
			await e.client.completeMany(101, BURST, { by: ALICE });
			// about 3 minutes on an idle machine, over 5 with CI's suites side by side: it fails when
			// no delivery finishes for 2 minutes
			await e.client.waitForWebhookCalls(BURST, 120_000);
			await e.client.setRealism({ lateCommitShare: 0 });
			await e.client.clearFaults();
			await e.client.completeMany(101, 1, { by: ALICE });
			await e.client.waitForWebhookCalls(BURST + 1, 120_000);
			const listed = (await e.client.tasks(101))
				.filter((t) => t.status === 'completed')
				.map(keyOf)
				.filter((k) => !before.has(k));
			expect(listed).toHaveLength(BURST + 1);
			const emittedNow = async (id: string) =>
				(await executionsOfTrigger(e, id)).flatMap((x) => nodeOutput(x, 'Trigger')).map(keyOf);
			// n8n runs four executions a completion: under load that takes minutes, so the wait fails only
			// when no workflow emitted anything for two minutes (a completion lost stays lost)
			await untilDoneOrStalled('every completion emitted by every workflow', async () => {
				const counts = await Promise.all(ids.map(async (id) => (await emittedNow(id)).length));
				return { done: counts.every((n) => n >= listed.length), progress: counts.join(',') };
			});
			// an execution emitting a completion twice would show up before every count stops changing
			await countsSettle(
				async () => await Promise.all(ids.map(emittedNow)),
				(xs) => xs.map((x) => x.length).join(','),
			);
			const counts = [];
			for (const id of ids) {
				const emitted = await emittedNow(id);
				const twice = emitted.length - new Set(emitted).size;
				const missing = listed.filter((k) => !emitted.includes(k)).length;
				counts.push({ emitted: emitted.length, twice, missing });
			}
			expect(counts).toEqual(ids.map(() => ({ emitted: BURST + 1, twice: 0, missing: 0 })));
		} finally {
			for (const id of ids) await deleteWorkflow(e, id);
		}
	}, 1_500_000);
});
