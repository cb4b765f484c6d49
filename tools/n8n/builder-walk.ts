// The builder's path in the real editor, from an empty canvas to a person's answer (headless Chromium):
//   npx tsx tools/n8n/builder-walk.ts                   n8n 2.41.1
//   TQ_N8N_VERSION=1 npx tsx tools/n8n/builder-walk.ts  n8n 1.123.81
// Builds what docs/waiting.md sets up, through the editor only: a Task Queue Trigger on Refund
// Decisions (the example workflow already holds that queue: this one joins it), a Webhook, Create and
// Wait on the queue (Route Back and Automatic as they come), an IF on the label the person clicked,
// a node on each branch; publishes; sends a request; Alice approves on the people's page; the run
// must take the "true" branch; then a task made outside n8n, completed, must start the workflow
// through its own trigger. Fails on the first difference and prints each action with its time.
// A replay, not a person: it guards the path; how long it takes people is in bench/RESULTS.md.
import axios from 'axios';
import type { IDataObject } from 'n8n-workflow';
import type { Locator, Page } from 'playwright-core';

import { signIn, startEditorSession } from './editor-session';
import type { N8nHandle } from './start';

const QUEUE = 'Refund Decisions (104)';
const MESSAGE = 'The kettle arrived broken';
const started = Date.now();
let actions = 0;

function step(what: string): void {
	actions += 1;
	console.log(`  ${((Date.now() - started) / 1000).toFixed(1).padStart(6)} s  ${what}`);
}

function check(what: string, ok: boolean, seen: unknown): void {
	if (!ok) throw new Error(`${what}: saw ${JSON.stringify(seen)}`);
	console.log(`           ok  ${what}`);
}

async function click(page: Page, what: string, target: Locator): Promise<void> {
	step(what);
	await target.first().click({ timeout: 15_000 });
	await page.waitForTimeout(400);
}

/** The node panel: search, Enter, and the action when the search opens a node's list. */
async function addNode(page: Page, opener: Locator, search: string, action?: string) {
	await click(page, `open the node panel, search "${search}"`, opener);
	await page.keyboard.type(search, { delay: 20 });
	await page.waitForTimeout(800);
	await page.keyboard.press('Enter');
	await page.waitForTimeout(800);
	if (action) await click(page, `pick "${action}"`, page.getByText(action, { exact: true }));
	await page.locator('[data-test-id="ndv"]').first().waitFor({ timeout: 15_000 });
	await page.waitForTimeout(1200);
}

async function closeNode(page: Page): Promise<void> {
	await click(
		page,
		'close the node',
		page.locator('[data-test-id="ndv-close-button"], [data-test-id="back-to-canvas"]'),
	);
}

async function chooseQueue(page: Page): Promise<void> {
	await click(page, 'open the Queue list', page.locator('[data-test-id="rlc-input"]'));
	// in Create and Wait the picker adds what the queue can do ("· ready to wait")
	const listed = new RegExp(`^${QUEUE.replace(/[()]/g, '\\$&')}( · .+)?$`);
	await click(page, `pick ${QUEUE}`, page.getByText(listed));
	await page.waitForTimeout(2000);
}

/** A parameter switched to Expression (its field clicked, its toggle), then its expression. */
async function typeExpression(
	page: Page,
	field: Locator,
	toggles: Locator,
	expression: string,
): Promise<void> {
	await field.first().click();
	await click(
		page,
		`switch to Expression, type ${expression}`,
		toggles.locator('[data-test-id="radio-button-expression"]'),
	);
	await page.keyboard.press('ControlOrMeta+a');
	// as pasted: typing "{{" makes the editor close it, at a pace typing cannot rely on
	await page.keyboard.insertText(expression);
	await blur(page);
	await page.waitForTimeout(300);
}

/** Clicks the node's Parameters tab: leaves the field being edited, inside the node. */
async function blur(page: Page): Promise<void> {
	await page.locator('[data-test-id="tab-params"]').first().click();
}

async function selectValue(page: Page, parameter: string): Promise<string> {
	const input = page.locator(`[data-test-id="parameter-input-${parameter}"] input`).first();
	return (await input.inputValue()).trim();
}

