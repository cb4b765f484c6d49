// Webhook lifecycle of the Task Queue Trigger (checkExists / create / delete) through n8n-core's
// HookContext, against the sandbox over HTTP.
import type { INodeParameters } from 'n8n-workflow';

import {
	locator,
	startTriggerEnv,
	WebhookTriggerUnderTest,
	type TriggerTestEnv,
} from './trigger/env';

const QUEUE = 101;
const PERSON_TARGET = 'https://hooks.example.com/intake?token=person-set';

let env: TriggerTestEnv;

beforeAll(async () => {
	env = await startTriggerEnv();
});

afterAll(async () => {
	await env.close();
});

beforeEach(async () => {
	await env.client.reset();
});

function trigger(
	options: Record<string, unknown> = {},
	extra: { isTest?: boolean; webhookId?: string } = {},
) {
	return new WebhookTriggerUnderTest({
		credentials: env.credentials(),
		parameters: {
			event: 'taskCompleted',
			queue: locator(QUEUE),
			options: options as INodeParameters,
		},
		...extra,
	});
}

async function liveTarget(queueId = QUEUE): Promise<string> {
	const queue = (await env.client.getQueue(queueId)) as unknown as {
		webhook?: { target?: string };
	};
	return queue.webhook?.target ?? '';
}

async function webhookRequests() {
	return (await env.client.requests())
		.filter((r) => r.path.endsWith('/webhook') || /^\/orgs\/1\/queues\/\d+$/.test(r.path))
		.map((r) => ({ method: r.method, path: r.path, body: r.body, status: r.status }));
}

describe('registration', () => {
	it('registers the production URL plus a random secret, and checkExists then finds it', async () => {
		const t = trigger();
		expect(await t.checkExists()).toBe(false);
		expect(await t.create()).toBe(true);

		const secret = t.secret();
		expect(secret).toMatch(/^[0-9a-f]{64}$/);
		expect(await liveTarget()).toBe(`${t.url()}?secret=${secret}`);
		expect((await liveTarget()).length).toBeLessThanOrEqual(255);
		expect(t.state().registration).toEqual({
			queueId: QUEUE,
			url: t.url(),
			secret,
			previousTarget: null,
			test: false,
			listening: false,
		});
		expect(await t.checkExists()).toBe(true);
		// checkExists reads nothing while nothing is registered; create reads the queue through the
		// organization (its webhook route finds a queue by id alone), then its webhook
		expect(await webhookRequests()).toEqual([
			{ method: 'GET', path: '/orgs/1/queues/101', body: null, status: 200 },
			{ method: 'GET', path: '/orgs/1/queues/101/webhook', body: null, status: 200 },
			{
				method: 'PUT',
				path: '/orgs/1/queues/101/webhook',
				body: { target: `${t.url()}?secret=${secret}` },
				status: 201,
			},
			{ method: 'GET', path: '/orgs/1/queues/101/webhook', body: null, status: 200 },
		]);
	});

	it('two activations get different secrets', async () => {
		const a = trigger();
		await a.create();
		const first = a.secret();
		await a.delete();
		await a.create();
		expect(a.secret()).not.toBe(first);
	});

	it('checkExists is false when the live target lost our secret, or static data lost it, and create repairs it', async () => {
		const t = trigger();
		await t.activate();
		// Someone pasted our URL without the secret.
		await env.client.setWebhook(QUEUE, t.url());
		expect(await t.checkExists()).toBe(false);
		await t.activate();
		expect(await liveTarget()).toBe(`${t.url()}?secret=${t.secret()}`);

		// Static data lost (e.g. the workflow was imported again).
		t.db = {};
		expect(await t.checkExists()).toBe(false);
		await t.activate();
		expect(await liveTarget()).toBe(`${t.url()}?secret=${t.secret()}`);
		expect(await t.checkExists()).toBe(true);
	});

	it('checkExists asks the service and does not trust static data alone', async () => {
		const t = trigger();
		await t.activate();
		await env.client.setWebhook(QUEUE, '');
		expect(await t.checkExists()).toBe(false);
		await t.activate();
		expect(await liveTarget()).toBe(`${t.url()}?secret=${t.secret()}`);
	});

	it('re-activation with the registration live sends no write', async () => {
		const t = trigger();
		await t.activate();
		await env.client.clearRequests();
		await t.activate();
		expect(await webhookRequests()).toEqual([
			{ method: 'GET', path: '/orgs/1/queues/101/webhook', body: null, status: 200 },
		]);
	});

	it('a registration of this node under an old n8n address is replaced without the option', async () => {
		await env.client.setWebhook(
			QUEUE,
			`https://old-n8n.example.com/webhook/6f1c2b0e-4d7a-4e8b-9a51-0c3d2e1f4a5b/task-completed?secret=abc`,
		);
		const t = trigger();
		await t.activate();
		expect(await liveTarget()).toBe(`${t.url()}?secret=${t.secret()}`);
		expect((t.state().registration as { previousTarget: unknown }).previousTarget).toBeNull();
	});
});

