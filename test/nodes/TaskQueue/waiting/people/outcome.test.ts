// Several People per Item, run through n8n-core's contexts against the sandbox over HTTP: the tasks
// created, who counts, the decision, the output, and what is refused before any task.
import type { IDataObject, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { runActionNode } from '../../../../helpers/n8n';
import { callWaitingNode, queryOf } from '../../../../helpers/waiting';
import { forgetAsAfterRestart } from '../../../../../nodes/TaskQueue/runtime/processMemory';
import { locator, node, startEnv, type TestEnv } from '../../env';
import * as outcomeModule from '../../../../../nodes/TaskQueue/waiting/people/outcome';

const TRIGGER_OF_THIS_N8N =
	'http://localhost:5678/webhook/6f1c2b0e-4d7a-4e8b-9a51-0c3d2e1f4a5b/task-completed?secret=s3cret';
const ANN = 'alice@example.com';
const BOB = 'bob@example.com';
// a third person of the sandbox's organization
const CAROL = 'dave@example.com';

/** n8n's Logger, which `this.logger` of every node context is. */
const { Logger } = require(
	require.resolve('@n8n/backend-common', { paths: [require.resolve('n8n-core')] }),
) as typeof import('@n8n/backend-common');
const info = jest.spyOn(Logger.prototype, 'info');

let env: TestEnv;
beforeAll(async () => (env = await startEnv()));
afterAll(async () => await env.close());
beforeEach(async () => {
	await env.client.reset();
	await env.client.setWebhook(104, TRIGGER_OF_THIS_N8N);
	await env.client.clearRequests();
});

let executions = 0;

/** Create and Wait on queue 104 (Refund Decisions) as an Approval, with Several People per Item. */
function approval(people: IDataObject, parameters: IDataObject = {}) {
	return {
		resource: 'task',
		operation: 'sendAndWait',
		queue: locator(104),
		taskData: {
			mappingMode: 'defineBelow',
			value: { customer_message: '={{ $json.message }}', order_total: '={{ $json.total }}' },
			matchingColumns: [],
			schema: [],
		},
		resumeField: 'resume_url',
		responseType: 'approval',
		approvalField: 'decision',
		approveOption: 'approve',
		feedbackField: 'note',
		options: { severalPeople: { values: people } },
		...parameters,
	};
}

const INPUT = [
	{ message: 'Refund 900 EUR', total: 900, requester: 'Dave@Example.com' },
	{ message: 'Refund 20 EUR', total: 20, requester: BOB },
];

async function run(parameters: IDataObject, input: IDataObject[] = INPUT) {
	const id = ++executions;
	const result = await runActionNode({
		types: { taskQueue: node },
		node: { type: 'taskQueue', parameters: parameters as never },
		input,
		credentials: env.credentials(),
		executionId: `people-${id}`,
	});
	runs.set(result, id);
	return result;
}

/** The run's tasks by item, in creation order. */
async function tasksByItem(): Promise<number[][]> {
	const tasks = (await env.client.tasks(104))
		.filter((t) => t.id >= 1000)
		.sort((a, b) => a.id - b.id);
	const items: number[][] = [];
	for (const task of tasks) {
		const item = Number(/tq=(\d+)-/.exec(String(task.data.resume_url))?.[1]);
		(items[item] ??= []).push(task.id);
	}
	return items;
}

/** The execution id the run was started with (runActionNode's `executionId`). */
const executionIdOf = (started: object) => `people-${runs.get(started)}`;
const runs = new WeakMap<object, number>();

const answer = async (taskId: number, by: string, decision: string, note = '') =>
	await env.client.complete(104, taskId, { by, data: { decision, note } });

async function call(waiting: Awaited<ReturnType<typeof run>>, taskId: number) {
	const task = (await env.client.tasks(104)).find((t) => t.id === taskId);
	return await callWaitingNode(waiting, queryOf(String(task?.data.resume_url)), {
		tasks: [{ id: taskId, completed_at: task?.completed_at }],
	});
}

describe('Several People per Item', () => {
	test('bounded cost per call: calls that find the list unchanged reuse the last outcome (no decision is computed again); a new answer is decided at the next call', async () => {
		const decisions = jest.spyOn(outcomeModule, 'peopleOutcome');
		const waiting = await run(approval({ people: 2, decideWhen: 'allApprove' }), [INPUT[0]]);
		const [ids] = await tasksByItem();
		await answer(ids[0], ANN, 'approve');
		decisions.mockClear();
		for (let i = 0; i < 6; i++)
			expect((await call(waiting, ids[0])).response).toMatchObject({
				statusCode: 202,
				body: { waiting: true, completed: 0, of: 1, taken: [ids[0]] },
			});
		// one decision for six calls: the others found the list as it was
		expect(decisions).toHaveBeenCalledTimes(1);
		await answer(ids[1], BOB, 'approve');
		const [done] = (await call(waiting, ids[1])).result.workflowData ?? [[]];
		expect(decisions).toHaveBeenCalledTimes(2);
		expect((done[0] as INodeExecutionData).json).toMatchObject({
			approved: true,
			// Never Count was empty: the output says so (who asked is unknown to the node)
			people: { decision: 'approved', counted: 2, neverCount: [] },
		});
		decisions.mockRestore();
	});

	test("four eyes: two tasks per item; the requester's own approval is kept, never counted; both tasks answered and one counted: the item ends as not enough people (never stuck), and the output says who counted and why", async () => {
		const waiting = await run(
			approval({ people: 2, decideWhen: 'allApprove', neverCount: '={{ $json.requester }}' }),
			[INPUT[0]],
		);
		expect(waiting.error).toBeUndefined();
		expect(waiting.run.status).toBe('waiting');
		const [ids] = await tasksByItem();
		expect(ids).toHaveLength(2);
		// while it waits, the editor shows every task of the item
		expect(waiting.items[0].json).toMatchObject({ id: ids[0], tasks: ids });
		// every create request carries the same item's values and the item's address
		const creates = (await env.requests()).filter((r) => r.path.endsWith('/tasks/create'));
		expect(creates.map((r) => (r.body as { data: IDataObject }).data.customer_message)).toEqual([
			'Refund 900 EUR',
			'Refund 900 EUR',
		]);

		await answer(ids[0], CAROL, 'approve', 'my own request');
		const afterRequester = await call(waiting, ids[0]);
		expect(afterRequester.response).toMatchObject({
			statusCode: 202,
			body: { waiting: true, completed: 0, of: 1, taken: [ids[0]] },
		});
		await answer(ids[1], ANN, 'approve', 'fine');
		const [done] = (await call(waiting, ids[1])).result.workflowData ?? [[]];
		// two tasks, both answered, one counted: not enough people (never stuck)
		expect(done).toHaveLength(1);
		const item = done[0] as INodeExecutionData;
		expect(item.pairedItem).toEqual({ item: 0 });
		expect(item.json).toMatchObject({
			id: ids[0],
			status: 'completed',
			tasks: ids,
			approved: false,
			wait: { outcome: 'completed', completed: 1, of: 1 },
			people: {
				rule: 'allApprove',
				decision: 'notEnoughPeople',
				people: 2,
				neverCount: ['dave@example.com'], // as compared: lower case
				needed: 2,
				counted: 1,
				approvals: 1,
				rejections: 0,
				missing: 1, // one more approval by another person would have met the rule
			},
		});
		const people = item.json.people as IDataObject;
		// each answer's seconds: from the item's first task's creation, by the service's clock
		const created = (await env.client.tasks(104)).find((t) => t.id === ids[0])!.created_at;
		const ms = (time: unknown) => Date.parse(String(time).slice(0, 23) + 'Z');
		for (const answer of people.answers as IDataObject[])
			expect(answer.seconds).toBe((ms(answer.at) - ms(created)) / 1000);
		expect((item.json.wait as IDataObject).secondsToDecision).toBeUndefined(); // not decided by an answer
		expect(people.answers).toEqual([
			{
				taskId: ids[0],
				by: CAROL,
				at: expect.any(String),
				seconds: expect.any(Number),
				values: {
					customer_message: 'Refund 900 EUR',
					order_total: 900,
					decision: 'approve',
					note: 'my own request',
				},
				labels: { decision: 'Approve' },
				vote: 'approve',
				counted: false,
				reason: 'neverCount',
			},
			{
				taskId: ids[1],
				by: ANN,
				at: expect.any(String),
				seconds: expect.any(Number),
				values: {
					customer_message: 'Refund 900 EUR',
					order_total: 900,
					decision: 'approve',
					note: 'fine',
				},
				labels: { decision: 'Approve' },
				vote: 'approve',
				counted: true,
			},
		]);
		expect(JSON.stringify(done)).not.toContain('signature=');
	});

	test("All Must Approve: two different people approve each item; the run resumes once both items are decided, the deciding answer where today's output has it", async () => {
		const waiting = await run(approval({ people: 2, decideWhen: 'allApprove' }));
		const [first, second] = await tasksByItem();
		await answer(first[0], ANN, 'approve');
		await answer(first[1], BOB, 'approve', 'ok by me');
		info.mockClear();
		expect((await call(waiting, first[1])).response).toMatchObject({
			statusCode: 202,
			body: { completed: 1, of: 2 },
		});
		// how far each item is, where n8n's log shows it while the run waits
		expect(info.mock.calls.map(([line]) => String(line))).toContain(
			`Task Queue: execution ${executionIdOf(waiting)} still waits: item 0: 2 of 2 approvals (approved); item 1: 0 of 2 approvals (waiting)`,
		);
		// a rejection decides item 1 at once, its other task still open
		await answer(second[1], BOB, 'reject', 'no receipt');
		const [items] = (await call(waiting, second[1])).result.workflowData ?? [[]];
		expect(
			items.map((i) => [i.pairedItem, i.json.approved, (i.json.people as IDataObject).decision]),
		).toEqual([
			[{ item: 0 }, true, 'approved'],
			[{ item: 1 }, false, 'rejected'],
		]);
		expect(items[0].json).toMatchObject({
			id: first[1],
			completed_by: BOB,
			data: { decision: 'approve', note: 'ok by me' },
			labels: { decision: 'Approve' },
			chatInput: 'ok by me',
			people: { decidedBy: first[1], counted: 2 },
		});
		expect(items[1].json).toMatchObject({
			id: second[1],
			chatInput: 'no receipt',
			people: { decidedBy: second[1], counted: 1, rejections: 1, missing: 0 },
		});
		// the copy still open when item 1 was decided: answered later, it resumes nothing
		await answer(second[0], ANN, 'approve');
	});

	test('the progress line says the rule truthfully, once per change: At Least 2 of 3 after an approval and a rejection is 1 of 2 approvals', async () => {
		const waiting = await run(approval({ people: 3, decideWhen: 'atLeast', approvalsNeeded: 2 }), [
			INPUT[0],
		]);
		const [ids] = await tasksByItem();
		await answer(ids[0], ANN, 'approve');
		await answer(ids[1], BOB, 'reject');
		info.mockClear();
		await call(waiting, ids[1]);
		await call(waiting, ids[1]); // the same state again: no new line
		const lines = info.mock.calls
			.map(([line]) => String(line))
			.filter((l) => l.includes('still waits'));
		expect(lines).toEqual([
			`Task Queue: execution ${executionIdOf(waiting)} still waits: item 0: 1 of 2 approvals, 1 rejected (waiting)`,
		]);
	});

	test('a run of many items logs one short progress line: how many are decided, and the first five', async () => {
		const input = Array.from({ length: 7 }, (_, i) => ({ message: `Refund ${i}`, total: i }));
		const waiting = await run(approval({ people: 2, decideWhen: 'allApprove' }), input);
		const items = await tasksByItem();
		await answer(items[0][0], ANN, 'approve');
		await answer(items[0][1], BOB, 'approve');
		info.mockClear();
		await call(waiting, items[0][1]);
		const lines = info.mock.calls
			.map(([line]) => String(line))
			.filter((l) => l.includes('still waits'));
		expect(lines).toEqual([
			`Task Queue: execution ${executionIdOf(waiting)} still waits: 7 items, 1 decided, 6 waiting; item 0: 2 of 2 approvals (approved); item 1: 0 of 2 approvals (waiting); item 2: 0 of 2 approvals (waiting); item 3: 0 of 2 approvals (waiting); item 4: 0 of 2 approvals (waiting); …`,
		]);
	});

	test('one busy person answers both tasks of an item: counted once, the second kept with its reason', async () => {
		const waiting = await run(approval({ people: 2, decideWhen: 'atLeast', approvalsNeeded: 2 }), [
			INPUT[1],
		]);
		const [ids] = await tasksByItem();
		await answer(ids[0], ANN, 'approve');
		await answer(ids[1], ANN, 'approve');
		const [items] = (await call(waiting, ids[1])).result.workflowData ?? [[]];
		expect(items[0].json).toMatchObject({
			approved: false,
			chatInput: 'Not approved: notEnoughPeople (1 of 2 needed answers counted)',
			people: { decision: 'notEnoughPeople', counted: 1, approvals: 1 },
		});
		expect(
			((items[0].json.people as IDataObject).answers as IDataObject[]).map((a) => [
				a.by,
				a.counted,
				a.reason,
			]),
		).toEqual([
			[ANN, true, undefined],
			[ANN, false, 'samePerson'],
		]);
	});

	test("asking again: one person answers both tasks, the run asks another person with a third task (the item's values, its address marked), counts that answer, and approves", async () => {
		const waiting = await run(approval({ people: 2, decideWhen: 'allApprove', maxTasks: 3 }), [
			INPUT[1],
		]);
		const [ids] = await tasksByItem();
		expect(ids).toHaveLength(2);
		await answer(ids[0], ANN, 'approve');
		await answer(ids[1], ANN, 'approve');
		await env.client.clearRequests();
		const asked = await call(waiting, ids[1]);
		expect(asked.response).toMatchObject({ statusCode: 202, body: { completed: 0, of: 1 } });
		const creates = (await env.requests()).filter((r) => r.path.endsWith('/tasks/create'));
		expect(creates).toHaveLength(1);
		const sent = (creates[0].body as { data: IDataObject }).data;
		const original = (await env.client.tasks(104)).find((t) => t.id === ids[0])!;
		expect(sent).toEqual({
			customer_message: 'Refund 20 EUR',
			order_total: 20,
			resume_url: `${String(original.data.resume_url)}#x=3.${String(sent.resume_url).slice(-32)}`,
		});
		expect(String(sent.resume_url)).toMatch(/#x=3\.[a-f0-9]{32}$/);
		// the same call again (a replay) does not ask twice
		await call(waiting, ids[1]);
		expect((await env.requests()).filter((r) => r.path.endsWith('/tasks/create'))).toHaveLength(1);
		const [, , third] = (await tasksByItem())[0];
		expect(third).toBeGreaterThan(ids[1]);
		// a task the run did not know by id is told by a read: another person answers it
		await answer(third, BOB, 'approve', 'second pair of eyes');
		const [items] = (await call(waiting, third)).result.workflowData ?? [[]];
		expect(items[0].json).toMatchObject({
			approved: true,
			id: third,
			tasks: [...ids, third],
			people: { decision: 'approved', counted: 2, decidedBy: third },
		});
		expect(
			((items[0].json.people as IDataObject).answers as IDataObject[]).map((a) => [
				a.taskId,
				a.by,
				a.counted,
				a.reason,
			]),
		).toEqual([
			[ids[0], ANN, true, undefined],
			[ids[1], ANN, false, 'samePerson'],
			[third, BOB, true, undefined],
		]);
	});

	test('asking again stops at Max Tasks per Item: the item ends as not enough people, never stuck', async () => {
		const waiting = await run(approval({ people: 2, decideWhen: 'allApprove', maxTasks: 3 }), [
			INPUT[1],
		]);
		const [ids] = await tasksByItem();
		await answer(ids[0], ANN, 'approve');
		await answer(ids[1], ANN, 'approve');
		await call(waiting, ids[1]);
		const [, , third] = (await tasksByItem())[0];
		await answer(third, ANN, 'approve');
		const [items] = (await call(waiting, third)).result.workflowData ?? [[]];
		expect(items[0].json).toMatchObject({
			approved: false,
			tasks: [...ids, third],
			people: { decision: 'notEnoughPeople', counted: 1 },
		});
	});

	test("a task carrying a made-up mark, or another run's, is not the run's: answered as another completion", async () => {
		const waiting = await run(approval({ people: 2, decideWhen: 'allApprove', maxTasks: 4 }), [
			INPUT[1],
		]);
		const [ids] = await tasksByItem();
		const address = String(
			(await env.client.tasks(104)).find((t) => t.id === ids[0])!.data.resume_url,
		);
		const { ids: forged } = await env.client.createTasks(104, [
			{ customer_message: 'forged', resume_url: `${address}#x=3.${'a'.repeat(32)}` },
		]);
		await answer(forged[0], BOB, 'approve');
		expect((await call(waiting, forged[0])).response).toMatchObject({
			statusCode: 200,
			body: { taken: [], others: [forged[0]] },
		});
	});

	test('Majority on a selection field with Task Values: the option two of three chose', async () => {
		const waiting = await run(
			approval(
				{ people: 3, decideWhen: 'majority', voteField: 'decision' },
				{ responseType: 'values' },
			),
			[INPUT[0]],
		);
		const [ids] = await tasksByItem();
		expect(ids).toHaveLength(3);
		await answer(ids[0], ANN, 'escalate');
		await answer(ids[1], BOB, 'reject');
		expect((await call(waiting, ids[1])).response).toMatchObject({ statusCode: 202 });
		await answer(ids[2], CAROL, 'escalate');
		const [items] = (await call(waiting, ids[2])).result.workflowData ?? [[]];
		expect(items[0].json.people).toMatchObject({
			rule: 'majority',
			decision: 'chosen',
			choice: 'escalate',
			choiceLabel: 'Escalate',
			needed: 2,
			counted: 3,
		});
		expect(items[0].json).not.toHaveProperty('approved');
	});

	test.each([
		['majority', 3, ['approve', 'reject', 'approve']],
		['firstAnswer', 2, ['approve']],
	])(
		'%s on Task Values whose vote options are named approve and reject: chosen, with the choice and its label',
		async (decideWhen, people, votes) => {
			const waiting = await run(
				approval({ people, decideWhen, voteField: 'decision' }, { responseType: 'values' }),
				[INPUT[0]],
			);
			const [ids] = await tasksByItem();
			const by = [ANN, BOB, CAROL];
			let last;
			for (const [i, vote] of votes.entries()) {
				await answer(ids[i], by[i], vote);
				last = await call(waiting, ids[i]);
			}
			const [items] = last?.result.workflowData ?? [[]];
			expect(items[0].json.people).toMatchObject({
				rule: decideWhen,
				decision: 'chosen',
				choice: 'approve',
				choiceLabel: 'Approve',
				approvals: 0,
				rejections: 0,
			});
			expect(items[0].json).not.toHaveProperty('approved');
		},
	);

	test('Collect All: every answer, and how far they agree per field', async () => {
		const waiting = await run(
			approval({ people: 2, decideWhen: 'collectAll' }, { responseType: 'values' }),
			[INPUT[1]],
		);
		const [ids] = await tasksByItem();
		await answer(ids[0], ANN, 'approve', 'a');
		await answer(ids[1], CAROL, 'approve', 'b');
		const [items] = (await call(waiting, ids[1])).result.workflowData ?? [[]];
		expect(items[0].json.people).toMatchObject({
			decision: 'collected',
			counted: 2,
			agreement: {
				decision: { value: 'approve', count: 2, of: 2, share: 1 },
				note: { count: 1, of: 2, share: 0.5 },
			},
		});
	});

	test('the deadline with two items: the item two people approved keeps its decision, the other goes on with its one approval, timed out; Collect All agrees over the answers so far', async () => {
		const limitWaitTime = {
			values: { limitType: 'afterTimeInterval', resumeAmount: 1 / 60, resumeUnit: 'minutes' },
		};
		const waiting = await run(
			approval(
				{ people: 2, decideWhen: 'allApprove' },
				{
					options: {
						severalPeople: { values: { people: 2, decideWhen: 'allApprove' } },
						limitWaitTime,
					},
				},
			),
		);
		const [first, second] = await tasksByItem();
		await answer(first[0], ANN, 'approve');
		await answer(first[1], CAROL, 'approve');
		await answer(second[0], ANN, 'approve');
		await new Promise((resolve) => setTimeout(resolve, 1100));
		const [items] = (await call(waiting, second[0])).result.workflowData ?? [[]];
		expect(
			items.map((i) => [i.pairedItem, (i.json.wait as IDataObject).outcome, i.json.approved]),
		).toEqual([
			[{ item: 0 }, 'completed', true],
			[{ item: 1 }, 'timedOut', false],
		]);
		expect(items.map((i) => (i.json.people as IDataObject).decision)).toEqual([
			'approved',
			'timedOut',
		]);
		expect(items[1].json.people).toMatchObject({
			counted: 1,
			missing: 1,
			answers: [{ by: ANN, counted: true }],
		});

		// Collect All: at the deadline, how far the answers so far agree
		const collect = await run(
			approval(
				{ people: 3, decideWhen: 'collectAll' },
				{
					responseType: 'values',
					options: {
						severalPeople: { values: { people: 3, decideWhen: 'collectAll' } },
						limitWaitTime,
					},
				},
			),
			[INPUT[1]],
		);
		const ids = (await env.client.tasks(104))
			.filter((t) => String(t.data.resume_url).includes(`/${executionIdOf(collect)}/`))
			.map((t) => t.id)
			.sort((a, b) => a - b);
		expect(ids).toHaveLength(3);
		await answer(ids[0], ANN, 'reject', 'late');
		await answer(ids[1], BOB, 'reject', 'no');
		await new Promise((resolve) => setTimeout(resolve, 1100));
		const [collected] = (await call(collect, ids[1])).result.workflowData ?? [[]];
		expect(collected[0].json.wait).toMatchObject({ outcome: 'timedOut' });
		expect(collected[0].json.people).toMatchObject({
			decision: 'timedOut',
			counted: 2,
			missing: 1,
			agreement: { decision: { value: 'reject', count: 2, of: 2, share: 1 } },
		});
	});

	test("a task that is not the run's, carrying a copy of its address, never counts", async () => {
		const waiting = await run(approval({ people: 2, decideWhen: 'allApprove' }), [INPUT[0]]);
		const [ids] = await tasksByItem();
		const address = (await env.client.tasks(104)).find((t) => t.id === ids[0])?.data.resume_url;
		const { ids: pasted } = await env.client.createTasks(104, [
			{ customer_message: 'pasted', resume_url: String(address) },
		]);
		await answer(pasted[0], BOB, 'approve');
		const other = await call(waiting, pasted[0]);
		expect(other.response).toMatchObject({
			statusCode: 200,
			body: { taken: [], others: [pasted[0]] },
		});
		await answer(ids[0], ANN, 'approve');
		expect((await call(waiting, ids[0])).response).toMatchObject({
			statusCode: 202,
			body: { completed: 0, of: 1 },
		});
	});
});

describe('an answer counts only for the content its person saw (issue 47)', () => {
	/** The requester answers both tasks of her own refund (neither counts): the run asks again. */
	async function askedAgain() {
		const waiting = await run(
			approval({
				people: 2,
				decideWhen: 'allApprove',
				maxTasks: 4,
				neverCount: '={{ $json.requester }}',
			}),
			[{ message: 'Refund 5,000 EUR', total: 5000, requester: CAROL }],
		);
		const [ids] = await tasksByItem();
		await answer(ids[0], CAROL, 'approve');
		await answer(ids[1], CAROL, 'approve');
		await call(waiting, ids[1]);
		const [, , further] = (await tasksByItem())[0];
		expect(further).toBeGreaterThan(ids[1]);
		const marked = String(
			(await env.client.tasks(104)).find((t) => t.id === further)!.data.resume_url,
		);
		expect(marked).toMatch(/#x=3\.[a-f0-9]{32}$/);
		return { waiting, ids, further, marked };
	}

	test("planted tasks carrying a copy of the further task's marked address decide nothing: each is another completion, and the item still waits", async () => {
		const { waiting, further, marked } = await askedAgain();
		// the requester copies the further task's address (mark included) into tasks of her own
		const { ids: planted } = await env.client.createTasks(104, [
			{ customer_message: 'Team lunch', order_total: 12, resume_url: marked },
			{ customer_message: 'Taxi', order_total: 20, resume_url: marked },
		]);
		await answer(planted[0], ANN, 'approve');
		await answer(planted[1], BOB, 'approve');
		for (const id of planted) {
			const heard = await call(waiting, id);
			expect(heard.result.workflowData).toBeUndefined();
			expect(heard.response).toMatchObject({ statusCode: 200, body: { taken: [], others: [id] } });
		}
		// the run's own further task still counts
		await answer(further, ANN, 'approve');
		const own = await call(waiting, further);
		expect(own.result.workflowData).toBeUndefined();
		expect(own.response).toMatchObject({ statusCode: 202, body: { completed: 0, of: 1 } });
	});

	test('an exact copy of the further task (same values, same mark) made after it: only the first task of the slot counts', async () => {
		const { waiting, further, marked } = await askedAgain();
		const { ids: copy } = await env.client.createTasks(104, [
			{ customer_message: 'Refund 5,000 EUR', order_total: 5000, resume_url: marked },
		]);
		expect(copy[0]).toBeGreaterThan(further);
		await answer(further, ANN, 'approve');
		await answer(copy[0], BOB, 'approve');
		const heard = await call(waiting, copy[0]);
		expect(heard.result.workflowData).toBeUndefined();
		expect(heard.response).toMatchObject({
			statusCode: 200,
			body: { taken: [], others: [copy[0]] },
		});
	});

	test('queue mode: two processes each created a task for the slot; the one answered first counts, whichever process created it', async () => {
		const waiting = await run(approval({ people: 2, decideWhen: 'allApprove', maxTasks: 3 }), [
			INPUT[1],
		]);
		const [ids] = await tasksByItem();
		await answer(ids[0], ANN, 'approve');
		await answer(ids[1], ANN, 'approve');
		await call(waiting, ids[1]); // process 1 asks again
		forgetAsAfterRestart(); // the next call reaches process 2, which knows nothing of it
		await call(waiting, ids[1]); // process 2 asks again for the same slot
		const [, , first, second] = (await tasksByItem())[0];
		expect(second).toBeGreaterThan(first);
		await answer(first, BOB, 'approve'); // the task process 1 created, answered in process 2
		const [items] = (await call(waiting, first)).result.workflowData ?? [[]];
		expect(items[0].json).toMatchObject({
			approved: true,
			people: { decision: 'approved', decidedBy: first },
		});
	});

	test('30 parallel calls while the item asks again, with creates taking 1 s: one further task for the slot', async () => {
		const waiting = await run(approval({ people: 2, decideWhen: 'allApprove', maxTasks: 3 }), [
			INPUT[1],
		]);
		const [ids] = await tasksByItem();
		await answer(ids[0], ANN, 'approve');
		await answer(ids[1], ANN, 'approve');
		await env.client.setFaults([{ route: 'createTask', kind: 'slow', delayMs: 1_000, count: 30 }]);
		await env.client.clearRequests();
		try {
			await Promise.all(Array.from({ length: 30 }, async () => await call(waiting, ids[1])));
		} finally {
			await env.client.clearFaults();
		}
		expect((await env.requests()).filter((r) => r.path.endsWith('/tasks/create'))).toHaveLength(1);
		expect((await tasksByItem())[0]).toHaveLength(3);
	});
});

describe('Never Count reads what mail triggers give (issue 47)', () => {
	test('"Dave Example <Dave@Example.com>" (the from of a mail trigger): his approval is kept, never counted', async () => {
		const waiting = await run(
			approval({
				people: 2,
				decideWhen: 'allApprove',
				neverCount: 'Dave Example <Dave@Example.com>',
			}),
			[INPUT[1]],
		);
		expect(waiting.error).toBeUndefined();
		const [ids] = await tasksByItem();
		await answer(ids[0], CAROL, 'approve');
		await answer(ids[1], ANN, 'approve');
		const [done] = (await call(waiting, ids[1])).result.workflowData ?? [[]];
		expect(done[0].json).toMatchObject({
			approved: false,
			people: {
				decision: 'notEnoughPeople',
				answers: [
					expect.objectContaining({ by: CAROL, counted: false, reason: 'neverCount' }),
					expect.objectContaining({ by: ANN, counted: true }),
				],
			},
		});
	});

	test('a name that is not an e-mail address is refused before any task, naming it and the fix', async () => {
		const refused = await run(
			approval({ people: 2, decideWhen: 'allApprove', neverCount: 'Dave' }),
			[INPUT[1]],
		);
		expect(refused.error).toMatchObject({
			name: 'NodeOperationError',
			message: 'Never Count holds "Dave", which is not an e-mail address (item 0)',
		});
		expect((refused.error as unknown as { description: string }).description).toContain(
			'Dave Example <dave@example.com>',
		);
		expect((await env.requests()).filter((r) => r.path.endsWith('/tasks/create'))).toEqual([]);
	});
});

describe('Several People per Item refuses a set-up that cannot decide, before any task', () => {
	test.each([
		[
			'People per Item 0',
			{ people: 0 },
			{},
			/Ask How Many People \(per item\) must be a whole number from 1 to 20/,
		],
		[
			'Approvals Needed above People per Item',
			{ people: 2, decideWhen: 'atLeast', approvalsNeeded: 3 },
			{},
			/Approvals Needed must be a whole number from 1 to the people per item \(Ask How Many People: 2\)/,
		],
		[
			'All Must Approve with Task Values',
			{ people: 2, decideWhen: 'allApprove' },
			{ responseType: 'values' },
			/counts approvals, but Response Type is Task Values/,
		],
		[
			'Majority with Task Values and no Vote Field',
			{ people: 3, decideWhen: 'majority' },
			{ responseType: 'values' },
			/needs a Vote Field/,
		],
		[
			'Max Tasks per Item below People per Item',
			{ people: 3, decideWhen: 'allApprove', maxTasks: 2 },
			{},
			/Max Tasks per Item must be 0 or a whole number from the people per item \(Ask How Many People: 3\) to 60/,
		],
		[
			'a Vote Field that is not a selection',
			{ people: 3, decideWhen: 'majority', voteField: 'note' },
			{ responseType: 'values' },
			/Vote Field "note" is not a single selection field of queue 104/,
		],
	])('%s', async (_name, people, parameters, message) => {
		const refused = await run(approval(people, parameters));
		expect(refused.error?.message).toMatch(message);
		expect((refused.error as { description?: string }).description).toBeTruthy();
		expect(refused.error).toMatchObject({ name: 'NodeOperationError' });
		expect((await env.requests()).filter((r) => r.path.endsWith('/tasks/create'))).toEqual([]);
	});
});

describe('an approval rule with Never Count empty says so (issue 47)', () => {
	const EMPTY =
		"Task Queue: Several People per Item approves with Never Count empty: who asked is unknown to the node, so a requester who approves their own request counts (map the requester's email into Never Count for four eyes)";

	test("in the run's log when it starts; not when Never Count is set, nor for a rule that does not approve", async () => {
		info.mockClear();
		expect(
			(await run(approval({ people: 2, decideWhen: 'allApprove' }), [INPUT[1]])).error,
		).toBeUndefined();
		expect(info.mock.calls.map(([line]) => String(line))).toContain(EMPTY);
		info.mockClear();
		await run(approval({ people: 2, decideWhen: 'allApprove', neverCount: BOB }), [INPUT[1]]);
		await run(approval({ people: 2, decideWhen: 'collectAll' }), [INPUT[1]]);
		expect(info.mock.calls.map(([line]) => String(line))).not.toContain(EMPTY);
	});

	test('in the editor: a notice under the option while Never Count is empty with an approval rule', () => {
		const { severalPeopleOption } =
			require('../../../../../nodes/TaskQueue/waiting/descriptions') as typeof import('../../../../../nodes/TaskQueue/waiting/descriptions');
		const values = (severalPeopleOption.options as Array<{ values: INodeProperties[] }>)[0].values;
		const notice = values.find((v) => v.type === 'notice');
		expect(notice?.displayName).toContain('Never Count is empty');
		expect(notice?.displayOptions).toEqual({
			show: { neverCount: [''], decideWhen: ['allApprove', 'atLeast'] },
		});
	});
});
