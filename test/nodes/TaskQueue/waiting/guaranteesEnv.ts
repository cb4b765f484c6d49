// The set-up shared by the waiting guarantees' files (guarantees.test.ts; the backlog ones, which
// leave the fast tier, in guarantees.backlog.test.ts): a trigger on the queue as n8n runs it, its
// server, and n8n's waiting endpoint.
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { startWaitingRun, WaitingEndpoint } from '../../../helpers/waiting';
import {
	locator,
	startTriggerEnv,
	startWebhookServer,
	WebhookTriggerUnderTest,
	type TriggerTestEnv,
} from '../trigger/env';
import { forgetAsAfterRestart } from '../../../../nodes/TaskQueue/runtime/processMemory';

export const QUEUE = 104;
// live bindings: each test file sees the values the hooks below set
export let env: TriggerTestEnv;
export let trigger: WebhookTriggerUnderTest;
export let waiting: WaitingEndpoint;
export let server: Awaited<ReturnType<typeof startWebhookServer>>;
let executions = 100;

export const nextExecutionId = () => String(++executions);

/** The trigger's address served by `other` from now on (the trigger of the test set up anew). */
export async function serveWith(other: WebhookTriggerUnderTest): Promise<void> {
	await server.close();
	server = await startWebhookServer(other, waiting);
}

/** Each test a new n8n process with a trigger on the queue, its server and n8n's waiting endpoint. */
export function useGuaranteesEnv(): void {
	beforeAll(async () => (env = await startTriggerEnv()));
	afterAll(async () => await env.close());
	beforeEach(async () => {
		// each test is a new n8n: a completion an earlier test left owed (under load) is not this one's
		forgetAsAfterRestart();
		await env.client.reset();
		waiting = new WaitingEndpoint();
		trigger = new WebhookTriggerUnderTest({
			credentials: env.credentials(),
			parameters: { event: 'taskCompleted', queue: locator(QUEUE), options: {} },
		});
		server = await startWebhookServer(trigger, waiting);
		await trigger.activate();
	});
	afterEach(async () => {
		// one jest process plays each test's n8n: what the test's deliveries still do (a forward, a
		// settled or owed completion) ends before the next test clears this process's memory, or it
		// lands in the next test's (CI51 emitted an earlier test's completion in the next one's check);
		// a delivery a test left retrying is not waited for past 5 s
		await Promise.race([trigger.idle(), new Promise((resolve) => setTimeout(resolve, 5_000))]);
		await server.close();
	});
}

export const INPUT = [{ message: 'first' }, { message: 'second' }];
/** The key of the trigger's credential (a caller with the trigger's secret alone does not have it). */
export const apiKey = () => String(env.credentials().data.apiKey);

export async function createAndWait(
	parameters: IDataObject = {},
	input: IDataObject[] = INPUT,
	extra: { probe?: boolean; settings?: IDataObject } = {},
) {
	const executionId = nextExecutionId();
	const run = await startWaitingRun({
		credentials: env.credentials(),
		executionId,
		input,
		waitingBaseUrl: server.waitingBaseUrl,
		parameters,
		probe: extra.probe,
	});
	waiting.add(executionId, run);
	const tasks = (await env.client.tasks(QUEUE)).filter((t) =>
		String(t.data.resume_url).includes(`/${executionId}/`),
	);
	tasks.sort((a, b) => String(a.data.resume_url).localeCompare(String(b.data.resume_url)));
	return { run, executionId, tasks };
}

export const complete = async (taskId: number, data: IDataObject = { decision: 'approve' }) =>
	await env.client.complete(QUEUE, taskId, { by: 'alice@example.com', data });

export async function until(
	what: string,
	probe: () => boolean | Promise<boolean>,
	timeoutMs = 10_000,
) {
	const deadline = Date.now() + timeoutMs;
	while (!(await probe())) {
		if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
		await new Promise((resolve) => setTimeout(resolve, 20));
	}
}

export const resumedIds = (executionId: string) =>
	((waiting.resumed.get(executionId) as INodeExecutionData[][])[0] ?? []).map((i) => i.json.id);
export const reads = async () =>
	(await env.client.requests()).filter((r) => r.path.endsWith('/tasks/completed')).length;
