// The waiting guarantees under a backlog (guarantees.test.ts has the others): thousands of
// completions between a run's answers, a confirming read that is bounded, a check that always
// moves. Out of the fast tier (tens of thousands of completions: jest.config.js).
import type { IDataObject } from 'n8n-workflow';

import { callWaitingNode, queryOf } from '../../../helpers/waiting';
import { forgetAsAfterRestart } from '../../../../nodes/TaskQueue/runtime/processMemory';
import { timeKey } from '../../../../nodes/TaskQueue/reader/completions';
import {
	complete,
	createAndWait,
	env,
	QUEUE,
	reads,
	resumedIds,
	trigger,
	until,
	useGuaranteesEnv,
	waiting,
} from './guaranteesEnv';

useGuaranteesEnv();

describe('3. a busy queue does not stop a batch run from resuming', () => {
	test("3,000 completions of other work between a run's answers: it resumes, reading pages of 1,000 down to where it read before", async () => {
		await env.client.createTasks(QUEUE, 3000); // other work, older: completed below before the run's
		const { executionId, tasks } = await createAndWait();
		await env.client.clearRequests();
		await complete(tasks[0].id);
		await until('the first forward', () => waiting.calls.length === 1);
		expect(await reads()).toBe(1);
		await env.client.setWebhook(QUEUE, ''); // the other work's deliveries are not what is measured
		await env.client.completeMany(QUEUE, 3000, { by: 'bob@example.com' });
		await trigger.activate();
		await env.client.clearRequests();
		await complete(tasks[1].id);
		await until('the resume', () => waiting.resumed.has(executionId));
		expect(resumedIds(executionId)).toEqual([tasks[0].id, tasks[1].id]);
		// down to where the first read began (and 5 s more): 102, then pages of 1,000
		expect(await reads()).toBeLessThanOrEqual(5);
	});

	test('a call in a new n8n process (nothing known yet) still finds an answer 3,000 completions deep', async () => {
		await env.client.createTasks(QUEUE, 3000);
		const { run, tasks } = await createAndWait({}, [{ message: 'only' }]);
		await env.client.setWebhook(QUEUE, '');
		await complete(tasks[0].id);
		await env.client.completeMany(QUEUE, 3000, { by: 'bob@example.com' });
		const call = await callWaitingNode(run, queryOf(String(tasks[0].data.resume_url)), {});
		expect(call.result.workflowData?.[0].map((i) => i.json.id)).toEqual([tasks[0].id]);
	});
});

