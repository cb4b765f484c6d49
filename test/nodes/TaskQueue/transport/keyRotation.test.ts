// Changing the credential's API key while runs wait, a trigger holds the queue and its check keeps a
// record (docs/operating.md, "Changing the API key"): with the old key as Previous API Key, what was
// signed before the change keeps counting, and what is signed after it counts at once, also in a
// webhook call that still holds the credential as it was. Each point also shows what is lost
// without the previous key, so the field is not decoration; but a run's further tasks are marked
// with the run's own secret, so they count with or without it.
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { startWaitingRun, WaitingEndpoint } from '../../../helpers/waiting';
import {
	locator,
	startTriggerEnv,
	webhookTrigger,
	startWebhookServer,
	WebhookTriggerUnderTest,
	type TriggerTestEnv,
} from '../trigger/env';
import { forgetAsAfterRestart } from '../../../../nodes/TaskQueue/runtime/processMemory';
import { checkRecordCall } from '../../../../nodes/TaskQueue/trigger/relay/checkRecord';
import { runsToWake } from '../../../../nodes/TaskQueue/trigger/relay/deadlines';
import { pollContext } from '../../../helpers/n8n';

const QUEUE = 104;
let env: TriggerTestEnv;
let credentials: ReturnType<TriggerTestEnv['credentials']>;
let trigger: WebhookTriggerUnderTest;
let waiting: WaitingEndpoint;
let server: Awaited<ReturnType<typeof startWebhookServer>>;
let oldKey = '';

beforeAll(async () => (env = await startTriggerEnv()));
afterAll(async () => await env.close());
beforeEach(async () => {
	forgetAsAfterRestart();
	await env.client.reset();
	waiting = new WaitingEndpoint();
	// one credential for the trigger and the runs, as in one n8n
	credentials = env.credentials();
	oldKey = String(credentials.data.apiKey);
	trigger = new WebhookTriggerUnderTest({
		credentials,
		parameters: { event: 'taskCompleted', queue: locator(QUEUE), options: {} },
	});
	server = await startWebhookServer(trigger, waiting);
	await trigger.activate();
});
afterEach(async () => await server.close());

/** The key changes: a new one from the service, the old one kept as Previous API Key (or not). */
async function changeKey(keepPrevious: boolean): Promise<void> {
	const { apiKeys } = await env.client.state();
	const newKey = await env.client.mintApiKey(apiKeys[0].email);
	credentials.data = {
		...credentials.data,
		apiKey: newKey,
		previousApiKey: keepPrevious ? oldKey : '',
	};
}

async function createAndWait(executionId: string, options: IDataObject) {
	const run = await startWaitingRun({
		credentials,
		executionId,
		input: [{ message: 'refund 900' }],
		waitingBaseUrl: server.waitingBaseUrl,
		parameters: { options },
	});
	expect(run.error).toBeUndefined();
	waiting.add(executionId, run);
	return (await env.client.tasks(QUEUE))
		.filter((t) => String(t.data.resume_url).includes(`/${executionId}/`))
		.sort((a, b) => a.id - b.id);
}

async function until(what: string, probe: () => boolean | Promise<boolean>, timeoutMs = 5000) {
	const deadline = Date.now() + timeoutMs;
	while (!(await probe())) {
		if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
		await new Promise((resolve) => setTimeout(resolve, 20));
	}
}

const complete = async (taskId: number, by: string) =>
	await env.client.complete(QUEUE, taskId, { by, data: { decision: 'approve' } });