async function publish(page: Page, n8n: N8nHandle): Promise<void> {
	if (n8n.major === '2') {
		await click(
			page,
			'Publish',
			page.locator('[data-test-id="workflow-open-publish-modal-button"]'),
		);
		await click(
			page,
			'Publish (the dialog)',
			page.getByRole('dialog').getByRole('button', { name: 'Publish' }),
		);
	} else {
		step('save (Ctrl+S)');
		await page.keyboard.press('ControlOrMeta+s');
		await page.waitForTimeout(1500);
		await click(page, 'activate', page.locator('[data-test-id="workflow-activate-switch"]'));
	}
	await page.waitForTimeout(4000);
	const gotIt = page.getByRole('button', { name: 'Got it' });
	if (await gotIt.isVisible().catch(() => false)) await click(page, 'Got it', gotIt);
	const failed = page.getByText(/could not be (activated|published)|Problem activating/i);
	check(
		'published without an error',
		!(await failed.isVisible().catch(() => false)),
		'an error toast',
	);
}

async function answerOnPeoplesPage(
	page: Page,
	peoplesPage: string,
	message: string,
	decision: string,
): Promise<void> {
	step(`open the people's page ${peoplesPage}`);
	await page.goto(peoplesPage);
	const alice = page.getByText('Alice Example', { exact: true });
	if (await alice.isVisible().catch(() => false)) await click(page, 'pick Alice', alice);
	await click(page, 'open Refund Decisions', page.getByText('Refund Decisions', { exact: true }));
	// the request answers before the run has created its task
	const deadline = Date.now() + 30_000;
	while (!(await page.getByText(message).first().isVisible())) {
		if (Date.now() > deadline)
			throw new Error(`timed out: no task "${message}" in Refund Decisions`);
		await page.waitForTimeout(1000);
		await page.reload();
	}
	await click(page, 'Take next task', page.getByText('Take next task'));
	step(`Decision: ${decision}`);
	await page.locator('select[name="decision"]').selectOption({ label: decision });
	await click(page, 'Complete task', page.getByText('Complete task', { exact: true }));
}

/** The nodes run by the first finished execution of the workflow whose nodes pass `which`. */
async function finishedRun(
	n8n: N8nHandle,
	workflowId: string,
	what: string,
	which: (ran: string[]) => boolean,
): Promise<string[]> {
	const deadline = Date.now() + 60_000;
	for (;;) {
		const list = await n8n.api.get('/executions', { params: { workflowId, includeData: true } });
		for (const run of list.data.data as Array<{
			status: string;
			data?: { resultData?: { runData?: Record<string, unknown> } };
		}>) {
			const ran = Object.keys(run.data?.resultData?.runData ?? {});
			if (run.status === 'success' && which(ran)) return ran;
		}
		if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
		await new Promise((r) => setTimeout(r, 1000));
	}
}

