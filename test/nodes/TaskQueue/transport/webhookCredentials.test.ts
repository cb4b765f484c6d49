// A webhook call runs outside an execution, where n8n 2.41 builds an expression isolate for each
// credential lookup: the waiting node's webhook reuses a lookup of the last minute, and drops it when
// the service answers 401 (the key was rotated): that call reads the credential again and goes on with it.
import {
	callWaitingNode,
	queryOf,
	startWaitingRun,
	WaitingEndpoint,
} from '../../../helpers/waiting';
import {
	locator,
	startTriggerEnv,
	startWebhookServer,
	WebhookTriggerUnderTest,
	type TriggerTestEnv,
} from '../trigger/env';

import { forgetAsAfterRestart } from '../../../../nodes/TaskQueue/runtime/processMemory';
let env: TriggerTestEnv;
beforeAll(async () => (env = await startTriggerEnv()));
afterAll(async () => await env.close());

test('the waiting node looks its credential up once for many calls, and again after the service refused the key', async () => {
	await env.client.reset();
	const trigger = new WebhookTriggerUnderTest({
		credentials: env.credentials(),
		parameters: { event: 'taskCompleted', queue: locator(104), options: {} },
	});
	const waiting = new WaitingEndpoint();
	const server = await startWebhookServer(trigger, waiting);
	try {
		await trigger.activate();
		const credentials = env.credentials();
		const run = await startWaitingRun({
			credentials,
			executionId: '9100',
			input: [{ message: 'a' }, { message: 'b' }],
			waitingBaseUrl: server.waitingBaseUrl,
		});
		const tasks = (await env.client.tasks(104)).filter((t) =>
			String(t.data.resume_url).includes('/9100/'),
		);
		const query = queryOf(String(tasks[0].data.resume_url));
		const pending = { tasks: [{ id: tasks[0].id }] };
		// the trigger looked the same credential up to check the run's announcement: count from a
		// process that has looked nothing up
		forgetAsAfterRestart();
		credentials.decryptCount = 0;
		for (let i = 0; i < 3; i++)
			expect((await callWaitingNode(run, query, pending)).response.statusCode).toBe(202);
		expect(credentials.decryptCount).toBe(1);

		// the key is rotated in the service and in n8n's credential
		const seed = await env.client.state();
		seed.apiKeys[0].key = `tqs_rotated_${Date.now()}`;
		await env.client.reset(seed);
		credentials.data = { ...credentials.data, apiKey: seed.apiKeys[0].key };
		// the call still holding the old key is refused by the service once: it drops the lookup, looks
		// the credential up again and goes on with the new key (issue 59: a key change reaches every
		// reader at its next read)
		await env.client.clearRequests();
		expect((await callWaitingNode(run, query, pending)).response.statusCode).toBe(202);
		expect(credentials.decryptCount).toBe(2);
		const statuses = (await env.client.requests()).map((r) => r.status);
		expect(statuses[0]).toBe(401);
		expect(statuses.slice(1).every((status) => status === 200)).toBe(true);
		expect((await callWaitingNode(run, query, pending)).response.statusCode).toBe(202);
		expect(credentials.decryptCount).toBe(2);
	} finally {
		await server.close();
	}
});