describe("the activation's poll", () => {
	const completedReads = async () =>
		(await env.client.requests()).filter((r) => r.path.endsWith('/tasks/completed')).length;

	it("n8n 1.x polls after the webhook's create(): that poll reads nothing, the first round of the Poll Times checks", async () => {
		const t = trigger();
		await env.client.clearRequests();
		await t.activate();
		expect(await completedReads()).toBe(0);
		expect(await t.reconcile()).toBeNull();
		expect(await completedReads()).toBeGreaterThan(0);
	});

	it("n8n 2.x starts the poll beside create(), before the registration is written: that poll reads nothing, and the first round of the Poll Times still checks (issue 59: it waited for the second, a minute more for a lost answer)", async () => {
		const t = trigger();
		await env.client.clearRequests();
		const [polled] = await Promise.all([t.reconcile(), t.create()]);
		expect(polled).toBeNull();
		expect(t.state().registration).toBeDefined();
		expect(await completedReads()).toBe(0);
		expect(await t.reconcile()).toBeNull();
		expect(await completedReads()).toBeGreaterThan(0);
	});
});

describe('a target set by someone else', () => {
	it('refuses activation with a message naming the queue and how to proceed', async () => {
		await env.client.setWebhook(QUEUE, PERSON_TARGET);
		const t = trigger();
		expect(await t.checkExists()).toBe(false);
		const error = await t.create().catch((e: Error & { description?: string }) => e);
		expect(error).toBeInstanceOf(Error);
		expect((error as Error).message).toBe(
			'Queue "Refund Requests" (101) already sends its completed tasks to another address (https://hooks.example.com/intake): turn on the trigger\'s option "Replace Existing Webhook" to take it over, or remove that address in the service, then activate again',
		);
		expect((error as { description?: string }).description).toContain(
			'turn on the option "Replace Existing Webhook"',
		);
		expect((error as { description?: string }).description).toContain(
			"remove the other address on the queue's Connections screen",
		);
		// The other party's secret (query string) is not repeated.
		expect(JSON.stringify(error)).not.toContain('person-set');
		expect(await liveTarget()).toBe(PERSON_TARGET);
		expect(t.state().registration).toBeUndefined();
	});

	it("held by another workflow's Task Queue Trigger of this n8n: not refused, it listens through that trigger and leaves the queue's webhook as it is (trigger/listeners.test.ts: deliveries)", async () => {
		const t = trigger({ replaceExistingWebhook: true });
		const other = `${new URL(t.url()).origin}/webhook/0f0f0f0f-other-workflow/task-completed?secret=theirs`;
		await env.client.setWebhook(QUEUE, other);
		expect(await t.create()).toBe(true);
		expect(t.state().registration).toMatchObject({ queueId: QUEUE, listening: true });
		// even with Replace Existing Webhook: that option is for an address that is not this n8n's
		expect(await liveTarget()).toBe(other);
		// a listener joins again on each activation
		expect(await t.checkExists()).toBe(false);
		expect(await t.delete()).toBe(true);
		expect(await liveTarget()).toBe(other);
		expect(t.state().registration).toBeUndefined();
	});

	it('is replaced with Replace Existing Webhook and restored on delete', async () => {
		await env.client.setWebhook(QUEUE, PERSON_TARGET);
		const t = trigger({ replaceExistingWebhook: true });
		await t.activate();
		expect(await liveTarget()).toBe(`${t.url()}?secret=${t.secret()}`);
		expect((t.state().registration as { previousTarget: unknown }).previousTarget).toBe(
			PERSON_TARGET,
		);

		expect(await t.delete()).toBe(true);
		expect(await liveTarget()).toBe(PERSON_TARGET);
		expect(t.state().registration).toBeUndefined();
	});

	it('is not restored when Restore Previous Webhook is off', async () => {
		await env.client.setWebhook(QUEUE, PERSON_TARGET);
		const t = trigger({ replaceExistingWebhook: true, restorePreviousWebhook: false });
		await t.activate();
		await t.delete();
		expect(await liveTarget()).toBe('');
	});

	it('re-activation (delete + create) keeps the remembered target', async () => {
		await env.client.setWebhook(QUEUE, PERSON_TARGET);
		const t = trigger({ replaceExistingWebhook: true });
		await t.activate();
		await t.delete();
		await t.activate();
		await t.delete();
		expect(await liveTarget()).toBe(PERSON_TARGET);
	});
});

