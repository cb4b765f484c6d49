// Escalate at scale (escalation.test.ts has the rest): 100 items among 3,000 other completions.
// Out of the fast tier (jest.config.js).
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import {
	BOB,
	REFUNDS,
	SUPERVISOR,
	SUPERVISORS,
	answer,
	call,
	env,
	escalating,
	levelTimePasses,
	run,
	tasksOn,
	useEscalationEnv,
	wake,
} from './escalationEnv';

useEscalationEnv();

describe('Escalate at scale', () => {
	test('100 items escalated in one run among 3,000 other completions: one task per item at the level, each item paired and decided at level 1, one resume, at most 2 reads of the completed list per completion (one of each of its queues) and 2 for the wake', async () => {
		const ITEMS = 100;
		const OTHERS = 3_000;
		const input = Array.from({ length: ITEMS }, (_, i) => ({ message: `Refund ${i}`, total: i }));
		await env.client.createTasks(REFUNDS, OTHERS / 2);
		await env.client.createTasks(SUPERVISORS, OTHERS / 2);
		const waiting = await run(escalating({}), input);
		expect(waiting.run.status).toBe('waiting');
		await levelTimePasses();
		await env.client.clearRequests();
		await wake(waiting);
		const completedReads = async () =>
			(await env.requests()).filter((r) => r.path.endsWith('/tasks/completed')).length;
		// the wake (the level's time, no completion): one read of each of the run's two queues
		const wakeReads = await completedReads();
		expect(wakeReads).toBeLessThanOrEqual(2);
		await env.client.clearRequests();
		const supervisorTasks = (await tasksOn(SUPERVISORS)).filter((t) => t.data.resume_url);
		expect(supervisorTasks).toHaveLength(ITEMS);
		let resumed: INodeExecutionData[] | undefined;
		let resumes = 0;
		for (const [i, task] of supervisorTasks.entries()) {
			await env.client.completeMany(i % 2 ? REFUNDS : SUPERVISORS, OTHERS / ITEMS, { by: BOB });
			await answer(SUPERVISORS, task.id, SUPERVISOR, 'approve');
			const heard = await call(waiting, SUPERVISORS, task.id);
			if (heard.result.workflowData) {
				resumes++;
				[resumed] = heard.result.workflowData;
			}
		}
		expect(resumes).toBe(1);
		expect(resumed).toHaveLength(ITEMS);
		expect(
			resumed!.map((item) => [
				item.pairedItem,
				item.json.approved,
				(item.json.escalation as IDataObject).decidedAtLevel,
			]),
		).toEqual(input.map((_, i) => [{ item: i }, true, 1]));
		const reads = await completedReads();
		console.log(
			`escalation reads: ${reads} reads for ${ITEMS} completions (${reads / ITEMS} each), and ${wakeReads} for the wake`,
		);
		// each completion's call reads each of the run's two queues once, whatever lies under them
		expect(reads).toBeLessThanOrEqual(2 * ITEMS);
	}, 120_000);
});
