// The people's page in real headless Chromium (Debian's chromium, driven by playwright-core):
// a person picks who they are, takes the next task, fills the form and completes it; the
// sandbox holds it completed and the queue's webhook receives it once.
// Needs /usr/bin/chromium: tools/install-chromium.sh installs it.
import { existsSync, mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

import { SandboxClient } from '../../sandbox/client';
import { startSandbox, type Sandbox } from '../../sandbox/index';
import { asDelivered } from '../../sandbox/time';
import { ALICE, BOB, call, closeAgent, sleep, startListener, type Listener } from './helpers';

const CHROMIUM = '/usr/bin/chromium';

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