describe('delete', () => {
	it('removes our target; a second delete is harmless and writes nothing', async () => {
		const t = trigger();
		await t.activate();
		expect(await t.delete()).toBe(true);
		expect(await liveTarget()).toBe('');
		await env.client.clearRequests();
		expect(await t.delete()).toBe(true);
		expect(await webhookRequests()).toEqual([
			{ method: 'GET', path: '/orgs/1/queues/101/webhook', body: null, status: 200 },
		]);
	});

	it('leaves a target changed by someone else since activation', async () => {
		const t = trigger();
		await t.activate();
		await env.client.setWebhook(QUEUE, PERSON_TARGET);
		expect(await t.delete()).toBe(true);
		expect(await liveTarget()).toBe(PERSON_TARGET);
	});

	it('removes our URL even when static data lost the registration', async () => {
		const t = trigger();
		await t.activate();
		t.db = {};
		await t.delete();
		expect(await liveTarget()).toBe('');
	});

	it('throws a clear error when the service cannot be asked (no silent success)', async () => {
		const t = trigger();
		await t.activate();
		await env.client.setFaults([{ route: 'getWebhook', kind: 'html500' }]);
		const error = await t.delete().catch((e: Error) => e);
		expect((error as Error).message).toBe(
			"Could not check the webhook of queue 101 to remove this workflow's address",
		);
		expect(JSON.stringify(error)).not.toContain(env.sandbox.apiKey);
		await env.client.clearFaults();
		expect(await liveTarget()).toBe(`${t.url()}?secret=${t.secret()}`);
	});
});

describe('test registrations ("listen for test event")', () => {
	it('registers the test URL when the queue has no webhook, and the test delete removes it', async () => {
		const t = trigger({}, { isTest: true });
		await t.activate();
		expect(t.url()).toContain('/webhook-test/');
		expect(await liveTarget()).toBe(`${t.url()}?secret=${t.secret()}`);
		expect((t.state().registration as { test: boolean }).test).toBe(true);
		await t.delete();
		expect(await liveTarget()).toBe('');
	});

	it('never takes the production webhook away: refused with a message, production left in place', async () => {
		const production = trigger();
		await production.activate();
		const live = await liveTarget();

		const test = trigger({}, { isTest: true });
		expect(await test.checkExists()).toBe(false);
		const error = await test.create().catch((e: Error) => e);
		expect((error as Error).message).toBe(
			'Queue "Refund Requests" (101) already sends its completed tasks to this workflow\'s production webhook: while the workflow is active (published), each completed task starts a production execution (see its Executions); to listen for a test event here, deactivate it first',
		);
		expect((error as { description?: string }).description).toContain('Executions list');
		expect(await liveTarget()).toBe(live);
		// n8n still calls delete for the test registration when it gives up: it must not touch production.
		await test.delete();
		expect(await liveTarget()).toBe(live);
		expect(await production.checkExists()).toBe(true);
	});

	it('even with Replace Existing Webhook on, a test does not take the production webhook', async () => {
		const production = trigger();
		await production.activate();
		const test = trigger({ replaceExistingWebhook: true }, { isTest: true });
		await expect(test.create()).rejects.toThrow("this workflow's production webhook");
		expect(await production.checkExists()).toBe(true);
	});

	it('a test over a person-set target (Replace on) restores it on the test delete', async () => {
		await env.client.setWebhook(QUEUE, PERSON_TARGET);
		const test = trigger({ replaceExistingWebhook: true }, { isTest: true });
		await test.activate();
		await test.delete();
		expect(await liveTarget()).toBe(PERSON_TARGET);
	});

	it('activating production while a test registration is live takes over from the test', async () => {
		const test = trigger({}, { isTest: true });
		await test.activate();
		const production = trigger();
		await production.activate();
		expect(await liveTarget()).toBe(`${production.url()}?secret=${production.secret()}`);
		// The test registration ending later leaves production alone.
		await test.delete();
		expect(await production.checkExists()).toBe(true);
	});
});

