// What real deployments of the service do and the sandbox now imitates, in a real n8n
// with the packed package:
//   1. catch-up meets completions delivered at millisecond precision and listed at microseconds:
//      each completion still starts one execution, once;
//   2. the service's webhook routes find a queue by id alone: the trigger and Webhook > Set refuse a
//      queue of another organization before writing anything;
//   6. a trigger that cannot register fails its activation where n8n shows it, with the next step.
import {
	activate,
	countsSettle,
	createWorkflow,
	deleteWorkflow,
	executions,
	nodeOutput,
	queueLocator,
	runAction,
	setupE2E,
	triggerWorkflow,
	TYPES,
	uniq,
	waitFor,
	webhookTarget,
	type E2E,
} from './helpers';

const ALICE = 'alice@example.com';
const CAROL = 'carol@example.com';
const OTHER_ORG_QUEUE = 201;

let e: E2E;
beforeAll(async () => (e = await setupE2E()), 600_000);
afterAll(async () => await e?.stop());
beforeEach(async () => await e.client.reset());

/**
 * Why the activation of a workflow failed, as n8n reports it: n8n 2.x publishes in the background
 * and records each trigger's failure (what its editor shows in a toast); n8n 1.x answers the
 * activation itself with the error.
 */
async function activationFailure(workflowId: string): Promise<string> {
	const answer = await e.n8n.api.post(
		`/workflows/${workflowId}/activate`,
		{},
		{ validateStatus: () => true },
	);
	if (answer.status >= 400) return String((answer.data as { message?: string }).message);
	if (e.n8n.major === '1')
		throw new Error(`n8n 1.x activated the workflow (HTTP ${answer.status})`);
	return await waitFor(
		'the publication to fail',
		async () => {
			const res = await e.n8n.rest.get(`/workflows/${workflowId}/publication-status`);
			const status = (
				res.data as { data: { status: string; triggers: Array<{ errorMessage: string | null }> } }
			).data;
			return status.status === 'failed' ? String(status.triggers[0]?.errorMessage) : undefined;
		},
		90_000,
		500,
	);
}

function trigger(name: string, queueId: number, options: Record<string, unknown> = {}) {
	const webhookId = uniq(name);
	return {
		webhookId,
		workflow: triggerWorkflow(e, `e2e ${webhookId}`, {
			type: TYPES.trigger,
			webhookId,
			parameters: { event: 'taskCompleted', queue: queueLocator(queueId), options },
		}),
	};
}

async function emittedIds(workflowId: string): Promise<number[]> {
	return (await executions(e, workflowId))
		.sort((a, b) => Number(a.id) - Number(b.id))
		.flatMap((x) => nodeOutput(x, 'Trigger'))
		.map((task) => Number(task.id));
}

test('1. catch-up: deliveries at milliseconds, the list at microseconds: each completion emitted once', async () => {
	const { webhookId, workflow } = trigger('tq-precision', 101, { catchUp: true });
	const id = await createWorkflow(e, workflow);
	try {
		await e.client.createTasks(101, 10);
		await activate(e, id);
		await waitFor('the trigger registered', async () =>
			(await webhookTarget(e, 101)).includes(webhookId),
		);
		const completed: number[] = [];
		const completeOne = async () => {
			const done = await e.client.completeMany(101, 1, { by: ALICE });
			completed.push(...done.ids);
			await e.client.waitForWebhookCalls(completed.length);
		};
		await completeOne();
		await waitFor('the first execution', async () =>
			(await emittedIds(id)).length === 1 ? true : undefined,
		);
		// two deliveries lost (n8n unreachable for them), then three delivered
		await e.client.setFaults([{ webhook: 'drop', count: 2 }]);
		await completeOne();
		await completeOne();
		await e.client.clearFaults();
		for (let n = 0; n < 3; n++) {
			await completeOne();
			const expected = n === 0 ? 4 : 4 + n;
			await waitFor(
				`emitted ${expected}`,
				async () => ((await emittedIds(id)).length >= expected ? true : undefined),
				60_000,
			);
		}
		// a completion emitted twice would show up before the count stops changing
		await countsSettle(async () => (await emittedIds(id)).length, String);
		const calls = await e.client.webhookCalls();
		const delivered = calls.find((c) => c.status === 200);
		const listed = (await e.client.tasks(101)).find((t) => t.id === delivered?.taskId);
		// the two spellings of one instant
		expect(delivered?.body.completed_at).toMatch(/\.\d{3}Z$/);
		expect(listed?.completed_at).toMatch(/\.\d{6}Z$/);
		const emitted = await emittedIds(id);
		expect({
			emitted: emitted.length,
			distinct: new Set(emitted).size,
			executions: (await executions(e, id)).length,
		}).toEqual({
			emitted: 6,
			distinct: 6,
			executions: 4,
		});
		expect(emitted).toEqual(completed);
	} finally {
		await deleteWorkflow(e, id);
	}
});

