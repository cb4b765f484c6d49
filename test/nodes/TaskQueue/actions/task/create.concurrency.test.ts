// How many creates the node keeps in flight, seen from the service: the sandbox records how many
// API requests it was serving when each arrived. Paced by helpers/concurrency.ts (default cap 64).
import type { RequestLogEntry } from '../../../../../sandbox/types';
import { AdaptiveConcurrency } from '../../../../../nodes/TaskQueue/helpers/concurrency';
import { locator, startEnv, type TestEnv } from '../../env';

// A backstop, not a bound: the distant service's 600 creates take 12-20 s quiet; beside CI and a
// second fast tier (about 3.5x the quiet time) the test passed jest's default 60 s, and its creates
// still under way then spilled into the next test's counts (stop 69, CI31's load run). Every
// assertion is on counts and on what the node saw.
jest.setTimeout(600_000);

let env: TestEnv;
beforeAll(async () => (env = await startEnv()));
afterAll(async () => await env.close());
beforeEach(async () => await env.client.reset());

const autoMap = { mappingMode: 'autoMapInputData', value: null, matchingColumns: [], schema: [] };

async function createMany(count: number, options: Record<string, unknown> = {}) {
	const input = Array.from({ length: count }, (_, i) => ({
		customer_message: `paced-${i}`,
		decision: 'approve',
	}));
	const run = await env.run(
		{ resource: 'task', operation: 'create', queue: locator(101), taskData: autoMap, options },
		input,
	);
	expect(run.error).toBeUndefined();
	const creates = (await env.client.requests()).filter((r) => r.route === 'createTask');
	const markers = (await env.client.tasks(101))
		.map((t) => t.data.customer_message)
		.filter((m) => String(m).startsWith('paced-'));
	return { run, creates, markers, input };
}

const inFlight = (creates: RequestLogEntry[]) => creates.map((r) => r.inFlight);
/** Requests go out in waves (the answers of one wave come back together): the most of each. */
const waves = (creates: RequestLogEntry[]) =>
	creates.reduce<number[]>(
		(peaks, r) =>
			r.inFlight === 1 || peaks.length === 0
				? [...peaks, 1]
				: [...peaks.slice(0, -1), Math.max(peaks.at(-1)!, r.inFlight)],
		[],
	);

test('a distant service (1 s a request): the node sends more than 8 at once, never more than the cap of 64', async () => {
	// 1 s, not 40 ms: the first 8 must all leave before the first answer comes back, and a jest
	// worker beside others once took longer than 40 ms to send them (CI, 2026-11-27: 3 of 8); nor
	// 200 ms: beside CI and a fast tier of four workers (load 23), this process's event loop added
	// enough to 200 ms answers for the node to read them as queueing, and cut (62 waves, CI18 of stop
	// 66). Load now has to add a second to an answer before the node may cut.
	await env.client.setLatency(1000);
	const { run, creates, markers, input } = await createMany(600);
	expect(
		run.items.map((i) => [
			i.pairedItem,
			(i.json.data as { customer_message: string }).customer_message,
		]),
	).toEqual(input.map((item, i) => [{ item: i }, item.customer_message]));
	expect(new Set(markers).size).toBe(600);
	expect(markers).toHaveLength(600);
	// Quiet machine: waves of 8, 16, 32, 64, 64, ... (600 in about 12 waves instead of 75 of 8). The
	// sandbox runs in this process, so on a loaded machine its answers slow down with the load and
	// the node cuts back (as it should): only the start at 8, the growth past 8 and the cap are
	// asserted here; the ramp itself is shown in virtual time in test/nodes/TaskQueue/helpers/concurrency.test.ts.
	// It starts with 8: exactly 8 creates arrive before the service's first answer, however loaded.
	const firstAnswer = Math.min(...creates.map((r) => r.answeredAt));
	expect(creates.filter((r) => r.arrivedAt < firstAnswer)).toHaveLength(8);
	expect(Math.max(...inFlight(creates))).toBeGreaterThanOrEqual(16);
	expect(Math.max(...inFlight(creates))).toBeLessThanOrEqual(64);
	expect(waves(creates).length).toBeLessThan(60);
});

// The node tells queueing from the network by answer times: an answer within twice the fastest it
// saw plus 10 ms is fast (helpers/concurrency.ts). With 2 workers at 250 ms, an answer with n creates
// in flight takes about n x 125 ms, so the node settles near (2 x fastest + 10) / 125: 4-5 on a quiet
// machine (5-6 measured), bound 12 as before. The sandbox runs in this process, so load adds to every
// answer the node times, the fastest too (CI27's loop beside CI: 16 in flight). The bound is read from
// the fastest answer the node itself saw: 12 while it is within 50 ms of the service's 250, and as
// much more as the rule allows past that (its fastest answer spied, not changed). The same scenario in
// virtual time, where no load reaches it, holds 6 (test/nodes/TaskQueue/helpers/concurrency.test.ts).
test('a busy service (2 workers, 250 ms each): the node keeps a few in flight, not the cap', async () => {
	const seen = jest.spyOn(AdaptiveConcurrency.prototype, 'answered');
	try {
		await env.client.setFaults({ latencyMs: 250, capacity: 2 });
		const { creates, markers } = await createMany(80);
		expect(new Set(markers).size).toBe(80);
		expect(seen).toHaveBeenCalledTimes(80);
		const fastestMs = Math.min(...seen.mock.calls.map(([, elapsedMs]) => elapsedMs));
		expect(fastestMs).toBeGreaterThanOrEqual(250);
		const bound = Math.max(12, 12 + Math.ceil((2 * (fastestMs - 300)) / 125));
		expect(Math.max(...inFlight(creates.slice(40)))).toBeLessThanOrEqual(bound);
	} finally {
		seen.mockRestore();
	}
});

test('Max Concurrency caps it: never more than 4 at once', async () => {
	await env.client.setLatency(20);
	const { creates, markers } = await createMany(120, { concurrency: 4 });
	expect(markers).toHaveLength(120);
	expect(Math.max(...inFlight(creates))).toBe(4);
});

test('a rate-limiting service (429 on a third of the creates): fewer at once, every task created once', async () => {
	await env.client.setFaults({
		latencyMs: 20,
		seed: 7,
		rules: [{ route: 'createTask', kind: '429', probability: 0.3, retryAfter: 0 }],
	});
	// Each item is tried 5 times: which request meets which draw depends on arrival order, so an item
	// may meet five 429s in a row (0.3^5 each, ~0.7 of 300 expected): it is then reported, never created.
	const input = Array.from({ length: 300 }, (_, i) => ({
		customer_message: `paced-${i}`,
		decision: 'approve',
	}));
	const run = await env.run(
		{ resource: 'task', operation: 'create', queue: locator(101), taskData: autoMap, options: {} },
		input,
		{
			continueOnFail: true,
		},
	);
	const creates = (await env.client.requests()).filter((r) => r.route === 'createTask');
	const markers = (await env.client.tasks(101))
		.map((t) => String(t.data.customer_message))
		.filter((m) => m.startsWith('paced-'));
	const failed = run.items.filter((i) => i.json.error !== undefined);
	expect(failed.every((i) => String(i.json.error).includes('rate limiting'))).toBe(true);
	expect(failed.length).toBeLessThanOrEqual(5);
	expect(new Set(markers).size).toBe(300 - failed.length);
	expect(markers).toHaveLength(300 - failed.length);
	expect(creates.filter((r) => r.status === 201)).toHaveLength(300 - failed.length);
	expect(Math.max(...inFlight(creates.slice(100)))).toBeLessThanOrEqual(10);
});