async function main() {
	const { sandbox, n8n, browser, stop } = await startEditorSession({ activate: true });
	let failed = false;
	try {
		console.log(`n8n ${n8n.version} at ${n8n.url}, sandbox at ${sandbox.baseUrl}`);
		const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
		await signIn(page, n8n);
		await page.goto(`${n8n.url}/workflow/new`);
		await page.locator('[data-test-id="canvas-add-button"]').first().waitFor({ timeout: 30_000 });
		const startedAt = Date.now();
		console.log('an empty canvas:');

		await addNode(
			page,
			page.locator('[data-test-id="canvas-add-button"]'),
			'task queue',
			'On task completed',
		);
		await chooseQueue(page);
		check(
			"Check for Lost Completions' button says what it adds",
			await page
				.getByText('Add Check Time', { exact: true })
				.first()
				.isVisible()
				.catch(() => false),
			'no "Add Check Time"',
		);
		await closeNode(page);

		const plus = page.locator('[data-test-id="node-creator-plus-button"]');
		await addNode(page, plus, 'webhook');
		await click(page, 'HTTP Method', page.locator('[data-test-id="parameter-input-httpMethod"]'));
		await click(page, 'POST', page.locator('.el-select-dropdown:visible li', { hasText: 'POST' }));
		step('Path: my-refund');
		await page.locator('[data-test-id="parameter-input-path"] input').first().fill('my-refund');
		await closeNode(page);

		// the Webhook is selected: the panel's node goes after it
		await addNode(page, plus, 'create and wait', 'Create and wait for people to answer');
		await chooseQueue(page);
		const routeBack = await selectValue(page, 'routeBackState');
		check('Route Back says the queue comes back', routeBack.startsWith('✓ Routed back'), routeBack);
		const resumeField = await selectValue(page, 'resumeField');
		check(
			'Resume Address Field is Automatic on the resume address',
			resumeField === 'Automatic: Resume address (n8n fills it)',
			resumeField,
		);
		await typeExpression(
			page,
			page.locator('[data-test-id="parameter-input-customer_message"]'),
			page.locator(`[data-test-id='value["customer_message"]-parameter-input-options-container']`),
			'{{ $json.body.message }}',
		);
		await typeExpression(
			page,
			page.locator('[data-test-id="parameter-input-order_total"]'),
			page.locator(`[data-test-id='value["order_total"]-parameter-input-options-container']`),
			'{{ $json.body.order_total }}',
		);
		await closeNode(page);

		await addNode(page, plus, 'if');
		await typeExpression(
			page,
			page.locator('[data-test-id="parameter-input-left"]'),
			page.locator('[data-test-id="filter-condition-left"]'),
			'{{ $json.labels.decision }}',
		);
		await click(
			page,
			'the value to compare: Approve',
			page.locator('[data-test-id="parameter-input-right"]'),
		);
		await page.keyboard.type('Approve');
		await blur(page);
		// the IF's conditions reach the workflow a moment after the field is left
		await page.waitForTimeout(1500);
		await closeNode(page);
		for (const branch of [0, 1]) {
			await click(page, 'zoom to fit', page.locator('[data-test-id="zoom-to-fit"]'));
			await addNode(
				page,
				page.locator(
					`[data-node-name="If"] [data-handleid="outputs/main/${branch}"] [data-test-id="canvas-handle-plus"]`,
				),
				'no operation',
			);
			await closeNode(page);
		}
		await publish(page, n8n);
		const workflowId = /\/workflow\/([^/?]+)/.exec(page.url())?.[1] ?? '';
		console.log(
			`published (${((Date.now() - startedAt) / 1000).toFixed(0)} s, ${actions} actions)`,
		);

		step('a request to the workflow');
		const request = await axios.post(`${n8n.url}/webhook/my-refund`, {
			message: MESSAGE,
			order_total: 19,
		});
		check('the workflow took the request', request.status === 200, request.status);
		await answerOnPeoplesPage(page, `${sandbox.baseUrl}/app/`, MESSAGE, 'Approve');
		const ran = await finishedRun(n8n, workflowId, 'no run went on after the answer', (nodes) =>
			nodes.includes('Webhook'),
		);
		const saved = await n8n.api.get(`/workflows/${workflowId}`);
		const parameters = (name: string) =>
			(saved.data.nodes as Array<{ name: string; parameters: IDataObject }>).find(
				(n) => n.name === name,
			)?.parameters;
		const sent = (parameters('Create and wait for people to answer')?.taskData as IDataObject)
			?.value as IDataObject | undefined;
		check(
			"Create and Wait sends the request's message and total",
			sent?.customer_message === '={{ $json.body.message }}' &&
				sent?.order_total === '={{ $json.body.order_total }}',
			sent,
		);
		const condition = (
			(parameters('If')?.conditions as IDataObject | undefined)?.conditions as
				| IDataObject[]
				| undefined
		)?.[0];
		check(
			'the IF compares the label with Approve',
			condition?.leftValue === '={{ $json.labels.decision }}' &&
				condition?.rightValue === 'Approve',
			condition,
		);
		check(
			'the run went on and took the true branch',
			ran.includes('No Operation, do nothing') && !ran.includes('No Operation, do nothing1'),
			ran,
		);
		console.log(
			`from an empty canvas to the answer: ${((Date.now() - startedAt) / 1000).toFixed(0)} s, ${actions} actions (a replay)`,
		);

		// the workflow's own trigger listens through the example's, which holds the queue
		const plain = 'A task made outside n8n';
		await axios.post(
			`${sandbox.baseUrl}/orgs/${sandbox.organizationId}/queues/104/tasks/create`,
			{ data: { customer_message: plain, order_total: 5 } },
			{ headers: { Authorization: `Token ${sandbox.apiKey}` } },
		);
		await answerOnPeoplesPage(page, `${sandbox.baseUrl}/app/`, plain, 'Reject');
		await finishedRun(
			n8n,
			workflowId,
			"the workflow's Task Queue Trigger did not start it for an ordinary completion",
			(nodes) => nodes.length === 1 && nodes[0] === 'Task Queue Trigger',
		);
		check("the workflow's own Task Queue Trigger receives the queue's completions", true, '');
	} catch (error) {
		failed = true;
		console.error(error);
		const runs = await n8n.api
			.get('/executions', { params: { includeData: true } })
			.catch(() => undefined);
		type Run = {
			id: string;
			workflowId: string;
			status: string;
			data?: { resultData?: { error?: { message: string; description?: string } } };
		};
		for (const run of (runs?.data.data ?? []) as Run[]) {
			const error = run.data?.resultData?.error;
			console.error(
				`  run ${run.id} of ${run.workflowId}: ${run.status}${error ? `: ${error.message} (${error.description ?? ''})` : ''}`,
			);
		}
	} finally {
		await stop();
	}
	process.exit(failed ? 1 : 0);
}

void main();
