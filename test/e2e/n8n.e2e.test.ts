// End-to-end: this package, installed from `npm pack` into a real n8n (2.41.1 on node 24 by default,
// TQ_N8N_VERSION=1 for 1.123.81 on the system node), against the sandbox. One n8n for the whole file.
import { mkdirSync, readFileSync, writeFileSync } from 'fs';
import { createServer } from 'http';
import { join } from 'path';
import axios from 'axios';
import { chromium, type Browser } from 'playwright-core';

import { asDelivered } from '../../sandbox/time';
import {
	ensureCredential,
	isActivatable,
	loadExamples,
	prepareWorkflow,
} from '../../tools/n8n/provision';
import {
	activate,
	countsSettle,
	createWorkflow,
	CREDENTIAL_TYPE,
	deactivate,
	deleteWorkflow,
	executions,
	mockModel,
	nodeOutput,
	executionsOfTrigger,
	queueLocator,
	runAction,
	setupE2E,
	triggerWorkflow,
	TYPES,
	uniq,
	waitFor,
	webhookTarget,
	type E2E,
	type Execution,
} from './helpers';

const ALICE = 'alice@example.com';
const PREVIOUS_TARGET = 'https://hooks.example.com/set-by-a-person';

let e: E2E;

beforeAll(async () => {
	e = await setupE2E();
}, 600_000);

afterAll(async () => {
	// TQ_DUMP_LOG=file keeps n8n's log of this file's run
	if (process.env.TQ_DUMP_LOG && e) writeFileSync(process.env.TQ_DUMP_LOG, e.n8n.logs.text());
	await e?.stop();
});

afterEach(async () => {
	// keep n8n's log of a failed test at hand
	const state = expect.getState();
	if (state.assertionCalls !== state.numPassingAsserts && e) {
		console.log(`n8n log (last lines):\n${e.n8n.logs.text().split('\n').slice(-40).join('\n')}`);
	}
});

async function serviceGet(path: string) {
	const res = await e.service.get(path);
	expect(res.status).toBe(200);
	return res.data;
}

describe('the package in n8n', () => {
	/**
	 * A GET of n8n's type files, again when the connection drops before an answer (n8n just started,
	 * beside CI's other suites: "socket hang up", CI10 of stop 65); an answer is asserted as it is.
	 */
	async function getRetryingHangUps(url: string) {
		const headers = e.n8n.rest.defaults.headers.common as Record<string, string>;
		for (let attempt = 1; ; attempt++) {
			try {
				return await axios.get(url, { headers });
			} catch (error) {
				if (
					attempt >= 3 ||
					axios.isAxiosError(error) === false ||
					(error as { response?: unknown }).response
				)
					throw error;
				await new Promise((r) => setTimeout(r, 2000));
			}
		}
	}

	test('node types (with the AI tool variant) and the credential type are loaded', async () => {
		const nodes = await getRetryingHangUps(`${e.n8n.url}/types/nodes.json`);
		const names = (nodes.data as Array<{ name: string; version: number | number[] }>).map(
			(n) => n.name,
		);
		expect(names).toEqual(
			expect.arrayContaining([TYPES.action, TYPES.tool, TYPES.trigger, TYPES.poll]),
		);
		const creds = await getRetryingHangUps(`${e.n8n.url}/types/credentials.json`);
		const cred = (
			creds.data as Array<{
				name: string;
				displayName: string;
				properties: Array<{ name: string }>;
			}>
		).find((c) => c.name === CREDENTIAL_TYPE);
		expect(cred?.displayName).toBe('Task Queue API');
		expect(cred?.properties.map((p) => p.name)).toEqual(
			expect.arrayContaining(['baseUrl', 'apiKey', 'organizationId', 'apiPaths']),
		);
		expect(e.credentialId).not.toBe('');
	});

	test("the output schema of Create and Wait, as n8n's editor asks for it before a first run", async () => {
		// the editor's path: /schemas/<node type>/<version padded to x.y.z>/<resource>/<operation>.json
		const res = await axios.get(`${e.n8n.url}/schemas/${TYPES.action}/1.0.0/task/sendAndWait.json`);
		expect(res.status).toBe(200);
		expect(res.data).toEqual(
			JSON.parse(
				readFileSync(
					join(__dirname, '../../nodes/TaskQueue/__schema__/v1.0.0/task/sendAndWait.json'),
					'utf8',
				),
			),
		);
	});

	describe('credential test through n8n (POST /rest/credentials/test)', () => {
		const testWith = async (patch: Record<string, unknown>) => {
			const res = await e.n8n.rest.post('/credentials/test', {
				credentials: {
					id: e.credentialId,
					name: 'Task Queue sandbox',
					type: CREDENTIAL_TYPE,
					data: { ...e.credentialData, ...patch },
				},
			});
			return res.data.data as { status: 'OK' | 'Error'; message: string };
		};

		test('passes with the sandbox key', async () => {
			expect(await testWith({})).toEqual(expect.objectContaining({ status: 'OK' }));
		});

		test('fails with a wrong key (401), another organization (403), a wrong base URL (404)', async () => {
			// n8n 1.x does not apply a credential's response-code rules: it answers with its own
			// message per status ("Authorization failed - …", "Forbidden - …", "… could not be found")
			const v1 = e.n8n.major === '1';
			const badKey = await testWith({ apiKey: 'tqs_wrong_key' });
			expect(badKey.status).toBe('Error');
			expect(badKey.message).toMatch(v1 ? /Authorization failed/ : /401/);
			expect(badKey.message).not.toContain('tqs_wrong_key');
			const otherOrg = await testWith({ organizationId: 2 });
			expect(otherOrg.status).toBe('Error');
			expect(otherOrg.message).toMatch(v1 ? /Forbidden/ : /403/);
			const badBase = await testWith({ baseUrl: `${e.sandbox.baseUrl}/nothing-here` });
			expect(badBase.status).toBe('Error');
			expect(badBase.message).toMatch(v1 ? /could not be found/ : /404/);
		});
	});
});

