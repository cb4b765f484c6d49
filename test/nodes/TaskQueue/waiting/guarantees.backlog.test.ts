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
	test("25,000 completions above a run's tasks, more than a process indexes: a confirming read stops after 21 pages, and the run keeps waiting", async () => {
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
		expect(await reads()).toBe(21);
	}, 120_000);

	test("after a confirming read stopped in the backlog above an old run's tasks, another run's answer at the top is found at its first call, with one read (CI35, with the index as a consumer of the one reader: a further task's answer was not, and went out as an ordinary completion)", async () => {
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
		const queries = (await env.client.requests())
			.filter((r) => r.path.endsWith('/tasks/completed'))
			.map((r) => r.query as Record<string, string>);
		// the newest page (a full one after a read of several pages)
		expect(queries).toEqual([{ limit: '1000' }]);
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

	test("the run's answer named 25,000 completions down, on a service too slow to find it within the call's 30 s: the run answers 503 (the caller calls again, nothing is settled) and the next call resumes it", async () => {
		forgetAsAfterRestart();
		const { run, tasks } = await createAndWait({}, [{ message: 'only' }]);
		await env.client.createTasks(QUEUE, 25_000);
		await env.client.setWebhook(QUEUE, '');
		const { completed_at } = await complete(tasks[0].id);
		await env.client.completeMany(QUEUE, 25_000, { by: 'bob@example.com' });
		const call = async () =>
			await callWaitingNode(run, queryOf(String(tasks[0].data.resume_url)), {
				tasks: [{ id: tasks[0].id, completed_at }],
			});
		// the 21 pages of the confirming read answer at once; the lookup's first read takes 31 s
		await env.client.setFaults([
			{ route: 'completed', kind: 'slow', delayMs: 31_000, after: 21, count: 1 },
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
