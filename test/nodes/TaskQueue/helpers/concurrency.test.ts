// The pacing of creates (helpers/concurrency.ts), first answer by answer, then against simulated
// services in virtual time: a distant one (latency only) and busy ones (a few workers).
import {
	AdaptiveConcurrency,
	INITIAL_CONCURRENCY,
} from '../../../../nodes/TaskQueue/helpers/concurrency';

test('starts at 8 (or the cap), one more per fast answer, never above the cap', () => {
	expect(new AdaptiveConcurrency(3).limit).toBe(3);
	const limit = new AdaptiveConcurrency(20);
	expect(limit.limit).toBe(INITIAL_CONCURRENCY);
	for (let i = 0; i < 30; i++) limit.answered(limit.sending(), 50, false);
	expect(limit.limit).toBe(20);
});

test('a slow round cuts a quarter, an overloaded answer half, once per round, never below 1', () => {
	const limit = new AdaptiveConcurrency(64, 40);
	const tickets = Array.from({ length: 41 }, () => limit.sending());
	limit.answered(tickets[0], 20, false); // the fastest so far, 20 ms: fast enough is 50 ms -> 41
	for (const ticket of tickets.slice(1, 40)) limit.answered(ticket, 80, false); // slow: no growth
	expect(limit.limit).toBe(41);
	limit.answered(tickets[40], 80, false); // 41 answers, 78.5 ms on average: a quarter off
	expect(limit.limit).toBe(30);
	limit.answered(tickets[39], 1, true); // overloaded, but sent before the cut: no second cut
	expect(limit.limit).toBe(30);
	limit.answered(limit.sending(), 5, true); // sent after it: halved
	expect(limit.limit).toBe(15);
	for (let i = 0; i < 20; i++) limit.answered(limit.sending(), 0, true);
	expect(limit.limit).toBe(1);
});

test('one slow answer in a fast round does not cut: n8n reads a burst of answers one by one', () => {
	const limit = new AdaptiveConcurrency(64, 20);
	limit.answered(limit.sending(), 0, true); // halved to 10, one per round from now on
	const tickets = Array.from({ length: 10 }, () => limit.sending());
	tickets.forEach((ticket, i) => limit.answered(ticket, i < 9 ? 50 : 300, false)); // 75 ms on average
	expect(limit.limit).toBe(10); // 10.9: not cut to 7
	const next = Array.from({ length: 10 }, () => limit.sending());
	next.forEach((ticket) => limit.answered(ticket, 300, false)); // a slow round
	expect(limit.limit).toBe(8);
});

test('after a cut it grows by one per round (a round: as many answers as the limit)', () => {
	const limit = new AdaptiveConcurrency(64, 16);
	limit.answered(limit.sending(), 20, false); // 17
	limit.answered(limit.sending(), 20, true); // halved: 8
	expect(limit.limit).toBe(8);
	for (let i = 0; i < 8; i++) limit.answered(limit.sending(), 20, false);
	expect(limit.limit).toBe(8); // 8.96...
	limit.answered(limit.sending(), 20, false);
	expect(limit.limit).toBe(9);
});

/**
 * A service with `workers` working `serviceMs` each (Infinity: as many as sent) behind `networkMs`
 * each way, fed by a client that keeps `limit` creates in flight. Virtual time, deterministic.
 */
function simulate(options: {
	workers: number;
	serviceMs: number;
	networkMs: number;
	creates: number;
	cap?: number;
}) {
	const limit = new AdaptiveConcurrency(options.cap ?? 64);
	type Event = { at: number; run: () => void };
	const events: Event[] = [];
	const schedule = (at: number, run: () => void) => {
		events.push({ at, run });
		events.sort((a, b) => a.at - b.at);
	};
	let now = 0;
	let sent = 0;
	let done = 0;
	let inFlight = 0;
	let busy = 0;
	const queue: Array<() => void> = [];
	const limits: number[] = [];
	const startWork = (finish: () => void) => {
		busy++;
		schedule(now + options.serviceMs, () => {
			busy--;
			finish();
			if (queue.length > 0) startWork(queue.shift()!);
		});
	};
	const send = () => {
		while (sent < options.creates && inFlight < limit.limit) {
			sent++;
			inFlight++;
			const ticket = limit.sending();
			const sentAt = now;
			schedule(now + options.networkMs, () => {
				const finish = () =>
					schedule(now + options.networkMs, () => {
						inFlight--;
						done++;
						limit.answered(ticket, now - sentAt, false);
						limits.push(limit.limit);
						send();
					});
				if (busy < options.workers) startWork(finish);
				else queue.push(finish);
			});
		}
	};
	send();
	while (events.length > 0) {
		const event = events.shift()!;
		now = event.at;
		event.run();
	}
	return { done, elapsedMs: now, limits };
}

test('a distant service (50 ms, no queueing) is soon sent as many as the cap', () => {
	const run = simulate({ workers: Infinity, serviceMs: 2, networkMs: 25, creates: 1000 });
	expect(run.done).toBe(1000);
	expect(run.limits.indexOf(64)).toBeLessThan(100);
	// 1000 creates at 52 ms each: about 16 rounds of 64 after the ramp (8 in flight would take 65)
	expect(run.elapsedMs).toBeLessThan((1000 * 52) / 40);
});

test.each([1, 4, 16])(
	'a busy service with %i worker(s) keeps about as many in flight as it works on, at full speed',
	(workers) => {
		const run = simulate({ workers, serviceMs: 20, networkMs: 1, creates: 2000 });
		expect(run.done).toBe(2000);
		const settled = run.limits.slice(500);
		const average = settled.reduce((a, b) => a + b, 0) / settled.length;
		// about one request waiting per worker (answers waiting longer than the fastest round trip plus
		// 10 ms cut the limit), never the cap of 64 for a small service
		expect(average).toBeGreaterThanOrEqual(workers * 0.9);
		expect(average).toBeLessThanOrEqual(workers * 2.5 + 1);
		expect(Math.max(...settled)).toBeLessThanOrEqual(workers * 3 + 2);
		// and the service is kept busy: close to 2000 x 20 ms / workers
		expect(run.elapsedMs).toBeLessThan(((2000 * 20) / workers) * 1.25);
	},
);

// The busy service of actions/task/create.concurrency.test.ts (2 workers, 250 ms, 80 creates) where no
// load reaches it: that test's bound of 12 after 40 creates, and the 4-6 a quiet machine shows there.
test('a busy service of 2 workers at 250 ms: at most 6 in flight after 40 creates (bound 12)', () => {
	const run = simulate({ workers: 2, serviceMs: 250, networkMs: 0, creates: 80 });
	expect(run.done).toBe(80);
	expect(Math.max(...run.limits.slice(40))).toBeLessThanOrEqual(6);
});