describe('3b. a confirming read is bounded', () => {
	test("25,000 completions above a run's tasks, more than a process indexes: a confirming read stops after 21 pages from the top and one from the run's tasks' creation upward, and the run keeps waiting", async () => {
		forgetAsAfterRestart();
		await env.client.createTasks(QUEUE, 25_000); // other work, completed after the run's task was created
		const { run, tasks } = await createAndWait({}, [{ message: 'only' }]);
		await env.client.setWebhook(QUEUE, '');
		await env.client.completeMany(QUEUE, 25_000, { by: 'bob@example.com' });
		await env.client.clearRequests();
		const call = await callWaitingNode(run, queryOf(String(tasks[0].data.resume_url)), {
			tasks: [{ id: tasks[0].id }],
		});
		expect(call.result.workflowData).toBeUndefined();
		expect(call.response.statusCode).toBe(202);
		// the one reader (reader/reader.ts): 21 pages from the top, then the place of the run's
		// tasks' creation (a binary search of one-task reads over 50,001 tasks: 15) and one page above it
		const queries = (await env.client.requests())
			.filter((r) => r.path.endsWith('/tasks/completed'))
			.map((r) => r.query as Record<string, string>);
		expect(queries).toHaveLength(37);
		// pages overlap by one task (reader/pages.ts)
		expect(queries.slice(0, 21).map((q) => [q.offset ?? '0', q.limit])).toEqual([
			['0', '101'],
			...Array.from({ length: 20 }, (_, i) => [String(100 + i * 999), '1000']),
		]);
		expect(queries.slice(21, 36).every((q) => q.limit === '1')).toBe(true);
		expect(Number(queries[36].limit)).toBeLessThanOrEqual(1000);
	}, 120_000);

	test("while the confirming read works through a run's backlog, page by page, another run's answer at the top is found at its first call (CI35: a further task's answer was not, and went out as an ordinary completion)", async () => {
		forgetAsAfterRestart();
		await env.client.createTasks(QUEUE, 25_000);
		const old = await createAndWait({}, [{ message: 'under the backlog' }]);
		await env.client.setWebhook(QUEUE, '');
		await env.client.completeMany(QUEUE, 25_000, { by: 'bob@example.com' });
		const first = await callWaitingNode(old.run, queryOf(String(old.tasks[0].data.resume_url)), {
			tasks: [{ id: old.tasks[0].id }],
		});
		expect(first.response.statusCode).toBe(202);
		await trigger.activate(); // the route back again, for the next run to start
		const fresh = await createAndWait({}, [{ message: 'answered now' }]);
		await env.client.setWebhook(QUEUE, '');
		await complete(fresh.tasks[0].id);
		await env.client.clearRequests();
		const call = await callWaitingNode(fresh.run, queryOf(String(fresh.tasks[0].data.resume_url)), {
			tasks: [{ id: fresh.tasks[0].id }],
		});
		expect(call.result.workflowData?.[0].map((i) => i.json.id)).toEqual([fresh.tasks[0].id]);
		// the newest page first, sized to reach the floor of the index's window (the run's item, 100,
		// and the completions the window holds: at most 500, how many depends on the milliseconds the
		// 25,000 share); then the backlog read's place, found again one lower (a completion came on
		// top since), and its next page upward
		const queries = (await env.client.requests())
			.filter((r) => r.path.endsWith('/tasks/completed'))
			.map((r) => r.query as Record<string, string>);
		const [newest, ...rest] = queries;
		expect(newest.offset).toBeUndefined();
		expect(Number(newest.limit)).toBeGreaterThanOrEqual(101);
		expect(Number(newest.limit)).toBeLessThanOrEqual(601);
		expect(rest).toEqual([
			{ limit: '1' },
			{ limit: '2', offset: '24001' },
			{ limit: '1' },
			{ limit: '1000', offset: '23003' },
		]);
	}, 120_000);

	test("the run's lost answer under 25,000 completions shares its millisecond with 30 later ones: the check's call is confirmed below the index, and the run resumes", async () => {
		forgetAsAfterRestart();
		const { executionId, tasks } = await createAndWait({}, [{ message: 'only' }]);
		await env.client.createTasks(QUEUE, 25_000);
		await complete(tasks[0].id);
		await env.client.completeMany(QUEUE, 25_000, { by: 'bob@example.com' });
		// the service lists by microsecond, the check and the run compare milliseconds (a delivery's
		// precision): 30 completions right after the answer, within its millisecond, come before it
		const state = await env.client.state();
		const byCompletion = (state.tasks ?? [])
			.filter((t) => t.queueId === QUEUE && t.completedAt)
			.sort((a, b) => String(a.completedAt).localeCompare(String(b.completedAt)));
		const answer = byCompletion.findIndex((t) => t.id === tasks[0].id);
		const millisecond = timeKey(String(byCompletion[answer].completedAt));
		byCompletion.slice(answer, answer + 31).forEach((t, i) => {
			t.completedAt = `${millisecond}${String(100 + i).padStart(3, '0')}Z`;
		});
		await env.client.reset(state);
		await env.client.setWebhook(QUEUE, '');
		expect(await trigger.reconcile()).toBeNull();
		expect(resumedIds(executionId)).toEqual([tasks[0].id]);
	}, 120_000);

	test("the run's answer named 25,000 completions down and 12,000 up, on a service too slow to find it within the call's 30 s: the run answers 503 (the caller calls again, nothing is settled) and the next call resumes it", async () => {
		forgetAsAfterRestart();
		const { run, tasks } = await createAndWait({}, [{ message: 'only' }]);
		await env.client.createTasks(QUEUE, 37_000);
		await env.client.setWebhook(QUEUE, '');
		await complete(tasks[0].id);
		await env.client.completeMany(QUEUE, 37_000, { by: 'bob@example.com' });
		// the answer moved among them, 12,000 up: neither the read from the top nor its page from the
		// run's tasks' creation upward reaches it
		const state = await env.client.state();
		const byCompletion = (state.tasks ?? [])
			.filter((t) => t.queueId === QUEUE && t.completedAt)
			.sort((a, b) => String(a.completedAt).localeCompare(String(b.completedAt)));
		const answer = byCompletion.find((t) => t.id === tasks[0].id);
		if (!answer) throw new Error('the answer is not in the sandbox state');
		answer.completedAt = byCompletion[12_000].completedAt;
		await env.client.reset(state);
		await env.client.setWebhook(QUEUE, '');
		const completed_at = String(answer.completedAt);
		const call = async () =>
			await callWaitingNode(run, queryOf(String(tasks[0].data.resume_url)), {
				tasks: [{ id: tasks[0].id, completed_at }],
			});
		// the confirming read's 38 requests answer at once (21 pages from the top, the place of the
		// run's tasks' creation among 37,001: 16 one-task reads, one page above it); the lookup's
		// first read takes 31 s
		await env.client.setFaults([
			{ route: 'completed', kind: 'slow', delayMs: 31_000, after: 38, count: 1 },
		]);
		const slow = await call();
		expect(slow.result.workflowData).toBeUndefined();
		expect(slow.response.statusCode).toBe(503);
		expect(slow.response.body).toMatchObject({
			message: 'Could not confirm the completion with the service; still waiting',
		});
		await env.client.clearFaults();
		const again = await call();
		expect(again.result.workflowData?.[0].map((i) => i.json.id)).toEqual([tasks[0].id]);
	}, 120_000);
});

