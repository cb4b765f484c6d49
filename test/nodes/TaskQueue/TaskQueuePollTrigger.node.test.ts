// The Task Queue Poll Trigger through n8n-core's PollContext against the sandbox over HTTP:
// cursor placement, idle cost, order, manual mode (the 2,500-completion backlogs, one read while
// completions keep arriving, one under n8n 2.x's poll budget: TaskQueuePollTrigger.volume.test.ts).
import { LATE_COMMIT_WINDOW_MS } from '../../../nodes/TaskQueue/reader/cursor';

import { BY, QUEUE, usePollTriggerEnv } from './pollTriggerEnv';

const { env: currentEnv, trigger, completedRequests, completedNewestFirst } = usePollTriggerEnv();

describe('first activation', () => {
	it('starts from "now": the first poll emits nothing and places the cursor at the newest completion, in one request', async () => {
		const t = trigger();
		const [newest] = await completedNewestFirst();
		await currentEnv().client.clearRequests();
		expect(await t.poll()).toBeNull();
		expect(t.state()).toEqual({
			queueId: QUEUE,
			cursor: { at: expect.any(String), ids: [newest.id] },
		});
		expect(await completedRequests()).toEqual([
			{
				method: 'GET',
				path: '/orgs/1/queues/101/tasks/completed',
				query: { limit: '20' },
				status: 200,
			},
		]);
	});

	it('an idle poll costs exactly one request', async () => {
		const t = trigger();
		await t.poll();
		for (let i = 0; i < 3; i++) {
			await currentEnv().client.clearRequests();
			expect(await t.poll()).toBeNull();
			expect(await currentEnv().client.requests()).toHaveLength(1);
		}
	});

	it('then emits each new completion once, oldest first, as the service sends it', async () => {
		const t = trigger();
		await t.poll();
		const { ids } = await currentEnv().client.createTasks(QUEUE, 5);
		const done = [];
		for (const id of ids) done.push(await currentEnv().client.complete(QUEUE, id, BY));
		await currentEnv().client.clearRequests();
		const result = await t.poll();
		expect(result).toEqual([done.map((task) => ({ json: task }))]);
		expect(await currentEnv().client.requests()).toHaveLength(1);
		expect(await t.poll()).toBeNull();
	});

	it('with Include Existing, the first poll emits every completion so far, oldest first', async () => {
		const t = trigger({ includeExisting: true });
		const existing = await completedNewestFirst();
		expect(existing).toHaveLength(3);
		const result = await t.poll();
		expect(result?.[0].map((i) => i.json.id)).toEqual([...existing].reverse().map((x) => x.id));
		expect(await t.poll()).toBeNull();
	});

	it('Output Data Only emits the data object', async () => {
		const t = trigger({ dataOnly: true });
		await t.poll();
		const { ids } = await currentEnv().client.createTasks(QUEUE, 1);
		const task = await currentEnv().client.complete(QUEUE, ids[0], BY);
		expect(await t.poll()).toEqual([[{ json: task.data }]]);
	});

	it('a forced re-completion is a new event', async () => {
		const t = trigger();
		await t.poll();
		const [older] = await completedNewestFirst();
		const again = await currentEnv().client.recomplete(older.id as number);
		expect(await t.poll()).toEqual([[{ json: again }]]);
	});
});

describe('manual mode', () => {
	it('returns the latest completed task, one item, without touching the cursor', async () => {
		const t = trigger();
		const [newest] = await completedNewestFirst();
		await currentEnv().client.clearRequests();
		const result = await t.poll('manual');
		expect(result).toEqual([[{ json: newest }]]);
		expect(t.db).toEqual({});
		expect(await completedRequests()).toEqual([
			{
				method: 'GET',
				path: '/orgs/1/queues/101/tasks/completed',
				query: { limit: '1' },
				status: 200,
			},
		]);
	});

	it('says so when the queue has no completed task yet', async () => {
		const t = trigger({}, 102);
		const error = await t.poll('manual').catch((e: Error) => e);
		expect((error as Error).message).toBe('No task of queue 102 has been completed yet');
	});
});