describe.each([
	['with the old key as Previous API Key', true],
	['without it', false],
])('the API key changes while a run asks again, %s', (_, keepPrevious) => {
	test('the further task asked for before the change counts either way (its mark is signed with the run\'s own secret, not the key): the run resumes once, the trigger emits nothing', async () => {
		const executionId = keepPrevious ? '91' : '92';
		const tasks = await createAndWait(executionId, {
			severalPeople: { values: { people: 2, decideWhen: 'collectAll', maxTasks: 3 } },
		});
		await complete(tasks[0].id, 'alice@example.com');
		await complete(tasks[1].id, 'alice@example.com'); // the same person: the run asks again
		let further: (typeof tasks)[number] | undefined;
		await until('the further task', async () => {
			further = (await env.client.tasks(QUEUE)).find(
				(t) =>
					String(t.data.resume_url).includes(`/${executionId}/`) &&
					String(t.data.resume_url).includes('#x=3.'),
			);
			return further !== undefined;
		});
		// the calls that began before the change have ended (one that did uses the key of its start)
		for (let calls = -1; calls !== waiting.calls.length; ) {
			calls = waiting.calls.length;
			await new Promise((resolve) => setTimeout(resolve, 500));
		}
		await changeKey(keepPrevious);
		// n8n restarted since (a minute later every webhook call reads the credential anew too)
		forgetAsAfterRestart();
		await complete(further!.id, 'bob@example.com');
		await env.client.waitForWebhookCalls(3);
		await until('the resume', () => waiting.resumed.has(executionId));
		expect(waiting.resumes.get(executionId)).toBe(1);
		const [items] = waiting.resumed.get(executionId) as INodeExecutionData[][];
		expect(items[0].json.people).toMatchObject({ decision: 'collected', counted: 2 });
		expect(items[0].json.tasks).toEqual([tasks[0].id, tasks[1].id, further!.id]);
		await new Promise((resolve) => setTimeout(resolve, 300));
		expect(trigger.emitted.map((task) => task.id)).toEqual([]);
	});
});

describe("the trigger's records and announcements across the change", () => {
	test('a check record signed before the change is taken with the previous key, refused (403) without it; one signed after it is taken either way', async () => {
		const before = checkRecordCall(
			{ queueId: QUEUE, at: '2026-11-27T10:00:00.000', ids: [] },
			oldKey,
		);
		const deliver = async (body: unknown) =>
			(await trigger.deliver({ body, query: { secret: trigger.secret() as string } })).response
				.statusCode;
		await changeKey(false);
		forgetAsAfterRestart();
		expect(await deliver(before)).toBe(403);
		credentials.data = { ...credentials.data, previousApiKey: oldKey };
		forgetAsAfterRestart();
		expect(await deliver(before)).toBe(200);
		const after = checkRecordCall(
			{ queueId: QUEUE, at: '2026-11-27T10:00:01.000', ids: [] },
			String(credentials.data.apiKey),
		);
		expect(await deliver(after)).toBe(200);
	});

	test('a run started after the change announces its deadline to a trigger whose webhook calls still hold the old credential: taken (the credential is read again)', async () => {
		// a webhook call of the trigger looks the credential up (the old key): its check's record
		const record = checkRecordCall(
			{ queueId: QUEUE, at: '2026-11-27T10:00:00.000', ids: [] },
			oldKey,
		);
		const { response } = await trigger.deliver({
			body: record,
			query: { secret: trigger.secret() as string },
		});
		expect(response.statusCode).toBe(200);
		await new Promise((resolve) => setTimeout(resolve, 5_100)); // past the gap between fresh lookups
		await changeKey(true);
		const limitWaitTime = {
			values: { limitType: 'afterTimeInterval', resumeAmount: 10, resumeUnit: 'minutes' },
		};
		await createAndWait('93', {
			severalPeople: { values: { people: 2, decideWhen: 'collectAll', maxTasks: 2 } },
			limitWaitTime,
		});
		// the run signed its announcement with the new key; its deadline is known to the trigger
		expect(runsToWake(QUEUE).map((run) => run.url)).toEqual([expect.stringContaining('/93/')]);
	}, 20_000);
});

describe('the old key revoked after the change (issue 59: the check kept reading with it, 401 for over 20 minutes)', () => {
	test("the check's next round, in the one poll context n8n keeps for the whole activation, reads with the new key: a run whose delivery was lost resumes in it", async () => {
		// n8n's poller makes one context per activation and runs every round in it
		const context = pollContext(trigger.env(), 'trigger');
		expect(await webhookTrigger.poll.call(context)).toBeNull();
		const [task] = await createAndWait('94', {});
		await changeKey(true);
		expect(await env.client.revokeApiKey(oldKey)).toBe(true);
		await env.client.setFaults([{ webhook: 'drop', count: 1 }]);
		await complete(task.id, 'alice@example.com');
		await env.client.waitForWebhookCalls(1);
		await env.client.clearRequests();
		await webhookTrigger.poll.call(context);
		await until('the resume', () => waiting.resumed.has('94'));
		expect(waiting.resumes.get('94')).toBe(1);
		const reads = (await env.client.requests()).filter((r) => r.path.endsWith('/tasks/completed'));
		// one read refused with the key the context had looked up, then every read with the new one
		expect(reads.map((r) => r.status)).toEqual([401, ...reads.slice(1).map(() => 200)]);
		expect(reads.length).toBeGreaterThan(1);
	});
});