describe('activation refuses what real deployments would get wrong, before writing anything', () => {
	it("a queue of another organization: not found, and its webhook is left alone (the service's webhook route ignores the organization)", async () => {
		await env.client.setWebhook(201, 'https://other-org.example.com/hook', {
			by: 'carol@example.com',
		});
		const t = new WebhookTriggerUnderTest({
			credentials: env.credentials(),
			parameters: {
				event: 'taskCompleted',
				queue: locator(201),
				options: { replaceExistingWebhook: true },
			},
		});
		await expect(t.create()).rejects.toMatchObject({
			name: 'NodeApiError',
			message: expect.stringMatching(/^Not found: could not get queue 201\. Check the queue ID/),
		});
		expect((await env.client.getQueue(201)).webhook).toEqual({
			target: 'https://other-org.example.com/hook',
		});
		expect(await webhookRequests()).toEqual([
			{ method: 'GET', path: '/orgs/1/queues/201', body: null, status: 404 },
		]);
		// checkExists reads nothing of a queue it never registered
		expect(await t.checkExists()).toBe(false);
		expect(await webhookRequests()).toHaveLength(1);
	});

	it.each([
		['a host without a dot', 'http://n8n:5678/webhook'],
		['a scheme the service refuses', 'ftp://n8n.example.com/webhook'],
	])('an n8n address the service would refuse ("Enter a valid URL."): %s', async (_label, base) => {
		const t = trigger();
		t.webhookBaseUrl = base;
		await expect(t.create()).rejects.toMatchObject({
			name: 'NodeOperationError',
			message: `The Task Queue Service would refuse this workflow's webhook URL (${t.url()}): set n8n's WEBHOOK_URL to an address whose host has a dot or is localhost, or use the Task Queue Poll Trigger`,
		});
		expect(await webhookRequests()).toEqual([]);
		expect(await liveTarget()).toBe('');
	});
});

describe('after a refused activation', () => {
	it('on a self-hosted 1.0.x server with the standard path noun, the clean-up n8n runs (and retries) says once, at info, that nothing was registered', async () => {
		const { Logger } = require(
			require.resolve('@n8n/backend-common', { paths: [require.resolve('n8n-core')] }),
		) as typeof import('@n8n/backend-common');
		const error = jest.spyOn(Logger.prototype, 'error');
		const info = jest.spyOn(Logger.prototype, 'info');
		try {
			await env.client.setLegacyDefect(true);
			const t = trigger();
			await expect(t.activate()).rejects.toThrow();
			error.mockClear();
			info.mockClear();
			// n8n removes what an activation may have left, and retries when that fails
			expect(await t.delete()).toBe(true);
			expect(await t.delete()).toBe(true);
			expect(error).not.toHaveBeenCalled();
			const lines = info.mock.calls.map(([message]) => String(message));
			expect(lines).toHaveLength(2);
			expect(lines[0]).toMatch(
				new RegExp(
					`^Task Queue Trigger: nothing registered on queue ${QUEUE} to remove \\(its webhook could not be read: `,
				),
			);
		} finally {
			error.mockRestore();
			info.mockRestore();
			await env.client.setLegacyDefect(false);
		}
	});
});

describe("the trigger's parameters (n8n's non-required-fields-in-collection rule)", () => {
	it('every top-level field is required, a notice, or a collection of options', () => {
		const { TaskQueueTrigger } =
			require('../../../nodes/TaskQueue/TaskQueueTrigger.node') as typeof import('../../../nodes/TaskQueue/TaskQueueTrigger.node');
		const loose = new TaskQueueTrigger().description.properties
			.filter(
				(p) => p.required !== true && !['notice', 'collection', 'fixedCollection'].includes(p.type),
			)
			.map((p) => p.name);
		expect(loose).toEqual([]);
	});

	it("Check for Lost Completions' button says what it adds, as n8n's own Poll Times does", () => {
		const { TaskQueueTrigger } =
			require('../../../nodes/TaskQueue/TaskQueueTrigger.node') as typeof import('../../../nodes/TaskQueue/TaskQueueTrigger.node');
		const checks = new TaskQueueTrigger().description.properties.find(
			(p) => p.name === 'pollTimes',
		);
		expect(checks).toMatchObject({
			placeholder: 'Add Check Time',
			typeOptions: { multipleValues: true, multipleValueButtonText: 'Add Check Time' },
		});
	});
});
