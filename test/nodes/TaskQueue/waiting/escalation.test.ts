// Escalate (issue 49), run through n8n-core's contexts against the sandbox over HTTP: the level's
// tasks created at its time, on its queue, once per item and level; the first counted answer at a
// level decides; first wins; copies decide nothing; the output; what is refused before any task.
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';
import { sleep } from 'n8n-workflow';

import { callWaitingNode, queryOf } from '../../../helpers/waiting';
import { forgetAsAfterRestart } from '../../../../nodes/TaskQueue/runtime/processMemory';
import { sign } from '../../../../nodes/TaskQueue/helpers/signing';
import { slotOf } from '../../../../nodes/TaskQueue/waiting/escalation/levels';
import { addressTag } from '../../../../nodes/TaskQueue/waiting/messages';
import { markedAddress } from '../../../../nodes/TaskQueue/waiting/people/extraTasks';
import { locator } from '../env';
import {
	AFTER_MINUTES,
	ANN,
	BOB,
	FOUR_EYES,
	REFUND,
	REFUNDS,
	REQUESTER,
	SUPERVISOR,
	SUPERVISORS,
	TRIGGER_OF_THIS_N8N,
	answer,
	call,
	env,
	escalating,
	level,
	levelTimePasses,
	run,
	tasksOn,
	useEscalationEnv,
	wake,
} from './escalationEnv';

useEscalationEnv();

