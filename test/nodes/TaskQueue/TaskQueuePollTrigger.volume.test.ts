// The Poll Trigger over backlogs of 2,500 completions (the rest tier: jest.config.js leaves
// *.volume.test.ts out of `npm run test:quick`); the other cases are in TaskQueuePollTrigger.node.test.ts.
import { BY, QUEUE, usePollTriggerEnv } from './pollTriggerEnv';

const key = (t: { id?: unknown; completed_at?: unknown }) =>
	`${String(t.id)}:${String(t.completed_at)}`;

const { env: currentEnv, trigger, completedRequests, completedNewestFirst } = usePollTriggerEnv();

describe('a backlog of 2,500 completions read while more arrive', () => {
	it('emits every completion once, oldest first, none lost, none twice', async () => {
		const t = trigger();
		await t.poll();
		const before = new Set((await completedNewestFirst()).map(key));

		await currentEnv().client.createTasks(QUEUE, 2700);
		await currentEnv().client.completeMany(QUEUE, 2500, BY);
		const backlog = (await completedNewestFirst()).filter((x) => !before.has(key(x)));
		expect(backlog).toHaveLength(2500);

		// While the first poll pages through the backlog, people keep completing tasks and a
		// reviewer forces re-completions of tasks the poll has already read or not yet read.
		let polling = true;
		let arrived = 0;
		const traffic = (async () => {
			let i = 0;
			while (polling) {
				if (i % 3 === 2)
					await currentEnv().client.recomplete(backlog[(i * 97) % backlog.length].id as number);
				else await currentEnv().client.completeMany(QUEUE, 1, BY);
				arrived++;
				i++;
			}
		})();
		await currentEnv().client.clearRequests();
		// Slow answers (25 ms each) so that plenty arrives between the poll's requests.
		await currentEnv().client.setLatency(25);
		const first = await t.poll();
		polling = false;
		await currentEnv().client.clearFaults();
		await traffic;
		const requests = await completedRequests();

		// Later polls pick up what arrived meanwhile; then the queue is idle.
		let polls = 1;
		while ((await t.poll()) !== null) polls++;
		expect(await t.poll()).toBeNull();

		const emitted = t.emitted;
		const emittedKeys = emitted.map(key);
		const live = (await completedNewestFirst()).filter((x) => !before.has(key(x)));
		const lost = live.filter((x) => !emittedKeys.includes(key(x)));
		const duplicated = emittedKeys.length - new Set(emittedKeys).size;
		const times = emitted.map((x) => Date.parse(String(x.completed_at)));
		const outOfOrder = times.filter((time, i) => i > 0 && time < times[i - 1]).length;
		console.log(
			`poll backlog: first poll ${first?.[0].length} items in ${requests.length} requests; ${arrived} completions/re-completions arrived during it; ` +
				`${polls} polls in all; emitted ${emittedKeys.length}; lost ${lost.length}; duplicated ${duplicated}; out of order ${outOfOrder}`,
		);
		// Backlog tasks re-completed before the poll read them are emitted at their new time instead.
		expect(first?.[0].length).toBeGreaterThan(2000);
		expect(arrived).toBeGreaterThan(0);
		expect(lost).toEqual([]);
		expect(duplicated).toBe(0);
		expect(outOfOrder).toBe(0);
		// Emitted completions that the service no longer lists are earlier completions of tasks
		// re-completed since (each re-completion is its own event).
		const liveById = new Map(live.map((x) => [x.id, x]));
		const superseded = emitted.filter((x) => !live.some((y) => key(y) === key(x)));
		for (const x of superseded) {
			const now = liveById.get(x.id);
			expect(now).toBeDefined();
			expect(Date.parse(String(now?.completed_at))).toBeGreaterThan(
				Date.parse(String(x.completed_at)),
			);
		}
		// The paging started small and went on with large pages, each starting one item early.
		expect(requests[0].query).toEqual({ limit: '20' });
		expect(requests[1].query).toEqual({ offset: '19', limit: '500' });
	});
});

describe("n8n's poll budget", () => {
	it('a backlog one poll cannot read within the budget: each poll emits the oldest it read and the next goes on from there, each completion once, oldest first', async () => {
		const t = trigger();
		await t.poll();
		await currentEnv().client.createTasks(QUEUE, 2_500);
		await currentEnv().client.completeMany(QUEUE, 2_500, BY);
		const expected = (await currentEnv().client.tasks(QUEUE))
			.filter((x) => x.status === 'completed')
			.sort((a, b) =>
				a.completed_at === b.completed_at
					? a.id - b.id
					: Date.parse(String(a.completed_at)) - Date.parse(String(b.completed_at)),
			)
			.slice(-2_500)
			.map((x) => x.id);
		// every read takes 100 ms: 2,500 completions in pages of 20 and 500 from the top do not fit
		// in half of 0.4 s (80% of the budget), so the poll reads upward from its cursor, 1,000 a page
		await currentEnv().client.setLatency(100);
		t.budgetMs = 500;
		const polls: number[] = [];
		try {
			for (let poll = 0; poll < 30 && t.emitted.length < 2_500; poll++)
				polls.push((await t.poll())?.[0].length ?? 0);
		} finally {
			await currentEnv().client.clearFaults();
		}
		expect(polls.length).toBeGreaterThan(1); // it did not fit in one poll
		expect(polls.every((n) => n > 0)).toBe(true); // and every poll moved
		expect(t.emitted.map((x) => x.id)).toEqual(expected);
		expect(await t.poll()).toBeNull();
	});

	it('works without getPollBudgetMs (n8n 1.x)', async () => {
		const t = trigger();
		t.budgetMs = null;
		await t.poll();
		await currentEnv().client.createTasks(QUEUE, 2);
		await currentEnv().client.completeMany(QUEUE, 2, BY);
		expect((await t.poll())?.[0]).toHaveLength(2);
	});
});