describe('every action operation in a workflow', () => {
	beforeAll(async () => {
		await e.client.reset();
	});

	test('task: create (fields defined below) returns the task the sandbox holds', async () => {
		const { items } = await runAction(
			e,
			{
				resource: 'task',
				operation: 'create',
				queue: queueLocator(101, 'list'),
				taskData: {
					mappingMode: 'defineBelow',
					value: {
						customer_message: '={{ $json.body.message }}',
						order_total: '={{ $json.body.total }}',
						receipt: 'https://example.com/receipts/e2e.png',
					},
					matchingColumns: [],
					schema: [
						{
							id: 'customer_message',
							displayName: 'Customer message',
							required: false,
							defaultMatch: false,
							display: true,
							type: 'string',
							canBeUsedToMatch: false,
						},
						{
							id: 'order_total',
							displayName: 'Order total',
							required: false,
							defaultMatch: false,
							display: true,
							type: 'number',
							canBeUsedToMatch: false,
						},
						{
							id: 'receipt',
							displayName: 'Receipt',
							required: false,
							defaultMatch: false,
							display: true,
							type: 'string',
							canBeUsedToMatch: false,
						},
					],
				},
				options: {},
			},
			{ body: { message: 'Broken on arrival (e2e)', total: 19.5 } },
		);
		expect(items).toHaveLength(1);
		const held = (await e.client.tasks(101)).find((t) => t.id === items[0].id);
		expect(items[0]).toEqual(held);
		expect(held).toEqual(
			expect.objectContaining({
				status: 'new',
				source: 'api',
				queue_id: 101,
				data: {
					customer_message: 'Broken on arrival (e2e)',
					order_total: 19.5,
					receipt: 'https://example.com/receipts/e2e.png',
					decision: null,
					note: null,
				},
			}),
		);
	});

	test('task: create from input items (auto-map) makes one task per item', async () => {
		const { items } = await runAction(
			e,
			{
				resource: 'task',
				operation: 'create',
				queue: queueLocator(102, 'id'),
				taskData: { mappingMode: 'autoMapInputData', value: {}, matchingColumns: [], schema: [] },
				options: { concurrency: 2 },
			},
			{
				code: "return [{ json: { title: 'E2E one', word_count: 11 } }, { json: { title: 'E2E two', word_count: 22 } }];",
			},
		);
		const held = await e.client.tasks(102);
		expect(items).toEqual(items.map((i) => held.find((t) => t.id === i.id)));
		expect(items.map((i) => (i.data as Record<string, unknown>).title)).toEqual([
			'E2E one',
			'E2E two',
		]);
		expect(items.map((i) => (i.data as Record<string, unknown>).word_count)).toEqual([11, 22]);
	});

	test('task: get completed (all, and a limit) returns what the sandbox lists', async () => {
		const listed = (await serviceGet('/queues/101/tasks/completed?limit=1000')).tasks as Array<{
			id: number;
		}>;
		expect(listed.length).toBeGreaterThan(1);
		const all = await runAction(e, {
			resource: 'task',
			operation: 'getCompleted',
			queue: queueLocator(101),
			returnAll: true,
			filters: {},
		});
		const byId = (a: Array<{ id: unknown }>) => [...a].sort((x, y) => Number(x.id) - Number(y.id));
		expect(byId(all.items as Array<{ id: unknown }>)).toEqual(byId(listed));
		const limited = await runAction(e, {
			resource: 'task',
			operation: 'getCompleted',
			queue: queueLocator(101),
			returnAll: false,
			limit: 2,
			filters: {},
		});
		expect(limited.items).toHaveLength(2);
		expect(limited.items).toEqual(listed.slice(0, 2));
	});

	test('queue: get (id and URL locators) returns the queue the sandbox holds', async () => {
		const held = await serviceGet('/queues/101');
		const byId = await runAction(e, {
			resource: 'queue',
			operation: 'get',
			queue: queueLocator(101, 'id'),
		});
		expect(byId.items).toEqual([held]);
		const byUrl = await runAction(e, {
			resource: 'queue',
			operation: 'get',
			queue: queueLocator(101, 'url', e.sandbox.baseUrl),
		});
		expect(byUrl.items).toEqual([held]);
	});

	test("queue: get many (all, and a limit) returns the organization's queues", async () => {
		const held = (await serviceGet('/queues')) as unknown[];
		const all = await runAction(e, { resource: 'queue', operation: 'getMany', returnAll: true });
		expect(all.items).toEqual(held);
		const one = await runAction(e, {
			resource: 'queue',
			operation: 'getMany',
			returnAll: false,
			limit: 1,
		});
		expect(one.items).toEqual(held.slice(0, 1));
	});

	test('queue: flush deletes the pending tasks and keeps the completed ones', async () => {
		await e.client.createTasks(102, 3);
		const completedBefore = (await e.client.tasks(102)).filter((t) => t.status === 'completed');
		const { items } = await runAction(e, {
			resource: 'queue',
			operation: 'flush',
			queue: queueLocator(102),
		});
		expect(items).toEqual([{ queueId: 102, flushed: true }]);
		const after = await e.client.tasks(102);
		expect(after.filter((t) => t.status !== 'completed')).toEqual([]);
		expect(after).toEqual(completedBefore);
	});

	test('webhook: set, get, remove', async () => {
		const target = 'https://hooks.example.com/e2e-set';
		const set = await runAction(e, {
			resource: 'webhook',
			operation: 'set',
			queue: queueLocator(103),
			url: target,
		});
		expect(set.items).toEqual([{ queueId: 103, target }]);
		expect(await webhookTarget(e, 103)).toBe(target);
		const got = await runAction(e, {
			resource: 'webhook',
			operation: 'get',
			queue: queueLocator(103),
		});
		expect(got.items).toEqual([{ queueId: 103, target, active: true }]);
		const removed = await runAction(e, {
			resource: 'webhook',
			operation: 'remove',
			queue: queueLocator(103),
		});
		expect(removed.items).toEqual([{ queueId: 103, target: null, removed: true }]);
		expect(await webhookTarget(e, 103)).toBe('');
		const none = await runAction(e, {
			resource: 'webhook',
			operation: 'get',
			queue: queueLocator(103),
		});
		expect(none.items).toEqual([{ queueId: 103, target: null, active: false }]);
	});
});