describe('3c. a backlog does not stall the check', () => {
	/** A round of 4 s whose first read of the completed list takes `delayMs`: the read from the top stops short. */
	async function slowRound(delayMs = 2_100) {
		trigger.pollBudgetMs = 5_000;
		await env.client.setFaults([{ route: 'completed', kind: 'slow', delayMs, count: 1 }]);
		try {
			return await trigger.reconcile();
		} finally {
			await env.client.clearFaults();
		}
	}

	test("25,000 completions after the run's lost answer, more than a round reads from the top: the check reads them oldest first and resumes the run, round after round", async () => {
		forgetAsAfterRestart(); // the sandbox hands out the earlier tests' task ids again
		const { executionId, tasks } = await createAndWait({}, [{ message: 'only' }]);
		await env.client.createTasks(QUEUE, 25_000);
		await env.client.setWebhook(QUEUE, ''); // every delivery from here on is lost
		await complete(tasks[0].id);
		await env.client.completeMany(QUEUE, 25_000, { by: 'bob@example.com' });
		// one round on an idle machine; a busy one needs more (the earlier tests' completions of the
		// last 24 hours come first), each going on from where the last stopped
		let rounds = 0;
		while (!waiting.resumed.has(executionId) && rounds < 40) {
			expect(await slowRound()).toBeNull();
			rounds++;
		}
		expect(resumedIds(executionId)).toEqual([tasks[0].id]);
		expect(trigger.executions).toBe(0);
	}, 300_000);

	test("a run's answer lost while the check crawls a day's backlog (a route back published a second before the run, on a slow service): the next round passes it on from the newest page, before its backlog read reaches it (issue 59: 166-227 s on the real server)", async () => {
		forgetAsAfterRestart();
		await env.client.createTasks(QUEUE, 25_000);
		await env.client.setWebhook(QUEUE, '');
		await env.client.completeMany(QUEUE, 25_000, { by: 'bob@example.com' });
		// the route back published now: its first round looks a day back
		await trigger.activate();
		trigger.pollBudgetMs = 5_000;
		// every delivery lost; every read 300 ms: a round's read from the top stops short, and its
		// backlog read (pages of 1,000, oldest first) needs several rounds
		const round = async () => {
			await env.client.setFaults({ rules: [{ webhook: 'drop' }], latencyMs: 300 });
			return await trigger.reconcile();
		};
		const checkAt = () => String((trigger.state().lostCompletionCheck as IDataObject).at);
		try {
			expect(await round()).toBeNull();
			const crawling = checkAt();
			const { executionId, tasks } = await createAndWait({}, [{ message: 'only' }]);
			await complete(tasks[0].id);
			const answer = (await env.client.tasks(QUEUE)).find((t) => t.id === tasks[0].id);
			const answeredAt = timeKey(String(answer?.completed_at));
			expect(crawling < answeredAt).toBe(true);
			expect(waiting.resumed.has(executionId)).toBe(false);
			expect(await round()).toBeNull();
			expect(resumedIds(executionId)).toEqual([tasks[0].id]);
			// found on the newest page: the check's backlog read is still below the answer
			expect(checkAt() < answeredAt).toBe(true);
			expect(trigger.executions).toBe(0);
		} finally {
			await env.client.clearFaults();
		}
	}, 300_000);

	test('a backlog a round cannot finish: each round goes on from where the last stopped, up to the newest completion', async () => {
		await env.client.createTasks(QUEUE, 25_000);
		await env.client.setWebhook(QUEUE, '');
		await env.client.completeMany(QUEUE, 25_000, { by: 'bob@example.com' });
		// by instant, not by string: "…:22Z" (a whole second) sorts after "…:22.022439Z" as text
		const newest = (await env.client.tasks(QUEUE))
			.map((t) => timeKey(String(t.completed_at ?? '')))
			.sort()
			.pop() as string;
		// each round of 4 s waits 2.5 s for its first read; every read takes 60 ms more: too little
		// for 26 pages from the top
		await env.client.setLatency(60);
		const points: string[] = [];
		try {
			for (let round = 0; round < 30; round++) {
				await slowRound(2_500);
				points.push(String((trigger.state().lostCompletionCheck as IDataObject | undefined)?.at));
				if (points[points.length - 1] === newest) break;
			}
		} finally {
			await env.client.setLatency(0);
		}
		// the rounds go on from where the last stopped, never back
		expect([...points].sort()).toEqual(points);
		expect(points[points.length - 1]).toBe(newest);
	}, 300_000);
});

