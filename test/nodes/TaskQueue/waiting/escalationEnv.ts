// The set-up shared by Escalate's files (escalation.test.ts; the one at scale, out of the fast tier,
// in escalation.scale.test.ts): the sandbox, a run of Create and Wait that escalates, and the calls
// the trigger and its check make to the waiting run.
import type { IDataObject } from 'n8n-workflow';
import { sleep } from 'n8n-workflow';

import { runActionNode } from '../../../helpers/n8n';
import { callWaitingNode, queryOf } from '../../../helpers/waiting';
import { locator, node, reviewTool, startEnv, type TestEnv } from '../env';

export const TRIGGER_OF_THIS_N8N =
	'http://localhost:5678/webhook/6f1c2b0e-4d7a-4e8b-9a51-0c3d2e1f4a5b/task-completed?secret=s3cret';
export const ANN = 'alice@example.com';
export const BOB = 'bob@example.com';
export const SUPERVISOR = 'erin@example.com';
export const REQUESTER = 'dave@example.com';
export const REFUNDS = 104;
export const SUPERVISORS = 107;
/** A level's time in the tests: 1.2 s after the run's tasks. */
export const AFTER_MINUTES = 0.02;

// a live binding: each test file sees the value its hooks set
export let env: TestEnv;
/** The sandbox for the file, reset before each test with both queues' webhooks on this n8n. */
export function useEscalationEnv(): void {
	beforeAll(async () => (env = await startEnv()));
	afterAll(async () => await env.close());
	beforeEach(async () => {
		await env.client.reset();
		await env.client.setWebhook(REFUNDS, TRIGGER_OF_THIS_N8N);
		await env.client.setWebhook(SUPERVISORS, TRIGGER_OF_THIS_N8N);
		await env.client.clearRequests();
	});
}

let executions = 0;

export const level = (queue: number, after = AFTER_MINUTES, people = 1) => ({
	after,
	unit: 'minutes',
	queue: String(queue),
	people,
});

/** Create and Wait on Refund Decisions as an Approval, escalating to Supervisors. */
export function escalating(options: IDataObject, levels = [level(SUPERVISORS)]) {
	return {
		resource: 'task',
		operation: 'sendAndWait',
		queue: locator(REFUNDS),
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
		options: { ...options, escalate: { levels } },
	};
}

export const FOUR_EYES = {
	severalPeople: {
		values: { people: 2, decideWhen: 'allApprove', neverCount: '={{ $json.requester }}' },
	},
};
export const REFUND = { message: 'Refund 900 EUR', total: 900, requester: REQUESTER };

export async function run(
	parameters: IDataObject,
	input: IDataObject[] = [REFUND],
	credentialFields: IDataObject = {},
) {
	return await runActionNode({
		types: { taskQueue: 'message' in parameters ? reviewTool : node },
		node: { type: 'taskQueue', parameters: parameters as never },
		input,
		credentials: env.credentials(credentialFields),
		executionId: `escalation-${++executions}`,
	});
}

export const tasksOn = async (queue: number) =>
	(await env.client.tasks(queue)).filter((t) => t.id >= 1000).sort((a, b) => a.id - b.id);

export const answer = async (queue: number, taskId: number, by: string, decision: string) =>
	await env.client.complete(queue, taskId, {
		by,
		data: { decision, note: `${by} says ${decision}` },
	});

/** The trigger's call for a completed task: at the address the task carries, naming it. */
export async function call(
	waiting: Awaited<ReturnType<typeof run>>,
	queue: number,
	taskId: number,
) {
	const task = (await env.client.tasks(queue)).find((t) => t.id === taskId);
	const own = owns.get(waiting);
	const heard = await callWaitingNode(waiting, queryOf(String(task?.data.resume_url)), {
		tasks: [{ id: taskId, completed_at: task?.completed_at }],
		...(own ? { own } : {}),
	});
	keepOwn(waiting, heard.response.body);
	return heard;
}

/** Per run, its signed list of its own further tasks, which the trigger keeps with its wake and hands back. */
const owns = new WeakMap<object, string>();
const keepOwn = (waiting: object, body: unknown) => {
	const { own } = (body ?? {}) as IDataObject;
	if (typeof own === 'string') owns.set(waiting, own);
};

/** Per run, the wake time the check's record keeps (its static data: a restart keeps it). */
const dues = new WeakMap<object, number>();

/**
 * The check's wake-up at the time it keeps for the run (`due`; at first the run's announcement, by
 * then due): its address, naming no task. The run's answer moves the time on, as for the check:
 * its next wake, or none (the check forgets it); a call the run could not answer keeps it.
 */
export async function wake(waiting: Awaited<ReturnType<typeof run>>) {
	const first = (await tasksOn(REFUNDS)).find((t) => t.data.resume_url)!;
	const due = dues.get(waiting) ?? 0;
	const address = queryOf(String(first.data.resume_url));
	const own = owns.get(waiting);
	const heard = await callWaitingNode(waiting, address, { tasks: [], due, ...(own ? { own } : {}) });
	keepOwn(waiting, heard.response.body);
	const next = (heard.response.body as IDataObject | undefined)?.deadline;
	if (heard.response.statusCode === 202)
		dues.set(waiting, typeof next === 'number' ? Math.max(next, due) : Infinity);
	return heard;
}

/** Past the first level's time. */
export const levelTimePasses = async (after = AFTER_MINUTES) => await sleep(after * 60_000 + 300);