describe('secrets stay where they belong', () => {
	test("Webhook > Set and Get show the trigger's secret as hidden, in the output and in what n8n stores", async () => {
		const secret = ['tq', 'e2e', 'trigger', 'secret', Date.now()].join('_');
		const target = `https://hooks.example.com/webhook/abc/task-completed?secret=${secret}`;
		const set = await runAction(e, {
			resource: 'webhook',
			operation: 'set',
			queue: queueLocator(103),
			url: target,
		});
		expect(set.items).toEqual([
			{
				queueId: 103,
				target: 'https://hooks.example.com/webhook/abc/task-completed?secret=(hidden)',
			},
		]);
		const got = await runAction(e, {
			resource: 'webhook',
			operation: 'get',
			queue: queueLocator(103),
		});
		expect(got.items).toEqual([
			{
				queueId: 103,
				target: 'https://hooks.example.com/webhook/abc/task-completed?secret=(hidden)',
				active: true,
			},
		]);
		// what the node put out, as n8n stored it (the URL the user typed is in the workflow's parameters)
		expect(
			JSON.stringify(
				[set.execution, got.execution].map((x) => x.data?.resultData.runData['Task Queue']),
			),
		).not.toContain(secret);
		expect(await webhookTarget(e, 103)).toBe(target);
		await runAction(e, { resource: 'webhook', operation: 'remove', queue: queueLocator(103) });
	});

	test('a Base URL that redirects elsewhere: the other origin receives nothing, the error says where it pointed', async () => {
		const received: Array<string | undefined> = [];
		const other = createServer((req, res) => {
			received.push(req.headers.authorization);
			res.end('[]');
		});
		await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
		const otherUrl = `http://127.0.0.1:${(other.address() as { port: number }).port}`;
		const redirecting = createServer((req, res) => {
			res.writeHead(302, { location: `${otherUrl}${req.url ?? ''}` });
			res.end();
		});
		await new Promise<void>((resolve) => redirecting.listen(0, '127.0.0.1', resolve));
		const redirectingUrl = `http://127.0.0.1:${(redirecting.address() as { port: number }).port}`;
		try {
			const credentialId = await ensureCredential(
				e.n8n,
				{ baseUrl: redirectingUrl, apiKey: e.sandbox.apiKey, organizationId: 1 },
				'redirecting',
			);
			await expect(
				runAction(
					e,
					{ resource: 'queue', operation: 'getMany', returnAll: true },
					{ credentialId },
				),
			).rejects.toThrow(
				`The service redirected the request to ${otherUrl} (HTTP 302) instead of answering`,
			);
			expect(received).toEqual([]);
		} finally {
			await new Promise((resolve) => redirecting.close(resolve));
			await new Promise((resolve) => other.close(resolve));
		}
	});
});

