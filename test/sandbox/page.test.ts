// The people's page in real headless Chromium (Debian's chromium, driven by playwright-core):
// a person picks who they are, takes the next task, fills the form and completes it; the
// sandbox holds it completed and the queue's webhook receives it once.
// Needs /usr/bin/chromium: tools/install-chromium.sh installs it.
import { existsSync, mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

import type { INodeExecutionData } from 'n8n-workflow';

import { TaskQueue } from '../../nodes/TaskQueue/TaskQueue.node';
import { SandboxClient } from '../../sandbox/client';
import { startSandbox, type Sandbox } from '../../sandbox/index';
import { asDelivered } from '../../sandbox/time';
import { runActionNode, TestCredentialsHelper } from '../helpers/n8n';
import { callWaitingNode, queryOf } from '../helpers/waiting';
import { TRIGGER_OF_THIS_N8N } from '../nodes/TaskQueue/env';
import { ALICE, BOB, call, closeAgent, sleep, startListener, type Listener } from './helpers';

const CHROMIUM = '/usr/bin/chromium';

/** The Task Queue credential of the sandbox this file starts. */
const sandboxCredentials = () =>
	new TestCredentialsHelper({
		baseUrl: sandbox.baseUrl,
		apiKey: sandbox.apiKey,
		organizationId: sandbox.organizationId,
		apiPaths: 'queues',
		ignoreSslIssues: false,
	});

let sandbox: Sandbox;
let client: SandboxClient;
let listener: Listener;
let browser: BrowserContext;
let page: Page;
let profile: string;

beforeAll(async () => {
	if (!existsSync(CHROMIUM)) {
		throw new Error(`${CHROMIUM} is missing: run tools/install-chromium.sh`);
	}
	sandbox = await startSandbox();
	client = new SandboxClient(sandbox.baseUrl, sandbox.adminSecret);
	listener = await startListener();
	profile = mkdtempSync(join(tmpdir(), 'tq-chromium-'));
	browser = await chromium.launchPersistentContext(profile, {
		executablePath: CHROMIUM,
		headless: true,
		args: [
			'--headless',
			'--no-sandbox',
			'--disable-gpu',
			'--disable-quic',
			'--no-first-run',
			'--disable-background-networking',
			'--disable-component-update',
			'--disable-sync',
		],
		viewport: { width: 1100, height: 900 },
	});
	page = browser.pages()[0] ?? (await browser.newPage());
});

afterAll(async () => {
	await browser?.close();
	if (profile) rmSync(profile, { recursive: true, force: true });
	await listener?.close();
	client?.close();
	closeAgent();
	await sandbox?.close();
});

test('before anyone is picked, the page lists each person with the organizations they answer for', async () => {
	await page.goto(sandbox.pageUrl);
	await page.getByTestId('pick-user').waitFor();
	const people = await page.locator('[data-testid^="pick-user-"]').allTextContents();
	expect(people).toEqual([
		'Alice Example · Sandbox Org (admin)',
		'Bob Example · Sandbox Org',
		'Dave Example · Sandbox Org',
		'Erin Example · Sandbox Org',
		'Carol Example · Other Org (admin)',
	]);
});

test('a person completes a task on the page; the webhook receives it exactly once', async () => {
	await client.setWebhook(101, `${listener.url}/hooks/refunds?src=page`);
	const pageErrors: string[] = [];
	page.on('pageerror', (e) => pageErrors.push(e.message));

	await page.goto(sandbox.pageUrl);
	await page.getByTestId('user-select').selectOption(ALICE);
	await page.getByTestId('queue-link-101').waitFor();
	expect(await page.getByTestId('pending-count-101').textContent()).toBe('3');
	await page.getByTestId('queue-link-101').click();
	await page.waitForURL(`${sandbox.baseUrl}/app/queues/101`);
	expect(await page.getByTestId('queue-name').textContent()).toBe('Refund Requests');

	await page.getByTestId('take-next').click();
	await page.getByTestId('task-form').waitFor();
	expect(await page.getByTestId('task-status').textContent()).toBe('in progress');
	expect(await page.getByTestId('input-customer_message').textContent()).toBe(
		'The shoes do not fit, can I return them?',
	);
	expect(
		await page.getByRole('link', { name: 'https://example.com/receipts/1004.png' }).count(),
	).toBe(1);
	const taken = (await client.tasks(101)).find((t) => t.id === 4)!;
	expect(taken.status).toBe('in_progress');
	expect((await client.getQueue(101)).active_users).toEqual(['Alice Example']);

	// the required decision is checked before sending
	await page.getByTestId('complete-task').click();
	expect(await page.getByTestId('form-error').textContent()).toBe('Please fill in: Decision');

	await page.getByTestId('field-decision').selectOption('approve');
	await page.getByTestId('field-note').fill('Refund approved from the page');
	await page.screenshot({ path: join(tmpdir(), 'sandbox-page-filled.png'), fullPage: true });
	await page.getByTestId('complete-task').click();
	await page.getByTestId('completed-message').waitFor();
	expect(await page.getByTestId('completed-message').textContent()).toBe(
		'Task #4 completed and sent to the webhook.',
	);
	await page.getByTestId('completed-row-4').waitFor();
	await page.screenshot({ path: join(tmpdir(), 'sandbox-page-completed.png'), fullPage: true });

	const done = (await client.tasks(101)).find((t) => t.id === 4)!;
	expect(done).toEqual({
		...taken,
		status: 'completed',
		completed_at: expect.stringMatching(/Z$/),
		completed_by: ALICE,
		data: { ...taken.data, decision: 'approve', note: 'Refund approved from the page' },
	});

	const [hook] = await listener.waitFor(1);
	await sleep(200);
	expect(listener.received).toHaveLength(1);
	expect(hook.method).toBe('POST');
	expect(hook.url).toBe('/hooks/refunds?src=page');
	expect(hook.headers['content-type']).toBe('application/json');
	expect(JSON.parse(hook.body)).toEqual(asDelivered(done));
	expect(pageErrors).toEqual([]);
});

test('the form covers the block kinds of Content Review and Data Labeling', async () => {
	await page.goto(`${sandbox.baseUrl}/app/queues/102`);
	await page.getByTestId('take-next').click();
	await page.getByTestId('task-form').waitFor();
	await page.getByTestId('field-approved').check();
	await page.getByTestId('field-publish_on').fill('2024-07-01');
	await page.getByTestId('field-topics-news').check();
	await page.getByTestId('field-topics-tech').check();
	await page.getByTestId('field-tags').fill('remote\nwork');
	await page.getByTestId('field-reviewer_email').fill('rev@example.com');
	await page.getByTestId('field-summary').fill('Short.');
	await page.getByTestId('field-related_link').fill('https://example.com/more');
	await page.getByTestId('field-reading_minutes').fill('6');
	await page.getByTestId('complete-task').click();
	await page.getByTestId('completed-message').waitFor();
	const review = (await client.tasks(102)).find((t) => t.status === 'completed')!;
	expect(review.data).toMatchObject({
		approved: true,
		publish_on: '2024-07-01',
		topics: ['news', 'tech'],
		tags: ['remote', 'work'],
		reviewer_email: 'rev@example.com',
		summary: 'Short.',
		related_link: 'https://example.com/more',
		reading_minutes: 6,
	});

	await page.goto(`${sandbox.baseUrl}/app/queues/103`);
	await page.getByTestId('take-next').click();
	await page.getByTestId('task-form').waitFor();
	await page.getByTestId('field-address-street').fill('Main St 1');
	await page.getByTestId('field-address-city').fill('Springfield');
	await page.getByTestId('field-scores').fill('1\n2.5');
	await page.getByTestId('field-sentiment').selectOption('neutral');
	await page.getByTestId('complete-task').click();
	await page.getByTestId('completed-message').waitFor();
	const labeled = (await client.tasks(103)).find((t) => t.status === 'completed')!;
	expect(labeled.data).toMatchObject({
		address: { street: 'Main St 1', city: 'Springfield' },
		scores: [1, 2.5],
		sentiment: 'neutral',
	});
});

test('the Connections screen sets the queue webhook', async () => {
	await page.goto(`${sandbox.baseUrl}/app/queues/102`);
	await page.getByTestId('webhook-target').fill('https://hooks.example.com/by-hand');
	await page.getByTestId('webhook-save').click();
	await page.getByTestId('webhook-saved').waitFor();
	expect((await client.getQueue(102)).webhook).toEqual({
		target: 'https://hooks.example.com/by-hand',
	});
});

test('a person finds a given task (the one just created) in the pending list and completes it', async () => {
	await client.reset();
	// a task created through the API, as from n8n: the newest, while older ones wait ahead of it
	const created = await call(sandbox.baseUrl, 'POST', '/orgs/1/queues/101/tasks/create', {
		body: { data: { customer_message: 'Created from n8n just now', order_total: 12 } },
	});
	const id = (created.json as { id: number }).id;
	await client.takeNext(101, BOB);
	await page.goto(`${sandbox.baseUrl}/app/`);
	await page.getByTestId('user-select').selectOption(ALICE);
	// the tile counts the tasks waiting, not the one Bob works on
	expect(await page.getByTestId('pending-count-101').textContent()).toBe('3');
	await page.goto(`${sandbox.baseUrl}/app/queues/101`);
	expect(await page.getByTestId('queue-pending').textContent()).toBe('3');
	expect(await page.getByTestId('queue-in-progress').textContent()).toBe('1');
	await page.getByTestId(`pending-row-${id}`).waitFor();
	const rows = await page
		.locator('[data-testid^="pending-row-"]')
		.evaluateAll((els) => els.map((e) => e.getAttribute('data-testid')));
	expect(rows).toEqual([`pending-row-${id}`, 'pending-row-6', 'pending-row-5', 'pending-row-4']);
	expect(await page.getByTestId('pending-row-4').textContent()).toContain(
		'in progress (bob@example.com)',
	);
	await page.getByTestId(`open-task-${id}`).click();
	await page.getByTestId('task-form').waitFor();
	expect(await page.getByTestId('input-customer_message').textContent()).toBe(
		'Created from n8n just now',
	);
	await page.getByTestId('field-decision').selectOption('reject');
	await page.getByTestId('complete-task').click();
	await page.getByTestId('completed-message').waitFor();
	expect(await page.getByTestId('completed-message').textContent()).toBe(`Task #${id} completed.`);
	expect((await client.tasks(101)).find((t) => t.id === id)).toMatchObject({
		status: 'completed',
		completed_by: ALICE,
		data: { decision: 'reject' },
	});
	// someone else's task in progress is not taken from them
	await page.goto(`${sandbox.baseUrl}/app/queues/101`);
	await page.getByTestId('open-task-4').click();
	expect(await page.getByTestId('form-error').textContent()).toBe(
		'Task #4 is in progress with bob@example.com',
	);
});

test("a builder (an organization's admin) makes a queue with a read-only address field on the page; the API then returns those fields, a task created on it shows them, and Create and Wait on it resumes with the answer given on the page", async () => {
	await client.reset();
	const pageErrors: string[] = [];
	page.on('pageerror', (e) => pageErrors.push(e.message));
	await page.goto(sandbox.pageUrl);
	await page.getByTestId('user-select').selectOption(ALICE);
	await page.getByTestId('new-queue-1').waitFor();
	// a member who is not an admin does not get the form
	await page.getByTestId('user-select').selectOption(BOB);
	await page.getByTestId('org-1').getByText('member', { exact: true }).waitFor();
	expect(await page.getByTestId('new-queue-1').count()).toBe(0);
	await page.getByTestId('user-select').selectOption(ALICE);
	await page.getByTestId('org-1').getByText('admin', { exact: true }).waitFor();
	await page.getByTestId('new-queue-1').locator('summary').click(); // opens the details
	await page.getByTestId('new-queue-name').fill('Plain questions');
	// the two fields the form starts with: a read-only question, an answer people fill in
	await page.getByTestId('add-field').click();
	await page.getByTestId('field-name-3').fill('Urgency');
	await page.getByTestId('field-kind-3').selectOption('single_selection');
	await page.getByTestId('field-options-3').fill('Low, High');
	// each input is labelled on the page, not only by a placeholder that goes once something is typed
	const row = await page.getByTestId('field-row-3').innerText();
	for (const label of ['Field 3', 'Name', 'ID', 'Kind', 'read-only', 'Options'])
		expect(row).toContain(label);
	expect(await page.getByTestId('field-row-1').innerText()).not.toContain('Options');
	expect(await page.getByTestId('new-queue-1').innerText()).toContain('Queue name');
	await page.getByTestId('add-address-field').click();
	await page
		.getByTestId('new-queue-1')
		.screenshot({ path: join(tmpdir(), 'sandbox-page-new-queue-form.png') });
	// a mistake first: the form says what is wrong, and nothing is made
	await page.getByTestId('field-id-2').fill('2answer');
	await page.getByTestId('create-queue').click();
	expect(await page.getByTestId('new-queue-error').textContent()).toBe(
		'Field "Answer": its ID "2answer" must start with a letter and hold only a-z, 0-9 and _.',
	);
	await page.getByTestId('field-id-2').fill('answer');
	await page.getByTestId('create-queue').click();
	await page.getByTestId('queue-created').waitFor();
	const text = await page.getByTestId('queue-created').textContent();
	const id = Number(/Queue (\d+) /.exec(text ?? '')?.[1]);
	expect(text).toBe(`Queue ${id} "Plain questions" created.`);
	await page.getByTestId(`queue-link-${id}`).waitFor();
	await page.screenshot({ path: join(tmpdir(), 'sandbox-page-new-queue.png'), fullPage: true });

	// what the page wrote is what the API returns
	const api = await call(sandbox.baseUrl, 'GET', `/orgs/1/queues/${id}`);
	expect(api.status).toBe(200);
	expect((api.json as { name: string; data: unknown[] }).data).toEqual([
		{ id: 'question', name: 'Question', type: 'text', text: { read_only: true } },
		{ id: 'answer', name: 'Answer', type: 'text', text: {} },
		{
			id: 'urgency',
			name: 'Urgency',
			type: 'single_selection',
			single_selection: {
				is_required: true,
				options: [
					{ id: 'low', name: 'Low' },
					{ id: 'high', name: 'High' },
				],
			},
		},
		{
			id: 'resume_url',
			name: 'Resume address (n8n fills it)',
			type: 'text',
			text: { read_only: true },
		},
	]);
	// a task created through the API is served on the page with the question read-only
	await client.createTasks(id, [{ question: 'Can we ship on Sunday?' }]);
	await page.getByTestId(`queue-link-${id}`).click();
	await page.getByTestId('take-next').click();
	await page.getByTestId('task-form').waitFor();
	expect(await page.getByTestId('input-question').textContent()).toBe('Can we ship on Sunday?');
	expect(await page.getByTestId('field-answer').count()).toBe(1);
	await page.getByTestId('field-answer').fill('Yes');
	await page.getByTestId('field-urgency').selectOption({ label: 'Low' });
	await page.getByTestId('complete-task').click();
	await page.getByTestId('completed-message').waitFor();

	// Create and Wait on the new queue (Automatic takes its address field); the person answers on the page
	await client.setWebhook(id, TRIGGER_OF_THIS_N8N);
	const waiting = await runActionNode({
		types: { taskQueue: new TaskQueue() },
		node: {
			type: 'taskQueue',
			parameters: {
				resource: 'task',
				operation: 'sendAndWait',
				queue: { __rl: true, mode: 'id', value: String(id) },
				taskData: {
					mappingMode: 'defineBelow',
					value: { question: '={{ $json.question }}' },
					matchingColumns: [],
					schema: [],
				},
				resumeField: '',
				options: {},
			} as never,
		},
		input: [{ question: 'Which carrier for order 4411?' }],
		credentials: sandboxCredentials(),
		executionId: 'page-1',
	});
	expect(waiting.error).toBeUndefined();
	await page.reload();
	await page.getByTestId('take-next').click();
	await page.getByTestId('task-form').waitFor();
	expect(await page.getByTestId('input-question').textContent()).toBe(
		'Which carrier for order 4411?',
	);
	await page.getByTestId('field-answer').fill('DHL');
	await page.getByTestId('field-urgency').selectOption({ label: 'High' });
	await page.getByTestId('complete-task').click();
	await page.getByTestId('completed-message').waitFor();
	const [answered] = (await client.tasks(id)).filter(
		(t) => t.status === 'completed' && t.data.question === 'Which carrier for order 4411?',
	);
	const resumed = await callWaitingNode(waiting, queryOf(String(answered.data.resume_url)));
	const [items] = resumed.result.workflowData as INodeExecutionData[][];
	expect(items.map((i) => [i.json.data, i.json.labels, i.pairedItem])).toEqual([
		[
			{ question: 'Which carrier for order 4411?', answer: 'DHL', urgency: 'high' },
			{ urgency: 'High' },
			{ item: 0 },
		],
	]);
	expect(pageErrors).toEqual([]);
});

test("the page's queue-making route refuses a member who is not an admin, and bad fields, and makes nothing", async () => {
	await client.reset();
	const before = (await client.state()).queues.length;
	const post = async (email: string, fields: unknown[]) =>
		await fetch(`${sandbox.baseUrl}/app/api/orgs/1/queues`, {
			method: 'POST',
			headers: { 'Content-Type': 'application/json' },
			body: JSON.stringify({ email, name: 'Q', fields }),
		});
	expect((await post(BOB, [{ name: 'A' }])).status).toBe(403);
	expect((await post(ALICE, [])).status).toBe(400);
	expect((await post(ALICE, [{ name: 'A' }, { name: 'a' }])).status).toBe(400);
	expect(
		(await post(ALICE, [{ name: 'S', kind: 'single_selection', options: 'one' }])).status,
	).toBe(400);
	expect((await client.state()).queues.length).toBe(before);
});

test("a queue's page shows its insights, the figures Queue > Get Insights returns for its default window", async () => {
	// 400 completions on Data Labeling over the last 6 days by four people, each at a pace of its own,
	// and 40 older ones outside the window
	const now = Date.now();
	const people = [ALICE, BOB, 'dave@example.com', 'erin@example.com'];
	const state = await client.state();
	const completion = (i: number, ago: number) => {
		const completedAt = now - ago;
		const duration = 1000 * (30 + ((i * 7919) % 20_000)) * (1 + (i % 4));
		return {
			id: 900_000 + i,
			queueId: 103,
			status: 'completed' as const,
			data: {},
			createdAt: new Date(completedAt - duration).toISOString(),
			completedAt: new Date(completedAt).toISOString(),
			completedBy: people[i % 4],
		};
	};
	await client.reset({
		...state,
		tasks: [
			...(state.tasks ?? []),
			...Array.from({ length: 400 }, (_, i) => completion(i, 60_000 + i * 1_290_000)),
			...Array.from({ length: 40 }, (_, i) => completion(400 + i, 8 * 86_400_000 + i * 60_000)),
		],
		nextIds: { ...state.nextIds, task: 1_000_000 },
	});
	const { items, error } = await runActionNode({
		types: { taskQueue: new TaskQueue() },
		node: {
			type: 'taskQueue',
			parameters: {
				resource: 'queue',
				operation: 'getInsights',
				queue: { __rl: true, mode: 'id', value: '103' },
			} as never,
		},
		input: [{}],
		credentials: sandboxCredentials(),
	});
	expect(error).toBeUndefined();
	const node = items[0].json as {
		pendingTasks: number;
		completed: number;
		secondsToComplete: { p50: number; p90: number };
		people: Array<{ person: string; completed: number; p50Seconds: number }>;
	};
	expect(node.completed).toBe(400);

	await page.goto(`${sandbox.pageUrl}queues/103`);
	await page.getByTestId('user-select').selectOption(ALICE);
	await page.getByTestId('insights-completed').waitFor();
	const seconds = async (testid: string, nth = 0) =>
		Number(await page.getByTestId(testid).nth(nth).getAttribute('data-seconds'));
	expect(await page.getByTestId('insights-pending').textContent()).toBe(String(node.pendingTasks));
	expect(await page.getByTestId('insights-completed').textContent()).toBe('400');
	// the page's exact percentiles; the node's within its stated 0.5%
	const close = (nodeValue: number, exact: number) =>
		expect(Math.abs(nodeValue - exact)).toBeLessThanOrEqual(exact * 0.005 + 0.0005);
	close(node.secondsToComplete.p50, await seconds('insights-p50'));
	close(node.secondsToComplete.p90, await seconds('insights-p90'));
	const names = await page.getByTestId('insights-person-name').allTextContents();
	const counts = await page.getByTestId('insights-person-completed').allTextContents();
	expect(names.map((name, i) => [name, Number(counts[i])])).toEqual(
		node.people.map((p) => [p.person, p.completed]),
	);
	for (const [i, person] of node.people.entries())
		close(person.p50Seconds, await seconds('insights-person-p50', i));
});