describe('3d. a late commit below what the index has read', () => {
	/** A two-item run and a call to it naming its second task (as its delivery would). */
	async function twoItemRun() {
		forgetAsAfterRestart();
		const { run, tasks } = await createAndWait();
		await env.client.setWebhook(QUEUE, '');
		const address = queryOf(String(tasks[1].data.resume_url));
		const call = async () => await callWaitingNode(run, address, { tasks: [{ id: tasks[1].id }] });
		return { tasks, call };
	}

	/** The run's first answer dated t0 + 50, committed late (held); 150 completions above it, visible: more than a first page of the run's items + 100. */
	async function lateAnswerUnder150(taskId: number) {
		const t0 = Date.now();
		const at = (ms: number) => new Date(t0 + ms).toISOString();
		await env.client.complete(QUEUE, taskId, {
			by: 'alice@example.com',
			data: { decision: 'approve' },
			completedAt: at(50),
			commitAfterMs: -1,
		});
		const { ids } = await env.client.createTasks(QUEUE, 150);
		for (const [i, id] of ids.entries())
			await env.client.complete(QUEUE, id, { by: 'bob@example.com', completedAt: at(100 + i) });
		await new Promise((resolve) => setTimeout(resolve, 300));
	}

	/** The late answer becomes visible (its delivery went to another process: no claim here), the second is answered: the next call resumes the run with both. */
	async function resumesWithBoth(run: Awaited<ReturnType<typeof twoItemRun>>) {
		expect(await env.client.commitHeld()).toBe(1);
		await complete(run.tasks[1].id);
		const resumed = await run.call();
		expect(resumed.result.workflowData?.[0].map((i) => i.json.id)).toEqual([
			run.tasks[0].id,
			run.tasks[1].id,
		]);
	}

	test("a run's answer committed late, inside the index's window, its delivery received by another n8n process: the next call, naming the run's other task, finds it and resumes the run (CI38, queue mode)", async () => {
		const run = await twoItemRun();
		expect((await run.call()).response.statusCode).toBe(202); // a first read
		await lateAnswerUnder150(run.tasks[0].id);
		// a second read, past the 150: they are in the window now
		expect((await run.call()).response.statusCode).toBe(202);
		await resumesWithBoth(run);
	}, 60_000);

	test("the same with the answer committed late below what the index's first read listed (each n8n process's index starts at its first call): the next call finds it (CI38, queue mode)", async () => {
		const run = await twoItemRun();
		await lateAnswerUnder150(run.tasks[0].id);
		// this process's first read: down to the run's tasks' creation, past the 150
		expect((await run.call()).response.statusCode).toBe(202);
		await resumesWithBoth(run);
	}, 60_000);
});