describe("2. a queue of another organization (the service's webhook routes ignore the organization)", () => {
	const THEIRS = 'https://other-org.example.com/hook';

	test('the trigger refuses it: activation fails, their webhook is left as it was', async () => {
		await e.client.setWebhook(OTHER_ORG_QUEUE, THEIRS, { by: CAROL });
		const { workflow } = trigger('tq-tenancy', OTHER_ORG_QUEUE, { replaceExistingWebhook: true });
		const id = await createWorkflow(e, workflow);
		try {
			// n8n 2.x shows the message (which carries the description too), n8n 1.x the description
			const shown = await activationFailure(id);
			expect(shown).toContain(
				"A queue of another organization is not found either (the credential's Organization ID is 1).",
			);
			if (e.n8n.major !== '1') expect(shown).toMatch(/^Not found: could not get queue 201\. /);
			expect(await webhookTarget(e, OTHER_ORG_QUEUE)).toBe(THEIRS);
			const writes = (await e.client.requests()).filter(
				(r) => r.method === 'PUT' && r.path.includes('/201/'),
			);
			expect(writes).toEqual([]);
		} finally {
			await deleteWorkflow(e, id);
		}
	});

	test('Webhook > Set refuses it before writing', async () => {
		await e.client.setWebhook(OTHER_ORG_QUEUE, THEIRS, { by: CAROL });
		await expect(
			runAction(e, {
				resource: 'webhook',
				operation: 'set',
				queue: queueLocator(OTHER_ORG_QUEUE),
				url: 'https://mine.example.com/x',
			}),
		).rejects.toThrow(/Not found: could not get queue 201/);
		expect(await webhookTarget(e, OTHER_ORG_QUEUE)).toBe(THEIRS);
	});
});

describe('6. a trigger that cannot register: the activation fails with the next step in its message', () => {
	test('another address on the queue, Replace Existing Webhook off', async () => {
		await e.client.setWebhook(101, 'https://hooks.example.com/intake', { by: ALICE });
		const { workflow } = trigger('tq-foreign', 101);
		const id = await createWorkflow(e, workflow);
		try {
			expect(await activationFailure(id)).toBe(
				'Queue "Refund Requests" (101) already sends its completed tasks to another address (https://hooks.example.com/intake): turn on the trigger\'s option "Replace Existing Webhook" to take it over, or remove that address in the service, then activate again',
			);
			expect(await webhookTarget(e, 101)).toBe('https://hooks.example.com/intake');
		} finally {
			await deleteWorkflow(e, id);
		}
	});

	test('a self-hosted 1.0.x server on the standard paths (HTML 500)', async () => {
		await e.client.setLegacyDefect(true);
		const { workflow } = trigger('tq-legacy', 101);
		const id = await createWorkflow(e, workflow);
		try {
			const hint =
				'Self-hosted 1.0.x servers fail on this /queues route. Set "API Paths" to "Legacy (/workflows)" in the Task Queue API credential.';
			// n8n 2.x shows the message (which carries the hint too), n8n 1.x the description (the hint)
			expect(await activationFailure(id)).toBe(
				e.n8n.major === '1'
					? hint
					: `The service crashed (HTTP 500) trying to get queue 101. ${hint}`,
			);
		} finally {
			await e.client.setLegacyDefect(false);
			await deleteWorkflow(e, id);
		}
	});
});