/** A person takes the next task of the queue on the sandbox page and completes it; returns its id. */
async function completeOnPage(
	browser: Browser,
	queueId: number,
	fill: Record<string, string>,
): Promise<number> {
	const page = await browser.newPage();
	try {
		await page.goto(`${e.sandbox.pageUrl}queues/${queueId}`);
		await page.getByTestId('user-select').selectOption(ALICE);
		await page.getByTestId('take-next').click();
		await page.getByTestId('task-form').waitFor();
		const heading = await page
			.locator('h2', { hasText: /^Task #\d+$/ })
			.first()
			.textContent();
		const taskId = Number(/#(\d+)/.exec(heading ?? '')?.[1]);
		for (const [block, value] of Object.entries(fill)) {
			const field = page.getByTestId(`field-${block}`);
			const tag = await field.evaluate((el) => el.tagName);
			if (tag === 'SELECT') await field.selectOption(value);
			else await field.fill(value);
		}
		await page.getByTestId('complete-task').click();
		await page.getByTestId('completed-message').waitFor();
		return taskId;
	} finally {
		await page.close();
	}
}

describe('webhook trigger', () => {
	let browser: Browser;
	let workflowId = '';
	const webhookId = uniq('tq-trigger');

	beforeAll(async () => {
		await e.client.reset();
		browser = await chromium.launch({
			executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
			args: ['--no-sandbox'],
		});
	});

	afterAll(async () => {
		await browser?.close();
		if (workflowId) await deleteWorkflow(e, workflowId);
	});

	const ourTarget = () => `${e.n8n.webhookBase}/${webhookId}/task-completed?secret=`;

	test('activating registers the webhook; a person completes a task on the page; the execution holds it; deactivating restores the previous target', async () => {
		await e.client.setWebhook(101, PREVIOUS_TARGET, { by: ALICE });
		workflowId = await createWorkflow(
			e,
			triggerWorkflow(e, `e2e trigger ${webhookId}`, {
				type: TYPES.trigger,
				webhookId,
				parameters: {
					event: 'taskCompleted',
					queue: queueLocator(101, 'list'),
					options: { replaceExistingWebhook: true },
				},
			}),
		);
		await activate(e, workflowId);
		const target = await waitFor('the trigger registered in the sandbox', async () => {
			const t = await webhookTarget(e, 101);
			return t.startsWith(ourTarget()) ? t : undefined;
		});
		expect(target).toMatch(/\?secret=[^&]{16,}$/);

		const taskId = await completeOnPage(browser, 101, {
			decision: 'approve',
			note: 'Looks right (e2e)',
		});
		const [execution] = await waitFor('the trigger execution', async () => {
			const xs = await executions(e, workflowId);
			return xs.length ? xs : undefined;
		});
		expect(execution.status).toBe('success');
		const held = (await e.client.tasks(101)).find((t) => t.id === taskId);
		expect(held).toEqual(
			expect.objectContaining({
				status: 'completed',
				completed_by: ALICE,
				data: expect.objectContaining({ decision: 'approve', note: 'Looks right (e2e)' }),
			}),
		);
		// delivered as real deployments send it: the same instants at millisecond precision
		expect(nodeOutput(execution, 'Trigger')).toEqual([asDelivered(held!)]);
		const [call] = (await e.client.webhookCalls()).filter((c) => c.taskId === taskId);
		expect(call.status).toBe(200);

		await deactivate(e, workflowId);
		await waitFor(
			'the previous target restored',
			async () => (await webhookTarget(e, 101)) === PREVIOUS_TARGET,
		);
	});

	test('restarting n8n keeps exactly one registration, and deactivating still restores the previous target', async () => {
		await activate(e, workflowId);
		const before = await waitFor('registered', async () => {
			const t = await webhookTarget(e, 101);
			return t.startsWith(ourTarget()) ? t : undefined;
		});
		await e.n8n.restart();
		// n8n re-activates its workflows just after it answers (2.x finds the webhook already stored and
		// does not call the trigger again; 1.x asks it whether the registration still exists): the
		// target must be the same one once it stops changing
		const after = await countsSettle(async () => await webhookTarget(e, 101), String, {
			quietMs: 4_000,
		});
		expect(after.startsWith(ourTarget())).toBe(true);
		expect(after).toBe(before);

		const seen = (await executions(e, workflowId)).length;
		await e.client.clearWebhookCalls();
		await e.client.complete(101, undefined, {
			by: ALICE,
			data: { decision: 'reject', note: 'After the restart' },
		});
		const calls = await e.client.waitForWebhookCalls(1);
		// one call, to the one registration: a second would show up before the list stops changing
		const settled = await countsSettle(async () =>
			(await e.client.webhookCalls()).map((c) => [c.url, c.status]),
		);
		expect(settled).toEqual([[after, 200]]);
		const xs = await waitFor('one more execution', async () => {
			const list = await executions(e, workflowId);
			return list.length === seen + 1 ? list : undefined;
		});
		expect(nodeOutput(xs[0], 'Trigger')).toEqual([calls[0].body]);

		await deactivate(e, workflowId);
		await waitFor(
			'the previous target restored',
			async () => (await webhookTarget(e, 101)) === PREVIOUS_TARGET,
		);
	});

	test("a person's note, or a read-only field overwritten, shaped like a waiting address of this n8n (no such execution) is an ordinary completion: it starts the workflow", async () => {
		await activate(e, workflowId);
		await waitFor('registered', async () =>
			(await webhookTarget(e, 101)).startsWith(ourTarget()) ? true : undefined,
		);
		const seen = (await executions(e, workflowId)).length;
		const lookalike = `${e.n8n.url}/webhook-waiting/999999/a-node?tq=0-1-1&q=101&t=1790000000&signature=${'a'.repeat(64)}`;
		const [taskId] = (await e.client.createTasks(101, 1)).ids;
		await e.client.complete(101, taskId, {
			by: ALICE,
			data: { decision: 'approve', note: lookalike },
		});
		const xs = await waitFor('the execution of the completion', async () => {
			const list = await executions(e, workflowId);
			return list.length === seen + 1 ? list : undefined;
		});
		expect(nodeOutput(xs[0], 'Trigger')).toEqual([
			expect.objectContaining({ id: taskId, data: expect.objectContaining({ note: lookalike }) }),
		]);
		// the same address written over the READ-ONLY customer_message when submitting (the service
		// lets a submit overwrite it): n8n answers 404 for no such execution, and it is emitted too
		const [readOnlyTask] = (await e.client.createTasks(101, 1)).ids;
		await e.client.complete(101, readOnlyTask, {
			by: ALICE,
			data: { decision: 'approve', customer_message: lookalike },
		});
		const after = await waitFor('the execution of the read-only case', async () => {
			const list = await executions(e, workflowId);
			return list.length === seen + 2 ? list : undefined;
		});
		expect(nodeOutput(after[0], 'Trigger')).toEqual([
			expect.objectContaining({
				id: readOnlyTask,
				data: expect.objectContaining({ customer_message: lookalike }),
			}),
		]);

		await deactivate(e, workflowId);
		await waitFor(
			'the previous target restored',
			async () => (await webhookTarget(e, 101)) === PREVIOUS_TARGET,
		);
	});
});

describe('several Task Queue Triggers of this n8n on one queue', () => {
	// queue mode as docs/operating.md asks: each webhook address routed to one webhook process (a
	// listener's reads in two processes, round-robin, can each emit a completion: measured there)
	beforeAll(async () => await e.queueMode?.setRouting('by-path'));
	afterAll(async () => await e.queueMode?.setRouting('round-robin'));
	test('the second workflow listens through the first, reading the queue itself: each emits every completion once, across a restart; deactivating the first hands the queue to the second', async () => {
		const queue = await e.client.createQueue({
			name: uniq('Shared queue'),
			blocks: [
				{ id: 'question', name: 'Question', type: 'text', text: { read_only: true } },
				{ id: 'answer', name: 'Answer', type: 'text', text: {} },
			],
		});
		const ids = { first: uniq('tq-first'), second: uniq('tq-second') };
		const workflow = async (name: string, webhookId: string) =>
			await createWorkflow(
				e,
				triggerWorkflow(e, `e2e ${name} ${webhookId}`, {
					type: TYPES.trigger,
					webhookId,
					parameters: { event: 'taskCompleted', queue: queueLocator(queue.id), options: {} },
				}),
			);
		const first = await workflow('first listener', ids.first);
		const second = await workflow('second listener', ids.second);
		const heldBy = (webhookId: string) => async () =>
			(await webhookTarget(e, queue.id)).includes(`/${webhookId}/task-completed?secret=`)
				? true
				: undefined;
		await activate(e, first);
		await waitFor('the first trigger holds the queue', heldBy(ids.first));
		await activate(e, second);
		// the second joins the first as a listener (in the holder's static data); the queue still
		// points at the first
		await waitFor('the second trigger listens', async () =>
			JSON.stringify((await e.n8n.api.get(`/workflows/${first}`)).data.staticData).includes(
				ids.second,
			)
				? true
				: undefined,
		);
		expect(await webhookTarget(e, queue.id)).toContain(`/${ids.first}/`);
		// a listener emits what one read found in one execution: every item counts
		const received = async (workflowId: string) =>
			(await executionsOfTrigger(e, workflowId)).flatMap((x) =>
				nodeOutput(x, 'Trigger').map((item) => item.id as number),
			);
		const completeSome = async (count: number) => {
			const { ids: tasks } = await e.client.createTasks(queue.id, count);
			for (const id of tasks)
				await e.client.complete(queue.id, id, { by: ALICE, data: { answer: 'yes' } });
			return tasks;
		};
		const both = async (expected: number[], what: string) => {
			for (const workflowId of [first, second])
				await waitFor(`${what}: ${expected.length} executions of ${workflowId}`, async () =>
					(await received(workflowId)).length === expected.length ? true : undefined,
				);
			expect((await received(first)).sort()).toEqual([...expected].sort());
			expect((await received(second)).sort()).toEqual([...expected].sort());
		};
		const batch1 = await completeSome(5);
		await both(batch1, 'five completions');
		// what each listener waits: from the completion to its execution's start
		const completedAt = new Map(
			(await e.client.tasks(queue.id)).map((t) => [t.id, Date.parse(String(t.completed_at))]),
		);
		const latency = async (workflowId: string) => {
			const xs = await executions(e, workflowId);
			const ms = xs
				.flatMap((x) =>
					nodeOutput(x, 'Trigger').map(
						(item) => Date.parse(x.startedAt) - (completedAt.get(item.id as number) ?? 0),
					),
				)
				.sort((a, b) => a - b);
			return ms[Math.floor(ms.length / 2)];
		};
		const figure = `n8n ${process.env.TQ_N8N_VERSION ?? '2'}${process.env.TQ_QUEUE_MODE ? ' queue mode' : ''}: completion to execution start, median of 5: the trigger holding the queue ${await latency(first)} ms, the one listening through it ${await latency(second)} ms`;
		mkdirSync(join(__dirname, '../../.tmp'), { recursive: true });
		writeFileSync(
			join(
				__dirname,
				`../../.tmp/listeners-latency${process.env.TQ_QUEUE_MODE ? '.queue-mode' : ''}.n8n${process.env.TQ_N8N_VERSION ?? '2'}.txt`,
			),
			`${figure}\n`,
		);
		process.stdout.write(`${figure}\n`);

		const beforeRestart = e.n8n.logs.mark();
		await e.n8n.restart();
		// n8n 1.x activates the workflows again one after the other after it answers, each asking its
		// trigger whether the registration still exists: a deactivation before the second's turn came
		// (the hand-over below) left it listening to a holder that had gone, and the last two
		// completions unemitted (CI2 of stop 59 and CI6 of stop 64, whose log showed the second's
		// activation after the hand-over). The test goes on once n8n says both are active.
		if (process.env.TQ_N8N_VERSION === '1')
			await waitFor('n8n 1.x activated both workflows again', async () => {
				const said = e.n8n.logs.since(beforeRestart);
				return [first, second].every((id) => said.includes(`(ID: ${id})`)) ? true : undefined;
			});
		await waitFor('the first trigger still holds the queue', heldBy(ids.first), 60_000);
		// the service delivers once: complete only once both triggers answer again (queue mode: the
		// webhook processes come up after the main)
		await waitFor(
			'both triggers answer again',
			async () => {
				const statuses = await Promise.all(
					[ids.first, ids.second].map(
						async (id) =>
							(
								await axios.post(
									`${e.n8n.webhookBase}/${id}/task-completed`,
									{},
									{
										validateStatus: () => true,
									},
								)
							).status,
					),
				);
				return statuses.every((status) => status === 401) ? true : undefined;
			},
			60_000,
		);
		const batch2 = await completeSome(2);
		await both([...batch1, ...batch2], 'after a restart');

		await deactivate(e, first);
		await waitFor('the queue handed to the second trigger', heldBy(ids.second), 60_000);
		const batch3 = await completeSome(2);
		await waitFor('the second trigger receives on', async () => {
			const got = await received(second);
			if (got.length === 9) return true;
			// said when the wait times out (CI2 of stop 59, n8n 1.x: not reproduced alone)
			throw new Error(
				`the second emitted ${got.length} (${batch3.filter((id) => !got.includes(id)).length} of the last 2 missing); the queue's target: ${(await webhookTarget(e, queue.id)).replace(/secret=[^&]*/, 'secret=…')}`,
			);
		});
		expect((await received(first)).length).toBe(7);

		await deactivate(e, second);
		await waitFor('nothing holds the queue', async () =>
			(await webhookTarget(e, queue.id)) === '' ? true : undefined,
		);
		expect(batch3).toHaveLength(2);
		await deleteWorkflow(e, first);
		await deleteWorkflow(e, second);
	}, 600_000);
});

describe("the trigger's door in real n8n, against a caller who has the holder's secret", () => {
	// queue mode: each webhook address routed to one process, as above
	beforeAll(async () => await e.queueMode?.setRouting('by-path'));
	afterAll(async () => await e.queueMode?.setRouting('round-robin'));
	test('no join or nudge steers completions: no self-calls, no other workflow or host receives a task, no made-up task is emitted, the restored target is one the service held', async () => {
		let outside = 0;
		const collector = createServer((_req, res) => {
			outside++;
			res.end('{}');
		});
		await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
		const collectorUrl = `http://127.0.0.1:${(collector.address() as { port: number }).port}/stolen`;
		const queue = await e.client.createQueue({
			name: uniq('Door queue'),
			blocks: [{ id: 'answer', name: 'Answer', type: 'text', text: {} }],
		});
		await e.client.setWebhook(queue.id, PREVIOUS_TARGET);
		const ids = { first: uniq('tq-door-a'), second: uniq('tq-door-b'), other: uniq('tq-door-c') };
		const workflow = async (webhookId: string, options: Record<string, unknown> = {}) =>
			await createWorkflow(
				e,
				triggerWorkflow(e, `e2e door ${webhookId}`, {
					type: TYPES.trigger,
					webhookId,
					parameters: { event: 'taskCompleted', queue: queueLocator(queue.id), options },
				}),
			);
		const first = await workflow(ids.first, { replaceExistingWebhook: true });
		const second = await workflow(ids.second);
		// another workflow's Webhook node at a trigger-like path, answering with a redirect off n8n
		const other = await createWorkflow(e, {
			name: `e2e door other ${ids.other}`,
			nodes: [
				{
					name: 'Hook',
					type: 'n8n-nodes-base.webhook',
					typeVersion: 2,
					position: [0, 0],
					webhookId: ids.other,
					parameters: {
						httpMethod: 'POST',
						path: `${ids.other}/task-completed`,
						responseMode: 'responseNode',
						options: {},
					},
				},
				{
					name: 'Respond',
					type: 'n8n-nodes-base.respondToWebhook',
					typeVersion: 1.1,
					position: [220, 0],
					parameters: { respondWith: 'redirect', redirectURL: collectorUrl, options: {} },
				},
			],
			connections: { Hook: { main: [[{ node: 'Respond', type: 'main', index: 0 }]] } },
		});
		try {
			await activate(e, other);
			await activate(e, first);
			const holderTarget = async () =>
				(await webhookTarget(e, queue.id)).includes(`/${ids.first}/task-completed?secret=`)
					? await webhookTarget(e, queue.id)
					: undefined;
			const held = await waitFor('the first trigger holds the queue', holderTarget);
			await activate(e, second);
			const staticData = async (id: string) =>
				(await e.n8n.api.get(`/workflows/${id}`)).data.staticData as Record<string, unknown>;
			await waitFor('the second trigger listens through the first', async () =>
				JSON.stringify(await staticData(first)).includes(`/${ids.second}/task-completed`)
					? true
					: undefined,
			);
			const post = async (body: unknown) =>
				(await axios.post(held, body, { validateStatus: () => true, maxRedirects: 0 })).status;
			const origin = new URL(held).origin;
			const holderUrl = held.split('?')[0];
			const secondUrl = holderUrl.replace(ids.first, ids.second);
			expect(await post({ taskQueueListener: { join: holderUrl } })).toBe(403);
			expect(
				await post({
					taskQueueListener: { join: `${origin}/webhook/${ids.other}/task-completed` },
				}),
			).toBe(403);
			expect(await post({ taskQueueListener: { hold: [], previous: collectorUrl } })).toBe(400);
			expect(
				await post({ taskQueueListener: { leave: { url: secondUrl, token: 'e'.repeat(64) } } }),
			).toBe(400);
			for (let i = 0; i < 21; i++)
				expect(
					await post({
						taskQueueListener: { join: `${origin}/webhook/junk-${i}-${ids.other}/task-completed` },
					}),
				).toBe(403);
			// the holder keeps no listener's secret, only its address
			const secondSecret = (
				(await staticData(second))['node:Trigger'] as { registration: { secret: string } }
			).registration.secret;
			expect(JSON.stringify(await staticData(first))).not.toContain(secondSecret);
			expect(
				((await staticData(first))['node:Trigger'] as { listeners: unknown }).listeners,
			).toEqual([secondUrl]);
			// nudges from anyone, carrying a made-up task: the listener emits only what the service lists
			const forged = {
				id: 999_999,
				status: 'completed',
				queue_id: queue.id,
				data: { answer: 'forged' },
			};
			const nudges = await Promise.all(
				Array.from(
					{ length: 10 },
					async (_, i) =>
						(
							await axios.post(
								secondUrl,
								{ taskQueueNudge: { look: i % 2 === 0, task: forged }, ...forged },
								{ validateStatus: () => true, maxRedirects: 0 },
							)
						).status,
				),
			);
			expect(nudges.every((status) => status === 200)).toBe(true);

			const received = async (workflowId: string) =>
				(await executions(e, workflowId)).flatMap((x) =>
					nodeOutput(x, 'Trigger').map((item) => item.id as number),
				);
			const { ids: tasks } = await e.client.createTasks(queue.id, 2);
			for (const id of tasks)
				await e.client.complete(queue.id, id, { by: ALICE, data: { answer: 'y' } });
			for (const workflowId of [first, second])
				await waitFor(`two completions emitted by ${workflowId}`, async () =>
					(await received(workflowId)).length === 2 ? true : undefined,
				);
			// a completion emitted twice would show up before the counts stop changing
			await countsSettle(async () => [
				(await received(first)).length,
				(await received(second)).length,
			]);
			expect((await received(first)).sort()).toEqual([...tasks].sort());
			expect((await received(second)).sort()).toEqual([...tasks].sort());
			// the other workflow ran for the one nudge of the join it was asked for, never with a task
			const otherRuns = await executions(e, other);
			expect(JSON.stringify(otherRuns)).not.toContain('"status":"completed"');
			expect(outside).toBe(0);

			await deactivate(e, first);
			await waitFor(
				'the queue handed to the second trigger',
				async () =>
					(await webhookTarget(e, queue.id)).includes(`/${ids.second}/task-completed?secret=`)
						? true
						: undefined,
				60_000,
			);
			await deactivate(e, second);
			await waitFor('the target set by a person put back', async () =>
				(await webhookTarget(e, queue.id)) === PREVIOUS_TARGET ? true : undefined,
			);
			expect(outside).toBe(0);
		} finally {
			await deleteWorkflow(e, first);
			await deleteWorkflow(e, second);
			await deleteWorkflow(e, other);
			await new Promise((resolve) => collector.close(resolve));
		}
	}, 300_000);
});

describe('around activation', () => {
	// 25,000 in n8n 2.x in one process; 2,500 in 1.x and queue mode, where the same reads run (the
	// package's code is the same): test/reliability/backlog-readers.test.ts keeps 25,000 in n8n-core
	const BUSY = process.env.TQ_N8N_VERSION === '1' || process.env.TQ_QUEUE_MODE ? 2_500 : 25_000;
	test(`on a busy queue (${BUSY.toLocaleString('en')} completions today), a completion made while n8n activates the trigger is delivered and emitted: the first check waits for the next round`, async () => {
		const queue = await e.client.createQueue({
			name: uniq('Busy queue'),
			blocks: [{ id: 'answer', name: 'Answer', type: 'text', text: {} }],
		});
		await e.client.clearWebhookCalls();
		await e.client.createTasks(queue.id, BUSY + 1);
		await e.client.completeMany(queue.id, BUSY, { by: ALICE });
		const webhookId = uniq('tq-busy');
		const workflowId = await createWorkflow(
			e,
			triggerWorkflow(e, `e2e busy ${webhookId}`, {
				type: TYPES.trigger,
				webhookId,
				parameters: { event: 'taskCompleted', queue: queueLocator(queue.id), options: {} },
			}),
		);
		try {
			const activated = Date.now();
			await activate(e, workflowId);
			// the moment the service targets the trigger, a person completes the last task
			await waitFor(
				'the queue points at the trigger',
				async () => ((await webhookTarget(e, queue.id)).includes(webhookId) ? true : undefined),
				60_000,
				25,
			);
			const completed = await e.client.completeMany(queue.id, 1, { by: ALICE });
			process.stdout.write(`completion ${Date.now() - activated} ms after the activation call\n`);
			const calls = await e.client.waitForWebhookCalls(1);
			expect(calls.map((c) => [c.taskId, c.status])).toEqual([[completed.ids[0], 200]]);
			const emitted = await waitFor('one execution', async () => {
				const xs = await executions(e, workflowId);
				return xs.length > 0 ? xs : undefined;
			});
			expect(emitted.map((x) => nodeOutput(x, 'Trigger')[0].id)).toEqual(completed.ids);
		} finally {
			await deleteWorkflow(e, workflowId);
			await e.client.clearWebhookCalls();
		}
	}, 300_000);
});

describe('poll trigger', () => {
	let workflowId = '';

	afterAll(async () => {
		if (workflowId) await deleteWorkflow(e, workflowId);
	});

	async function pollsSoFar(): Promise<number> {
		const reqs = await e.client.requests();
		return reqs.filter((r) => r.method === 'GET' && /\/queues\/102\/tasks\/completed$/.test(r.path))
			.length;
	}

	test('emits the completions made while n8n was stopped, each once, oldest first', async () => {
		await e.client.reset();
		workflowId = await createWorkflow(
			e,
			triggerWorkflow(e, `e2e poll ${uniq('poll')}`, {
				type: TYPES.poll,
				parameters: {
					queue: queueLocator(102),
					pollTimes: { item: [{ mode: 'everyMinute' }] },
					options: {},
				},
			}),
		);
		await activate(e, workflowId);
		// activation polls once at once: it only sets the cursor (includeExisting is off)
		await waitFor('the first poll', async () => (await pollsSoFar()) >= 1);
		expect(await countsSettle(async () => (await executions(e, workflowId)).length, String)).toBe(
			0,
		);

		await e.n8n.stop();
		const done = await e.client.completeMany(102, 2, { by: ALICE });
		expect(done.count).toBe(2);
		const polls = await pollsSoFar();
		await e.n8n.restart(); // starts again; activation polls at once

		const [x] = await waitFor('the poll execution', async () => {
			const xs = await executions(e, workflowId);
			return xs.length ? xs : undefined;
		});
		const emitted = nodeOutput(x, 'Trigger');
		const held = await e.client.tasks(102);
		expect(emitted).toEqual(done.ids.map((id) => held.find((t) => t.id === id)));
		expect(await pollsSoFar()).toBeGreaterThan(polls);

		// once: another restart polls again and emits nothing new
		const before = await pollsSoFar();
		await e.n8n.restart();
		await waitFor('the poll after the second restart', async () => (await pollsSoFar()) > before);
		// an execution of that poll would show up before the count stops changing
		expect(await countsSettle(async () => (await executions(e, workflowId)).length, String)).toBe(
			1,
		);
	});
});

describe('example workflows', () => {
	const examples = loadExamples();
	const created: string[] = [];

	beforeAll(async () => {
		await e.client.reset();
	});

	afterAll(async () => {
		for (const id of created) await deleteWorkflow(e, id);
	});

	async function importExample(
		file: string,
		patch?: (wf: ReturnType<typeof prepareWorkflow>) => void,
	) {
		const example = examples.find((x) => x.file === file);
		expect(example).toBeDefined();
		const wf = prepareWorkflow(example!.text, e.credentialId);
		patch?.(wf);
		const id = await createWorkflow(e, wf);
		created.push(id);
		return { id, wf };
	}

	test('there are at least three, each names only built-in nodes and ours', () => {
		expect(examples.length).toBeGreaterThanOrEqual(3);
		for (const { text } of examples) {
			const wf = JSON.parse(text) as { nodes: Array<{ type: string }> };
			for (const node of wf.nodes) {
				expect(node.type).toMatch(
					/^(n8n-nodes-base\.|@n8n\/n8n-nodes-langchain\.|n8n-nodes-task-queue\.)/,
				);
			}
		}
	});

	test('refund requests: a request becomes a task, the decision on it is routed', async () => {
		const { id, wf } = await importExample('refund-requests-routing.json');
		expect(isActivatable(wf)).toBe(true);
		await activate(e, id);
		await waitFor('the trigger registered', async () =>
			(await webhookTarget(e, 101)).includes('/task-completed?secret='),
		);
		const res = await waitFor('the intake webhook', async () => {
			const r = await axios.post(
				`${e.n8n.webhookBase}/refund-request`,
				{
					message: 'My kettle leaks (example)',
					order_total: 42,
					receipt_url: 'https://example.com/r/42.png',
				},
				{ validateStatus: () => true },
			);
			return r.status === 404 ? undefined : r;
		});
		expect(res.status).toBe(200);
		const created = (Array.isArray(res.data) ? res.data[0] : res.data) as { id: number };
		const held = (await e.client.tasks(101)).find((t) => t.id === created.id);
		expect(held?.data).toEqual(
			expect.objectContaining({ customer_message: 'My kettle leaks (example)', order_total: 42 }),
		);

		const seen = (await executions(e, id)).length;
		await e.client.complete(101, created.id, {
			by: ALICE,
			data: { decision: 'reject', note: 'Water damage is not covered' },
		});
		const xs = await waitFor('the decision execution', async () => {
			const list = await executions(e, id);
			return list.length > seen ? list : undefined;
		});
		const run = xs.find((x: Execution) => x.data?.resultData.runData['Decision made']) as Execution;
		expect(nodeOutput(run, 'Tell the customer why not')).toEqual([
			{
				action: 'reply',
				task_id: created.id,
				reply: 'We are sorry, we cannot refund this order: Water damage is not covered',
			},
		]);
		expect(nodeOutput(run, 'Issue the refund')).toEqual([]);
		await deactivate(e, id);
	});

	test('content review: bulk-create from a list (manual run), collect completed results (schedule)', async () => {
		const { id } = await importExample('bulk-content-review.json', (wf) => {
			// the example polls hourly; run its schedule every 5 seconds here
			const schedule = wf.nodes.find((n) => n.type === 'n8n-nodes-base.scheduleTrigger')!;
			schedule.parameters = { rule: { interval: [{ field: 'seconds', secondsInterval: 5 }] } };
		});
		let before = (await e.client.tasks(102)).length;
		let cli = await e.n8n.executeCli(id);
		if (cli.code === null && (await e.client.tasks(102)).length === before) {
			// CI3 of stop 57: n8n 1.x's CLI ended by a signal, with no output and no task made, beside
			// CI's other suites; run once more (what it makes is still checked below, from here)
			console.log(`n8n execute --id ${id} ended without an exit code: ${cli.output.slice(-300)}`);
			before = (await e.client.tasks(102)).length;
			cli = await e.n8n.executeCli(id);
		}
		// CI1 of stop 58: n8n 1.x's CLI ended by SIGSEGV after its run made the tasks: what it made
		// is the test (below), not how n8n's process ended
		const madeTasks = (await e.client.tasks(102)).length > before;
		if (cli.code === null && madeTasks)
			console.log(
				`n8n execute --id ${id} made tasks, then ended by a signal: ${cli.output.slice(-300)}`,
			);
		else if (cli.code !== 0)
			throw new Error(`n8n execute --id ${id} exited ${cli.code}:\n${cli.output.slice(-3000)}`);
		const tasks = (await e.client.tasks(102)).slice(before);
		expect(tasks.map((t) => t.data.title)).toEqual([
			'Five ways to cut your energy bill',
			"A beginner's guide to sourdough",
			'What the new transit map means for you',
		]);
		await e.client.complete(102, tasks[1].id, {
			by: ALICE,
			data: { approved: true, summary: 'Tasty and clear' },
		});

		await activate(e, id);
		const x = await waitFor(
			'a scheduled run',
			async () =>
				(await executions(e, id)).find((r) => r.data?.resultData.runData['Review result']),
			30_000,
		);
		await deactivate(e, id);
		expect(nodeOutput(x, 'Review result')).toEqual(
			expect.arrayContaining([
				expect.objectContaining({
					title: "A beginner's guide to sourdough",
					approved: true,
					summary: 'Tasty and clear',
					reviewer: ALICE,
				}),
			]),
		);
	});

	test('queue insights: a queue behind its promise gets a warning, one on track does not (the hourly schedule every 5 s here)', async () => {
		const { id } = await importExample('queue-insights-alert.json', (wf) => {
			const schedule = wf.nodes.find((n) => n.type === 'n8n-nodes-base.scheduleTrigger')!;
			schedule.parameters = { rule: { interval: [{ field: 'seconds', secondsInterval: 5 }] } };
		});
		// Refund Decisions: more tasks wait than the example's 20; Agent Approvals: two answered at once
		await e.client.createTasks(104, 21);
		const { ids } = await e.client.createTasks(105, [{}, {}]);
		for (const taskId of ids) await e.client.complete(105, taskId, { by: ALICE, data: {} });
		const answered = (await e.client.tasks(105)).filter((t) => ids.includes(t.id));
		await activate(e, id);
		// a completion is measured once it is 10 s old: the first run that counted both
		const x = await waitFor(
			'a scheduled run that measured both answers',
			async () =>
				(await executions(e, id)).find((r) =>
					nodeOutput(r, 'Last 24 hours of each queue').some(
						(o) => o.queueId === 105 && Number(o.completed) >= 2,
					),
				),
			90_000,
		);
		await deactivate(e, id);
		const [refunds, agents] = nodeOutput(x, 'Last 24 hours of each queue');
		expect(refunds).toMatchObject({
			queueId: 104,
			queue: 'Refund Decisions',
			targetSeconds: 14_400,
		});
		expect(Number(refunds.pendingTasks)).toBeGreaterThan(20);
		const seconds = (t: (typeof answered)[number]) =>
			(Date.parse(String(t.completed_at).slice(0, 23) + 'Z') -
				Date.parse(t.created_at.slice(0, 23) + 'Z')) /
			1000;
		expect(agents).toMatchObject({
			queueId: 105,
			withinTarget: 1,
			people: [expect.objectContaining({ person: ALICE, share: 1 })],
		});
		const longest = Math.max(...answered.map(seconds));
		expect((agents.secondsToComplete as { max: number }).max).toBe(longest);
		expect(nodeOutput(x, 'Compose the warning')).toEqual([
			{
				queue: 'Refund Decisions',
				subject: 'Refund Decisions is behind its promise',
				message: expect.stringContaining(`${String(refunds.pendingTasks)} tasks wait`),
			},
		]);
		expect(nodeOutput(x, 'Send it to the team')).toHaveLength(1);
		expect(nodeOutput(x, 'On track').map((o) => o.queueId)).toEqual([105]);
	});

	test('AI agent: when unsure it asks a person through the Task Queue tool', async () => {
		const { mock, credentials } = await mockModel(e, (text) => ({
			customer_message: /Customer message: (.*)/.exec(text)?.[1] ?? text,
			order_total: Number(/Order total: ([\d.]+)/.exec(text)?.[1] ?? 0),
			receipt_url: /Receipt: (\S+)/.exec(text)?.[1] ?? '',
		}));
		try {
			const { id } = await importExample('ai-agent-asks-a-person.json', (wf) => {
				const model = wf.nodes.find((n) => n.type === '@n8n/n8n-nodes-langchain.lmChatOpenAi')!;
				model.credentials = credentials;
			});
			await activate(e, id);
			const res = await waitFor('the agent webhook', async () => {
				const r = await axios.post(
					`${e.n8n.webhookBase}/refund-agent`,
					{
						message: 'I changed my mind after six months',
						order_total: 420,
						receipt_url: 'https://example.com/r/420.png',
					},
					{ validateStatus: () => true },
				);
				return r.status === 404 ? undefined : r;
			});
			expect(res.status).toBe(200);
			expect(mock.requests.length).toBeGreaterThanOrEqual(2);
			const toolNames = (mock.requests[0].tools ?? []).map((t) => t.function.name);
			expect(toolNames).toContain('ask_a_person');
			const task = (await e.client.tasks(101)).find(
				(t) => t.data.customer_message === 'I changed my mind after six months',
			);
			expect(task).toEqual(
				expect.objectContaining({
					status: 'new',
					source: 'api',
					data: expect.objectContaining({
						order_total: 420,
						receipt: 'https://example.com/r/420.png',
					}),
				}),
			);
			const answer = JSON.stringify(res.data);
			expect(answer).toContain('A person will review your request');
			expect(answer).toContain(String(task!.id));
			await deactivate(e, id);
		} finally {
			await mock.close();
		}
	});
});