describe('Escalate', () => {
	test('four eyes with one approval and nobody else: at the level time a supervisor task appears with the item and its address for Supervisors; the supervisor approves; the run goes on approved with both answers and escalation level 1', async () => {
		// 6 s: the answer below is called before the level's time even on a loaded machine (1.2 s was
		// not, once, beside CI's suites)
		const after = 0.1;
		const started = Date.now();
		const waiting = await run(escalating(FOUR_EYES, [level(SUPERVISORS, after)]));
		expect(waiting.error).toBeUndefined();
		expect(waiting.run.status).toBe('waiting');
		const [first, second] = await tasksOn(REFUNDS);
		await answer(REFUNDS, first.id, ANN, 'approve');
		// before the level's time: still waiting, and the answer says when to wake the run
		const early = await call(waiting, REFUNDS, first.id);
		expect(early.response).toMatchObject({ statusCode: 202, body: { waiting: true } });
		const wakeAt = (early.response.body as IDataObject).deadline as number;
		expect(wakeAt).toBeGreaterThanOrEqual(started + after * 60_000);
		expect(wakeAt).toBeLessThan(Date.now() + after * 60_000);
		expect(await tasksOn(SUPERVISORS)).toEqual([]);

		await levelTimePasses(after);
		const woken = await wake(waiting);
		expect(woken.result.workflowData).toBeUndefined();
		// nothing more to wake the run for: no deadline, no later level
		expect((woken.response.body as IDataObject).deadline).toBeUndefined();
		const [supervisorTask] = await tasksOn(SUPERVISORS);
		expect(supervisorTask.data).toMatchObject({
			customer_message: 'Refund 900 EUR',
			order_total: 900,
		});
		const address = String(supervisorTask.data.resume_url);
		// the item's address for the Supervisors queue, marked for level 1's first slot
		expect(queryOf(address)).toMatchObject({ tq: '0-1-1', q: String(SUPERVISORS) });
		expect(address).toMatch(/#x=101\.[a-f0-9]{32}$/);
		expect(queryOf(address).signature).not.toBe(queryOf(String(first.data.resume_url)).signature);

		await answer(SUPERVISORS, supervisorTask.id, SUPERVISOR, 'approve');
		const [items] = (await call(waiting, SUPERVISORS, supervisorTask.id)).result.workflowData ?? [
			[],
		];
		expect(items).toHaveLength(1);
		const item = items[0] as INodeExecutionData;
		expect(item.pairedItem).toEqual({ item: 0 });
		expect(item.json).toMatchObject({
			id: supervisorTask.id,
			approved: true,
			tasks: [first.id, second.id, supervisorTask.id],
			escalation: {
				level: 1,
				queueId: SUPERVISORS,
				queue: 'Supervisors',
				askedAt: new Date(wakeAt).toISOString(),
				decidedAtLevel: 1,
				decidedBy: SUPERVISOR,
			},
			people: { decision: 'approved', decidedBy: supervisorTask.id, counted: 2 },
		});
		const answers = (item.json.people as IDataObject).answers as IDataObject[];
		expect(answers.map((a) => [a.taskId, a.by, a.level, a.queueId, a.counted])).toEqual([
			[first.id, ANN, 0, REFUNDS, true],
			[supervisorTask.id, SUPERVISOR, 1, SUPERVISORS, true],
		]);
		expect(answers[1].queue).toBe('Supervisors');
	});

	test('nobody answers at all, one person per item: the wake creates the supervisor task; the supervisor rejects; the run goes on rejected at level 1', async () => {
		const waiting = await run(escalating({}));
		expect(waiting.run.status).toBe('waiting');
		await levelTimePasses();
		await wake(waiting);
		const [supervisorTask] = await tasksOn(SUPERVISORS);
		await answer(SUPERVISORS, supervisorTask.id, SUPERVISOR, 'reject');
		const [items] = (await call(waiting, SUPERVISORS, supervisorTask.id)).result.workflowData ?? [
			[],
		];
		expect(items[0].json).toMatchObject({
			approved: false,
			escalation: { level: 1, decidedAtLevel: 1, decidedBy: SUPERVISOR },
			people: { rule: 'firstAnswer', decision: 'rejected' },
		});
	});

	test('first wins: a rejection at level 0 after the supervisor task was created decides; the supervisor approving later changes nothing', async () => {
		const waiting = await run(escalating(FOUR_EYES));
		const [first, second] = await tasksOn(REFUNDS);
		await answer(REFUNDS, first.id, ANN, 'approve');
		await levelTimePasses();
		await wake(waiting);
		const [supervisorTask] = await tasksOn(SUPERVISORS);
		await answer(REFUNDS, second.id, BOB, 'reject');
		await sleep(1_100); // a later completion time, in whole seconds too
		await answer(SUPERVISORS, supervisorTask.id, SUPERVISOR, 'approve');
		// whichever call arrives first, the decision is by completion time: Bob's rejection
		for (const [queue, id] of [
			[SUPERVISORS, supervisorTask.id],
			[REFUNDS, second.id],
		]) {
			const [items] = (await call(waiting, queue, id)).result.workflowData ?? [[]];
			expect(items[0].json).toMatchObject({
				approved: false,
				escalation: { level: 1, decidedAtLevel: 0, decidedBy: BOB },
				people: { decision: 'rejected', decidedBy: second.id },
			});
			const answers = ((items[0].json.people as IDataObject).answers as IDataObject[]).map((a) => [
				a.by,
				a.level,
				a.counted,
				a.reason,
			]);
			expect(answers).toEqual([
				[ANN, 0, true, undefined],
				[BOB, 0, true, undefined],
				[SUPERVISOR, 1, false, 'afterDecision'],
			]);
		}
	});

	test("a task made by someone else carrying the supervisor task's address and mark, with other content, decides nothing; neither does the requester at the supervisors' level", async () => {
		const waiting = await run(escalating(FOUR_EYES));
		await levelTimePasses();
		await wake(waiting);
		const [supervisorTask] = await tasksOn(SUPERVISORS);
		const marked = String(supervisorTask.data.resume_url);
		const { ids: planted } = await env.client.createTasks(SUPERVISORS, [
			{ customer_message: 'Team lunch', order_total: 12, resume_url: marked },
			{ customer_message: 'Refund 900 EUR', order_total: 9000, resume_url: marked },
		]);
		await answer(SUPERVISORS, planted[0], BOB, 'approve');
		await answer(SUPERVISORS, planted[1], BOB, 'approve');
		for (const id of planted) {
			const heard = await call(waiting, SUPERVISORS, id);
			expect(heard.result.workflowData).toBeUndefined();
			expect(heard.response).toMatchObject({ statusCode: 200, body: { taken: [], others: [id] } });
		}
		// the requester answers the real supervisor task: kept, never counted; the item still waits
		await answer(SUPERVISORS, supervisorTask.id, REQUESTER, 'approve');
		const own = await call(waiting, SUPERVISORS, supervisorTask.id);
		expect(own.result.workflowData).toBeUndefined();
		expect(own.response).toMatchObject({ statusCode: 202, body: { completed: 0, of: 1 } });
	});

	test("an answer at a level that does not count asks the level again (issue 60): the requester, then Ann who approved at level 0, answer the supervisors' task; each time a new one is created, up to the level's people once more", async () => {
		const waiting = await run(escalating(FOUR_EYES));
		const [first] = await tasksOn(REFUNDS);
		await answer(REFUNDS, first.id, ANN, 'approve');
		await levelTimePasses();
		await wake(waiting);
		const [levelTask] = await tasksOn(SUPERVISORS);
		// the requester answers it: kept, never counted, and the level is asked again at once
		await answer(SUPERVISORS, levelTask.id, REQUESTER, 'approve');
		const heard = await call(waiting, SUPERVISORS, levelTask.id);
		expect(heard.result.workflowData).toBeUndefined();
		const again = (await tasksOn(SUPERVISORS)).filter((t) => t.id !== levelTask.id);
		expect(again).toHaveLength(1);
		expect(again[0].data).toMatchObject({ customer_message: REFUND.message, order_total: 900 });
		expect(String(again[0].data.resume_url)).toMatch(/#x=102\.[a-f0-9]{32}$/);
		// Ann answers the new one (she counted at level 0): not counted either; the level's one more
		// task is spent, so nothing more is asked, and the item waits for level 0's second person
		await answer(SUPERVISORS, again[0].id, ANN, 'approve');
		const annHeard = await call(waiting, SUPERVISORS, again[0].id);
		expect(annHeard.result.workflowData).toBeUndefined();
		expect(annHeard.response).toMatchObject({ statusCode: 202, body: { completed: 0, of: 1 } });
		expect(await tasksOn(SUPERVISORS)).toHaveLength(2);
		for (let calls = 0; calls < 5; calls++) await wake(waiting);
		expect(await tasksOn(SUPERVISORS)).toHaveLength(2);
	});

	test("the supervisor answers the task the level asked again after the requester's answer: it decides", async () => {
		const waiting = await run(escalating(FOUR_EYES));
		await levelTimePasses();
		await wake(waiting);
		const [levelTask] = await tasksOn(SUPERVISORS);
		await answer(SUPERVISORS, levelTask.id, REQUESTER, 'approve');
		await call(waiting, SUPERVISORS, levelTask.id);
		const [again] = (await tasksOn(SUPERVISORS)).filter((t) => t.id !== levelTask.id);
		await answer(SUPERVISORS, again.id, SUPERVISOR, 'reject');
		const [items] = (await call(waiting, SUPERVISORS, again.id)).result.workflowData ?? [[]];
		expect(items[0].json).toMatchObject({
			id: again.id,
			approved: false,
			escalation: { level: 1, decidedAtLevel: 1, decidedBy: SUPERVISOR },
			people: { decision: 'rejected', decidedBy: again.id },
		});
		const answers = (items[0].json.people as IDataObject).answers as IDataObject[];
		expect(answers.map((a) => [a.taskId, a.by, a.level, a.counted, a.reason])).toEqual([
			[levelTask.id, REQUESTER, 1, false, 'neverCount'],
			[again.id, SUPERVISOR, 1, true, undefined],
		]);
	});

	test("an exact copy of the level's task (its values, address and mark), made after it and approved by a colleague before the supervisor answers, counts nothing (issue 60 item 1): the run knows its level task by id; the real one decides", async () => {
		const waiting = await run(escalating(FOUR_EYES));
		const [first, second] = await tasksOn(REFUNDS);
		await levelTimePasses();
		await wake(waiting);
		const [real] = await tasksOn(SUPERVISORS);
		const {
			ids: [copy],
		} = await env.client.createTasks(SUPERVISORS, [real.data as IDataObject]);
		expect((await tasksOn(SUPERVISORS)).find((t) => t.id === copy)?.data).toEqual(real.data);
		await answer(SUPERVISORS, copy, ANN, 'approve');
		const heard = await call(waiting, SUPERVISORS, copy);
		expect(heard.result.workflowData).toBeUndefined();
		// not the run's: the trigger emits it as an ordinary completion
		expect(heard.response).toMatchObject({ statusCode: 200, body: { taken: [], others: [copy] } });
		expect((await wake(waiting)).result.workflowData).toBeUndefined();
		await answer(SUPERVISORS, real.id, SUPERVISOR, 'reject');
		const [items] = (await call(waiting, SUPERVISORS, real.id)).result.workflowData ?? [[]];
		expect(items[0].json).toMatchObject({
			id: real.id,
			approved: false,
			tasks: [first.id, second.id, real.id],
			escalation: { level: 1, decidedAtLevel: 1, decidedBy: SUPERVISOR },
			people: { decision: 'rejected', decidedBy: real.id },
		});
		const answers = (items[0].json.people as IDataObject).answers as IDataObject[];
		expect(answers.map((a) => [a.taskId, a.by, a.counted])).toEqual([[real.id, SUPERVISOR, true]]);
	});

	test("n8n restarts while the level's task is open (issue 60 item 1): the run's signed list of its own tasks, which the trigger keeps with its wake and hands back, makes it known by id again: an exact copy answered first counts nothing, and `tasks` lists the open level task when level 0 decides", async () => {
		const waiting = await run(escalating(FOUR_EYES));
		const [first, second] = await tasksOn(REFUNDS);
		await levelTimePasses();
		const woken = await wake(waiting);
		const [real] = await tasksOn(SUPERVISORS);
		expect((woken.response.body as IDataObject).own).toMatch(
			new RegExp(`^${real.id}\\.0\\.${slotOf(1, 1)}~[0-9a-f]{32}$`),
		);
		forgetAsAfterRestart();
		const {
			ids: [copy],
		} = await env.client.createTasks(SUPERVISORS, [real.data as IDataObject]);
		await answer(SUPERVISORS, copy, ANN, 'approve');
		const heard = await call(waiting, SUPERVISORS, copy);
		expect(heard.result.workflowData).toBeUndefined();
		expect(heard.response).toMatchObject({ statusCode: 200, body: { taken: [], others: [copy] } });
		await answer(REFUNDS, second.id, BOB, 'reject');
		const [items] = (await call(waiting, REFUNDS, second.id)).result.workflowData ?? [[]];
		expect(items[0].json).toMatchObject({
			approved: false,
			tasks: [first.id, second.id, real.id],
			escalation: { level: 1, decidedAtLevel: 0, decidedBy: BOB },
		});
		expect(await tasksOn(SUPERVISORS)).toHaveLength(2);
	});

	test("a list of own tasks the run did not sign (made with the API key) adds nothing (issue 60): after a restart it cannot keep the level from being asked, nor name a task as the run's", async () => {
		const waiting = await run(escalating(FOUR_EYES));
		const [first, second] = await tasksOn(REFUNDS);
		const {
			ids: [planted],
		} = await env.client.createTasks(SUPERVISORS, [{ message: 'planted' }]);
		const list = `${planted}.0.${slotOf(1, 1)}`;
		const forged = `${list}~${sign(env.sandbox.apiKey, 'own-tasks', [list], 32)}`;
		await levelTimePasses();
		forgetAsAfterRestart();
		const address = queryOf(String(first.data.resume_url));
		const heard = await callWaitingNode(waiting, address, { tasks: [], due: 0, own: forged });
		expect(heard.response.statusCode).toBe(202);
		const levelTasks = (await tasksOn(SUPERVISORS)).filter((t) => t.id !== planted);
		expect(levelTasks).toHaveLength(1);
		expect((heard.response.body as IDataObject).tasks).toEqual([
			first.id,
			second.id,
			levelTasks[0].id,
		]);
	});

	test('a level task made with the API key before the level is due decides nothing (security review M3): the key, one API user and one colleague cannot approve a four-eyes item an hour early', async () => {
		const waiting = await run(escalating(FOUR_EYES, [level(SUPERVISORS, 60)]));
		const planted = await plantLevelTask(env.sandbox.apiKey);
		await answer(SUPERVISORS, planted, SUPERVISOR, 'approve');
		// n8n refuses a call at the made-up address (its own signature), but the run reads the level's
		// queue at any call of its own: the check's wake, here
		const heard = await wake(waiting);
		expect(heard.result.workflowData).toBeUndefined();
		expect(heard.response).toMatchObject({ statusCode: 202, body: { completed: 0, of: 1 } });
	});

	test("a level task planted with a mark made with the API key or the Previous API Key, before the level's time and after it, approved by a colleague, counts nothing (security review M1, issue 60): marks are signed with the run's own secret; the real level task decides", async () => {
		const previousKey = 'tq_previous_key_the_attacker_kept';
		const waiting = await run(escalating(FOUR_EYES), [REFUND], { previousApiKey: previousKey });
		const [first, second] = await tasksOn(REFUNDS);
		const plantBoth = async () => [
			await plantLevelTask(env.sandbox.apiKey),
			await plantLevelTask(previousKey),
		];
		// before the level's time (within the 5 s the run allows its own creates: only the mark can tell)
		const planted = await plantBoth();
		for (const id of planted) await answer(SUPERVISORS, id, ANN, 'approve');
		await levelTimePasses();
		expect((await wake(waiting)).result.workflowData).toBeUndefined();
		// after it, beside the real level task
		const later = await plantBoth();
		for (const id of later) await answer(SUPERVISORS, id, ANN, 'approve');
		planted.push(...later);
		for (const id of planted) {
			const heard = await call(waiting, SUPERVISORS, id);
			expect(heard.result.workflowData).toBeUndefined();
			// not the run's: the trigger emits it as an ordinary completion
			expect(heard.response).toMatchObject({ statusCode: 200, body: { taken: [], others: [id] } });
		}
		const real = (await tasksOn(SUPERVISORS)).filter((t) => !planted.includes(t.id));
		expect(real).toHaveLength(1);
		await answer(SUPERVISORS, real[0].id, SUPERVISOR, 'approve');
		const [items] = (await call(waiting, SUPERVISORS, real[0].id)).result.workflowData ?? [[]];
		expect(items[0].json).toMatchObject({
			id: real[0].id,
			approved: true,
			tasks: [first.id, second.id, real[0].id],
			escalation: { level: 1, decidedAtLevel: 1, decidedBy: SUPERVISOR },
			people: { decision: 'approved', decidedBy: real[0].id },
		});
		const answers = (items[0].json.people as IDataObject).answers as IDataObject[];
		expect(answers.map((a) => [a.taskId, a.by, a.level, a.counted])).toEqual([
			[real[0].id, SUPERVISOR, 1, true],
		]);
	});

	test('timed out with a level due after the deadline (issue 60): no task of it is created, and escalation.level names the last level due before the deadline, not it', async () => {
		// levels at 1.2 s and 3.6 s from the start, the deadline at 2.4 s
		const limitWaitTime = {
			values: { limitType: 'afterTimeInterval', resumeAmount: 0.04, resumeUnit: 'minutes' },
		};
		const levels = [level(SUPERVISORS, 0.02), level(SUPERVISORS, 0.06)];
		const waiting = await run(escalating({ ...FOUR_EYES, limitWaitTime }, levels));
		expect(waiting.run.status).toBe('waiting');
		await levelTimePasses(0.02);
		expect((await wake(waiting)).result.workflowData).toBeUndefined();
		expect(await tasksOn(SUPERVISORS)).toHaveLength(1);
		// the next wake comes after both the deadline and the second level's time
		await levelTimePasses(0.06);
		const [items] = (await wake(waiting)).result.workflowData ?? [[]];
		expect(items).toHaveLength(1);
		expect(items[0].json).toMatchObject({
			approved: false,
			escalation: { level: 1, queueId: SUPERVISORS, decidedAtLevel: null },
			people: { decision: 'timedOut' },
		});
		expect(await tasksOn(SUPERVISORS)).toHaveLength(1);
	});

	test('timed out after a level whose time came before the deadline but no call came between them (issue 60): escalation.level names the level asked, not it; no task is created at or after the deadline', async () => {
		// levels at 1.2 s, 2.4 s and 3.6 s, the deadline at 3 s: the check's round after level 2's time
		// comes after the deadline
		const limitWaitTime = {
			values: { limitType: 'afterTimeInterval', resumeAmount: 0.05, resumeUnit: 'minutes' },
		};
		const levels = [level(SUPERVISORS, 0.02), level(SUPERVISORS, 0.04), level(SUPERVISORS, 0.06)];
		const waiting = await run(escalating({ ...FOUR_EYES, limitWaitTime }, levels));
		await levelTimePasses(0.02);
		expect((await wake(waiting)).result.workflowData).toBeUndefined();
		const [levelOne] = await tasksOn(SUPERVISORS);
		await levelTimePasses(0.05);
		const [items] = (await wake(waiting)).result.workflowData ?? [[]];
		expect(items[0].json).toMatchObject({
			approved: false,
			tasks: [...(await tasksOn(REFUNDS)).map((t) => t.id), levelOne.id],
			escalation: { level: 1, queueId: SUPERVISORS, decidedAtLevel: null },
			people: { decision: 'timedOut' },
		});
		expect(await tasksOn(SUPERVISORS)).toEqual([levelOne]);
	});

	test("decided at level 0 after the level's task was created (issue 60): `tasks` lists the open level task too, and escalation.level says the level was asked", async () => {
		const waiting = await run(escalating(FOUR_EYES));
		const [first, second] = await tasksOn(REFUNDS);
		await answer(REFUNDS, first.id, ANN, 'approve');
		await levelTimePasses();
		await wake(waiting);
		const [open] = await tasksOn(SUPERVISORS);
		await answer(REFUNDS, second.id, BOB, 'reject');
		const [items] = (await call(waiting, REFUNDS, second.id)).result.workflowData ?? [[]];
		expect(items[0].json).toMatchObject({
			approved: false,
			tasks: [first.id, second.id, open.id],
			escalation: { level: 1, queueId: SUPERVISORS, decidedAtLevel: 0, decidedBy: BOB },
		});
	});

	test('501 items x 20 people escalated (issue 60): at most 500 level tasks per call, and the run asks to be woken again at once while slots are left; then 10 more calls to it and 10 to a small run beside it create nothing: 10,020 and 1', async () => {
		const many = Array.from({ length: 501 }, (_, i) => ({ ...REFUND, message: `Refund ${i}` }));
		const big = await run(escalating({}, [level(SUPERVISORS, AFTER_MINUTES, 20)]), many);
		expect(big.run.status).toBe('waiting');
		const small = await run(escalating({}));
		const smallTask = (await tasksOn(REFUNDS)).at(-1)!;
		const wakeSmall = async () =>
			await callWaitingNode(small, queryOf(String(smallTask.data.resume_url)), {
				tasks: [],
				due: 0,
			});
		await levelTimePasses();
		const perCall: number[] = [];
		for (let total = 0; total < 10_020 && perCall.length < 30; ) {
			const woken = await wake(big);
			const now = (await tasksOn(SUPERVISORS)).length;
			perCall.push(now - total);
			total = now;
			const wakeAt = (woken.response.body as IDataObject).deadline;
			if (total < 10_020) expect(wakeAt).toBeLessThanOrEqual(Date.now());
			else expect(wakeAt).toBeUndefined();
		}
		expect(perCall).toEqual([...Array<number>(20).fill(500), 20]);
		await wakeSmall();
		for (let n = 0; n < 10; n++) await Promise.all([wake(big), wakeSmall()]);
		const level1 = await tasksOn(SUPERVISORS);
		const smallRun = /\/webhook-waiting\/[^/]+\//.exec(String(smallTask.data.resume_url))![0];
		const slots = level1.map((t) => {
			const address = String(t.data.resume_url);
			return `${address.includes(smallRun) ? 'small' : 'big'} ${queryOf(address).tq} ${/#x=(\d+)\./.exec(address)?.[1]}`;
		});
		expect(slots.filter((s) => s.startsWith('small'))).toHaveLength(1);
		expect(new Set(slots).size).toBe(10_021);
		expect(level1).toHaveLength(10_021);
	}, 300_000);

	test('each level asked once per item however many calls and restarts (issue 60 item 2): 20 wake-ups at once, then n8n restarts and the check wakes the run again at the time its record keeps: no level task more; an answer to each counts', async () => {
		const waiting = await run(escalating({}), [
			REFUND,
			{ ...REFUND, message: 'Refund 30 EUR', total: 30 },
		]);
		await levelTimePasses();
		await Promise.all(Array.from({ length: 20 }, async () => await wake(waiting)));
		const created = await tasksOn(SUPERVISORS);
		expect(created.map((t) => queryOf(String(t.data.resume_url)).tq)).toEqual(['0-2-2', '1-2-2']);
		forgetAsAfterRestart();
		// the process forgot the tasks it asked for; the wake says the level was asked (before this
		// change the restarted process asked the level again: 4 tasks)
		expect((await wake(waiting)).result.workflowData).toBeUndefined();
		expect(await tasksOn(SUPERVISORS)).toEqual(created);
		await answer(SUPERVISORS, created[1].id, SUPERVISOR, 'approve');
		await answer(SUPERVISORS, created[0].id, SUPERVISOR, 'reject');
		const [items] = (await call(waiting, SUPERVISORS, created[0].id)).result.workflowData ?? [[]];
		expect(items.map((i) => [i.json.approved, (i.json.people as IDataObject).decidedBy])).toEqual([
			[false, created[0].id],
			[true, created[1].id],
		]);
		expect(await tasksOn(SUPERVISORS)).toHaveLength(2);
	});

	test('a completion reaching the run after its level is due asks the level no sooner than the check does (issue 60 item 2): only the wake for the level creates its tasks', async () => {
		const waiting = await run(escalating(FOUR_EYES));
		const [first] = await tasksOn(REFUNDS);
		await levelTimePasses();
		await answer(REFUNDS, first.id, ANN, 'approve');
		expect((await call(waiting, REFUNDS, first.id)).result.workflowData).toBeUndefined();
		expect(await tasksOn(SUPERVISORS)).toEqual([]);
		await wake(waiting);
		expect(await tasksOn(SUPERVISORS)).toHaveLength(1);
	});
});

describe('Escalate refuses a set-up that cannot work, before any task', () => {
	test.each([
		[
			'a level queue without the fields the run sends',
			escalating({}, [level(106)]),
			'Escalate level 1: queue 106 (Questions) has no text field "customer_message"',
		],
		[
			'levels not growing in time',
			escalating({}, [level(SUPERVISORS, 2), level(SUPERVISORS, 1)]),
			'Escalate: each level must come later than the one before',
		],
		[
			'more than three levels',
			escalating(
				{},
				[1, 2, 3, 4].map((after) => level(SUPERVISORS, after)),
			),
			'Escalate has 4 levels; at most 3',
		],
		[
			'a route back the node cannot wake through',
			escalating({ routeBack: 'pollTrigger' }),
			'Escalate needs the Task Queue Trigger as the route back',
		],
	])('%s', async (_, parameters, message) => {
		const refused = await run(parameters);
		expect(refused.error?.message).toContain(message);
		expect(await tasksOn(REFUNDS)).toEqual([]);
	});

	test('a level queue whose completions do not come back to this n8n', async () => {
		await env.client.setWebhook(SUPERVISORS, '');
		const refused = await run(escalating({}));
		expect(refused.error?.message).toBe(
			`No Task Queue Trigger of this n8n receives the completions of queue ${SUPERVISORS}`,
		);
		expect(await tasksOn(REFUNDS)).toEqual([]);
	});
});

describe("the AI agent's human review", () => {
	test("escalates the same way: nobody reviews the tool call on Agent Approvals; at the level time a task on the supervisors' queue shows the same request; the supervisor denies with feedback; the agent gets approved false and the feedback as chatInput, decided at level 1", async () => {
		const agentApprovals = await env.client.getQueue(105);
		const supervisors = await env.client.createQueue({
			name: 'Agent Supervisors',
			blocks: agentApprovals.data,
		});
		await env.client.setWebhook(105, TRIGGER_OF_THIS_N8N);
		await env.client.setWebhook(supervisors.id, TRIGGER_OF_THIS_N8N);
		const request = 'The agent wants to run this tool: refund_order\n\nInput:\n{"order": 4411}';
		const waiting = await run({
			resource: 'task',
			operation: 'sendAndWait',
			queue: locator(105),
			taskData: { mappingMode: 'defineBelow', value: {}, matchingColumns: [], schema: [] },
			resumeField: 'resume_url',
			responseType: 'approval',
			approvalField: 'decision',
			approveOption: 'approve',
			feedbackField: 'feedback',
			messageField: 'request',
			message: request,
			options: { escalate: { levels: [level(supervisors.id)] } },
		});
		expect(waiting.error).toBeUndefined();
		expect(waiting.run.status).toBe('waiting');
		const [reviewTask] = await tasksOn(105);
		expect(reviewTask.data).toMatchObject({ request });
		await levelTimePasses();
		// the check's wake at the level's time (the time its record keeps: the run's announcement)
		await callWaitingNode(waiting, queryOf(String(reviewTask.data.resume_url)), {
			tasks: [],
			due: 0,
		});
		const [supervisorTask] = await tasksOn(supervisors.id);
		expect(supervisorTask.data).toMatchObject({ request });
		await env.client.complete(supervisors.id, supervisorTask.id, {
			by: SUPERVISOR,
			data: { decision: 'deny', feedback: 'No refunds without a receipt.' },
		});
		const [items] = (await call(waiting, supervisors.id, supervisorTask.id)).result
			.workflowData ?? [[]];
		expect(items.map((i) => [i.json.approved, i.json.chatInput, i.pairedItem])).toEqual([
			[false, 'No refunds without a receipt.', { item: 0 }],
		]);
		expect(items[0].json.escalation).toMatchObject({
			level: 1,
			queueId: supervisors.id,
			decidedAtLevel: 1,
			decidedBy: SUPERVISOR,
		});
	});
});

/**
 * A task on the level's queue with the item's address for it and a level-1 mark, made as the run
 * made them before its marks were its own: the address's tag and the mark signed with `key`.
 */
async function plantLevelTask(key: string): Promise<number> {
	const [own] = await tasksOn(REFUNDS);
	const address = String(own.data.resume_url);
	const [, executionId, nodeId, item, count, inputs, t] =
		/\/webhook-waiting\/([^/]+)\/([^?]+)\?tq=(\d+)-(\d+)-(\d+)&q=\d+&t=(\d+)&k=/.exec(address)!;
	const parts = {
		...{ executionId, nodeId, item: Number(item), count: Number(count) },
		...{ inputs: Number(inputs), queueId: SUPERVISORS, createdAt: Number(t) },
	};
	const levelAddress = address
		.replace(/&q=\d+/, `&q=${SUPERVISORS}`)
		.replace(/k=[0-9a-f]{32}/, `k=${addressTag(key, parts)}`);
	const {
		ids: [planted],
	} = await env.client.createTasks(SUPERVISORS, [
		{
			customer_message: REFUND.message,
			order_total: REFUND.total,
			resume_url: markedAddress(levelAddress, key, parts, slotOf(1, 1)),
		},
	]);
	return planted;
}
