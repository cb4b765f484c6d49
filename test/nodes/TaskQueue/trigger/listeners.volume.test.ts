// A listener under a flood (listeners.test.ts has the rest): however many nudges arrive, from
// anyone or from the holder after each delivery of a burst, the listener reads, and the holder
// nudges it, at most once per NUDGE_GAP_MS (trigger/holder.ts), and each trigger emits every
// completion once. 1,000 completions: out of the fast tier.
import { NUDGE_GAP_MS } from '../../../../nodes/TaskQueue/trigger/holder';
import { recordFigures } from '../../../reliability/figures';
import { listenerSuite } from './listenersEnv';

const QUEUE = 101;
const { suite, holderAndListener, emittedIds, readsSettled, callsTo, until } = listenerSuite(QUEUE);

test('1,000 nudges at once, and a burst of 1,000 completions: a listener reads at most once per 250 ms, the holder nudges it at most once per 250 ms, and each emits every completion once', async () => {
	const { a, b, n8n } = await holderAndListener();
	try {
		const made = { id: 99999, status: 'completed', queue_id: QUEUE, data: { refund: 5000 } };
		await suite.env.client.clearRequests();
		let started = Date.now();
		const nudges = Array.from({ length: 1000 }, async () => {
			const body = { taskQueueNudge: { look: false, task: made }, ...made };
			return (await b.deliver({ body })).response.statusCode;
		});
		expect(new Set(await Promise.all(nudges))).toEqual(new Set([200]));
		// each read starts 250 ms or more after the last (NUDGE_GAP_MS), and nudges meanwhile share
		// the one waiting: while the nudges arrive, at most one read per 250 ms, then one more
		// (the figures: .tmp/reliability/listener-flood.json)
		const nudging = Date.now() - started;
		let reads = await readsSettled();
		expect(reads.length).toBeGreaterThan(0);
		expect(reads.length).toBeLessThanOrEqual(2 + Math.floor(nudging / NUDGE_GAP_MS));
		const readsOnNudges = reads.length;
		expect(b.emitted).toEqual([]);
		// a burst through the holder: its nudges to the listener are paced the same way
		await suite.env.client.clearRequests();
		n8n.calls.length = 0;
		await suite.env.client.createTasks(QUEUE, 1000);
		started = Date.now();
		const { ids } = await suite.env.client.completeMany(QUEUE, 1000, { by: 'alice@example.com' });
		await suite.env.client.waitForWebhookCalls(1000, 600_000);
		// the same bound over the deliveries: at most one nudge and one read per 250 ms while they
		// arrive; then the holder's one nudge to follow, and the listener's read waiting plus the
		// one that nudge may start
		const delivering = Date.now() - started;
		await until(() => emittedIds(b).length >= 1000, 600_000);
		reads = await readsSettled();
		const nudged = callsTo(n8n, b).filter((kind) => kind === 'taskQueueNudge').length;
		recordFigures('listener-flood', {
			nudging,
			readsOnNudges,
			delivering,
			nudged,
			reads: reads.length,
		});
		expect(nudged).toBeLessThanOrEqual(2 + Math.floor(delivering / NUDGE_GAP_MS));
		expect(reads.length).toBeLessThanOrEqual(3 + Math.floor(delivering / NUDGE_GAP_MS));
		const sorted = [...ids].sort((x, y) => Number(x) - Number(y));
		expect([...emittedIds(a)].sort((x, y) => Number(x) - Number(y))).toEqual(sorted);
		expect([...emittedIds(b)].sort((x, y) => Number(x) - Number(y))).toEqual(sorted);
	} finally {
		await n8n.close();
	}
}, 900_000);