describe('a broken or hostile service (issue 59, security review L4 and L5)', () => {
	it('a completion dated in 2099 is held back, never carries the cursor there: every later completion is emitted once', async () => {
		const t = trigger();
		await t.poll();
		const { ids } = await currentEnv().client.createTasks(QUEUE, 4);
		await currentEnv().client.complete(QUEUE, ids[0], {
			...BY,
			completedAt: '2099-01-01T00:00:00Z',
		});
		expect((await completedNewestFirst())[0].id).toBe(ids[0]); // listed first, as a real list orders it
		await currentEnv().client.complete(QUEUE, ids[1], BY);
		expect((await t.poll())?.[0].map((item) => item.json.id)).toEqual([ids[1]]);
		expect(String((t.state().cursor as { at: string }).at) < '2099').toBe(true);
		await currentEnv().client.complete(QUEUE, ids[2], BY);
		await currentEnv().client.complete(QUEUE, ids[3], BY);
		expect((await t.poll())?.[0].map((item) => item.json.id)).toEqual([ids[2], ids[3]]);
		expect(await t.poll()).toBeNull();
	});

	it('a trigger activated after it: "now" is the newest completion that is due, not 2099', async () => {
		const { ids } = await currentEnv().client.createTasks(QUEUE, 2);
		await currentEnv().client.complete(QUEUE, ids[0], {
			...BY,
			completedAt: '2099-01-01T00:00:00Z',
		});
		const t = trigger();
		expect(await t.poll()).toBeNull();
		await currentEnv().client.complete(QUEUE, ids[1], BY);
		expect((await t.poll())?.[0].map((item) => item.json.id)).toEqual([ids[1]]);
	});

	it('every page longer than asked (each task listed twice): 60 completions, each emitted once, oldest first', async () => {
		const t = trigger();
		t.budgetMs = null;
		await t.poll();
		await currentEnv().client.createTasks(QUEUE, 60);
		const { ids } = await currentEnv().client.completeMany(QUEUE, 60, BY);
		await currentEnv().client.setFaults([{ route: 'completed', kind: 'longPage' }]);
		try {
			while ((await t.poll()) !== null);
		} finally {
			await currentEnv().client.clearFaults();
		}
		expect(t.emitted.map((x) => x.id)).toEqual(ids);
	});
});

describe('late commits (issue 59: the cursor keeps a window below it)', () => {
	test('a completion committed after 30 later ones were read is emitted by the first poll 10 s after them, once', async () => {
		const t = trigger();
		await t.poll();
		const { ids } = await currentEnv().client.createTasks(QUEUE, 31);
		// the first completion (a second earlier: two completions of one millisecond share an
		// instant, which the cursor's ids already cover) commits after the others were read
		await currentEnv().client.complete(QUEUE, ids[0], {
			...BY,
			completedAt: new Date(Date.now() - 1000).toISOString(),
			commitAfterMs: -1,
		});
		for (const id of ids.slice(1)) await currentEnv().client.complete(QUEUE, id, BY);
		expect((await t.poll())?.[0].map((item) => item.json.id)).toEqual(ids.slice(1));
		expect(await currentEnv().client.commitHeld()).toBe(1);
		// a poll reads below its cursor (more than one page) once 10 s have passed on this n8n's
		// clock since it saw the newest completion: every one below it was visible by then
		const now = Date.now();
		const clock = jest.spyOn(Date, 'now').mockImplementation(() => now + LATE_COMMIT_WINDOW_MS);
		try {
			while ((await t.poll()) !== null);
		} finally {
			clock.mockRestore();
		}
		expect(t.emitted.map((x) => x.id).sort()).toEqual([...ids].sort());
	});
});
