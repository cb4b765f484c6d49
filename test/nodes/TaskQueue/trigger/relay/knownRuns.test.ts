// A run of more than 1,000 tasks (550 items x 2 people): the trigger learns all of its tasks and its
// deadline (the run announces itself in parts of 1,000, each signed), so a late answer to a task past
// the first 1,000 is not emitted as an ordinary completion after the run has gone on (issue 47).
import type { INodeParameters } from 'n8n-workflow';

import { startWaitingRun, WaitingEndpoint } from '../../../../helpers/waiting';
import {
	locator,
	startTriggerEnv,
	startWebhookServer,
	WebhookTriggerUnderTest,
	type TriggerTestEnv,
} from '../env';
import { runOf } from '../../../../../nodes/TaskQueue/trigger/relay/knownRuns';
import { runsToWake } from '../../../../../nodes/TaskQueue/trigger/relay/deadlines';
import { forgetAsAfterRestart } from '../../../../../nodes/TaskQueue/runtime/processMemory';

/** n8n's Logger, which `this.logger` of every node context is. */
const { Logger } = require(
	require.resolve('@n8n/backend-common', { paths: [require.resolve('n8n-core')] }),
) as typeof import('@n8n/backend-common');
const warn = jest.spyOn(Logger.prototype, 'warn');

const QUEUE = 104;
const ITEMS = 550;
let env: TriggerTestEnv;

beforeAll(async () => (env = await startTriggerEnv()));
afterAll(async () => await env.close());

async function until(what: string, probe: () => boolean | Promise<boolean>, timeoutMs = 60_000) {
	const deadline = Date.now() + timeoutMs;
	while (!(await probe())) {
		if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
		await new Promise((resolve) => setTimeout(resolve, 50));
	}
}

/** A new n8n process (nothing remembered, the sandbox reset) with a Task Queue Trigger on the queue. */
async function newProcessWithTrigger() {
	forgetAsAfterRestart();
	await env.client.reset();
	const waiting = new WaitingEndpoint();
	const trigger = new WebhookTriggerUnderTest({
		credentials: env.credentials(),
		parameters: { event: 'taskCompleted', queue: locator(QUEUE), options: {} as INodeParameters },
	});
	return { waiting, trigger, server: await startWebhookServer(trigger, waiting) };
}

test(`a run of ${ITEMS * 2} tasks: the trigger knows every task and the deadline; a late answer past the first 1,000 is not emitted`, async () => {
	const { waiting, trigger, server } = await newProcessWithTrigger();
	try {
		await trigger.activate();
		const run = await startWaitingRun({
			credentials: env.credentials(),
			executionId: '4700',
			input: Array.from({ length: ITEMS }, (_, i) => ({ message: `refund ${i}` })),
			waitingBaseUrl: server.waitingBaseUrl,
			parameters: {
				options: {
					severalPeople: { values: { people: 2, decideWhen: 'collectAll' } },
					limitWaitTime: {
						values: { limitType: 'afterTimeInterval', resumeAmount: 10, resumeUnit: 'minutes' },
					},
				},
			},
		});
		expect(run.error).toBeUndefined();
		waiting.add('4700', run);
		const tasks = (await env.client.tasks(QUEUE))
			.filter((t) => String(t.data.resume_url).includes('/4700/'))
			.map((t) => t.id)
			.sort((a, b) => a - b);
		expect(tasks).toHaveLength(ITEMS * 2);
		// every task is the run's to the trigger, and it will wake the run at its deadline
		expect(tasks.filter((id) => runOf(id)?.execution.startsWith('4700/'))).toEqual(tasks);
		expect(runsToWake(QUEUE).map((r) => r.url)).toEqual([expect.stringContaining('/4700/')]);
		// every task answered (one person each time: not enough people, never stuck): the run goes on
		await env.client.completeMany(QUEUE, ITEMS * 2, { by: 'alice@example.com' });
		await until('the resume', () => waiting.resumed.has('4700'));
		await env.client.waitForWebhookCalls(ITEMS * 2, 60_000);
		// a late answer to a task past the first 1,000, after the run went on: the run's, not emitted
		await env.client.recomplete(tasks[1050], { data: { decision: 'approve' } });
		await env.client.waitForWebhookCalls(ITEMS * 2 + 1, 30_000);
		await new Promise((resolve) => setTimeout(resolve, 200));
		expect(waiting.resumes.get('4700')).toBe(1);
		expect(trigger.executions).toBe(0);
	} finally {
		await server.close();
	}
}, 240_000);

test("deactivating the queue's last trigger while runs wait names them in a warning; a run that went on is not named, nor one only claimed with the trigger's secret", async () => {
	const { waiting, trigger, server } = await newProcessWithTrigger();
	try {
		await trigger.activate();
		for (const executionId of ['4801', '4802', '4803']) {
			const run = await startWaitingRun({
				credentials: env.credentials(),
				executionId,
				input: [{ message: `refund ${executionId}` }],
				waitingBaseUrl: server.waitingBaseUrl,
			});
			expect(run.error).toBeUndefined();
			waiting.add(executionId, run);
		}
		// 4802's person answers: the run goes on, and the trigger hears it
		const task = (await env.client.tasks(QUEUE)).find((t) =>
			String(t.data.resume_url).includes('/4802/'),
		);
		await env.client.complete(QUEUE, task!.id, {
			by: 'alice@example.com',
			data: { decision: 'approve' },
		});
		await until('the resume', () => waiting.resumed.has('4802'));
		await until('the trigger hears it', async () =>
			(await env.client.webhookCalls()).every((c) => c.finishedAt),
		);
		await new Promise((resolve) => setTimeout(resolve, 200));
		// a claim with the trigger's secret (unsigned by the credential) names a made-up execution
		const made = String(task!.data.resume_url).replace('/4802/', '/4899/');
		const { response } = await trigger.deliver({
			body: { taskQueueWaitingRun: { address: made, tasks: [task!.id] } },
			query: { secret: trigger.secret() as string },
		});
		expect(response.statusCode).toBe(200);
		warn.mockClear();
		await trigger.delete();
		const lines = warn.mock.calls
			.map(([message]) => String(message))
			.filter((l) => l.includes(`queue ${QUEUE} has no Task Queue Trigger`));
		expect(lines).toEqual([
			`Task Queue Trigger: queue ${QUEUE} has no Task Queue Trigger of this n8n now, and Create and Wait execution(s) 4801, 4803 were waiting for its answers when last heard from: they stay Waiting until a Task Queue Trigger on the queue is published again (its first check passes on their answers) or their Limit Wait Time ends`,
		]);
	} finally {
		await server.close();
	}
}, 60_000);
