// A run's answer lost while Check for Lost Completions crawls a day's backlog, in a real n8n
// (issue 59; on the real server it reached its run 166-227 s late): a route back published over
// 60,000 completions of the last day, every read of the service 600 ms, the run started a second
// later and its answer's delivery lost. The check's first round cannot read the day from the top, so
// it reads it oldest first over many rounds; each round reads the newest page first, so the answer
// reaches its run before the crawl gets there. The assertion is the order (the run resumed while
// the check's record was still below its answer), not a time. CI runs it in npm run test:long (2.41.1).
import { timeKey } from '../../../nodes/TaskQueue/reader/completions';
import {
	activate,
	askWorkflow,
	startAsk,
	CHECK_EVERY_10_S,
	createWorkflow,
	deleteWorkflow,
	executions,
	executionsOfTrigger,
	nodeOutput,
	queueLocator,
	setupE2E,
	triggerWorkflow,
	TYPES,
	uniq,
	waitFor,
	webhookTarget,
	type E2E,
} from '../helpers';

// every read takes 600 ms at least, so a round (20 s at most) reads at most 33 pages of 1,000: the
// activation's round and the next cannot crawl 60,000, however fast the machine
const BACKLOG = Number(process.env.TQ_BACKLOG_E2E ?? 60_000);

let e: E2E;
beforeAll(async () => (e = await setupE2E()), 600_000);
afterAll(async () => await e?.stop());

test(`a run's answer lost while the check crawls a day's backlog (${BACKLOG.toLocaleString('en')} completions, every read 600 ms, the route back published a second before the run): the run resumes once with it before the crawl reaches it`, async () => {
	await e.client.reset();
	const queue = await e.client.createQueue({
		name: uniq('Refund Decisions, a busy day'),
		blocks: (await e.client.getQueue(104)).data,
	});
	// the day's work, completed before the route back exists (no deliveries)
	await e.client.createTasks(queue.id, BACKLOG);
	await e.client.completeMany(queue.id, BACKLOG, { by: 'bob@example.com' });
	const webhookId = uniq('tq-backlog-route-back');
	const routeBack = await createWorkflow(
		e,
		triggerWorkflow(e, `e2e route back over a backlog ${webhookId}`, {
			type: TYPES.trigger,
			webhookId,
			parameters: {
				event: 'taskCompleted',
				queue: queueLocator(queue.id),
				pollTimes: CHECK_EVERY_10_S,
				options: {},
			},
		}),
	);
	const path = uniq('ask-over-backlog');
	const run = await createWorkflow(
		e,
		askWorkflow(e, `e2e ask over a backlog ${path}`, { path, queueId: queue.id }),
	);
	try {
		await activate(e, routeBack);
		await waitFor('the route back registered', async () =>
			(await webhookTarget(e, queue.id)).includes(`/webhook/${webhookId}/`),
		);
		await e.client.setLatency(600);
		await activate(e, run);
		await new Promise((resolve) => setTimeout(resolve, 1_000));
		const task = await startAsk(e, path, queue.id);
		await e.client.setFaults({ rules: [{ webhook: 'drop', count: 1 }], latencyMs: 600 });
		await e.client.complete(queue.id, task.id, {
			by: 'alice@example.com',
			data: { decision: 'approve' },
		});
		const answeredAt = timeKey(
			String((await e.client.tasks(queue.id)).find((t) => t.id === task.id)?.completed_at),
		);
		// the check's record (its cursor, in the route back's static data)
		const checkAt = async () =>
			Object.values(
				((await e.n8n.api.get(`/workflows/${routeBack}`)).data.staticData ?? {}) as Record<
					string,
					{ lostCompletionCheck?: { at?: string } }
				>,
			)
				.map((node) => node?.lostCompletionCheck?.at ?? '')
				.reduce((x, y) => (x > y ? x : y), '');
		const started = Date.now();
		// a backstop a healthy run never nears: the crawl alone takes minutes at this pace
		const done = await waitFor(
			'the run resumed',
			async () => (await executions(e, run)).find((x) => x.status === 'success'),
			300_000,
			500,
		);
		const resumedAfterMs = Date.now() - started;
		// where the check stood once the round that resumed the run had ended (the record, written
		// at the end of each round, never goes back): still below the answer, so the crawl had not
		// reached it; the answer came from the newest page the round read first
		const recordAt = await waitFor(
			"the check's record",
			async () => (await checkAt()) || undefined,
			120_000,
			500,
		);
		const below = (await e.client.tasks(queue.id)).filter((t) => {
			const at = timeKey(String(t.completed_at ?? ''));
			return t.completed_at && at > recordAt && at < answeredAt;
		}).length;
		process.stderr.write(
			`[backlog e2e] resumed ${resumedAfterMs} ms after the answer; the check's record then ${below} completions below it\n`,
		);
		expect(recordAt < answeredAt).toBe(true);
		expect(nodeOutput(done, 'Ask a person').map((o) => o.id)).toEqual([task.id]);
		expect((await executions(e, run)).length).toBe(1);
		expect(await executionsOfTrigger(e, routeBack)).toHaveLength(0);
	} finally {
		await e.client.clearFaults();
		await deleteWorkflow(e, run);
		await deleteWorkflow(e, routeBack);
	}
}, 900_000);
