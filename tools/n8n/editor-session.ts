// What the tools that drive n8n's editor in Chromium share: a sandbox, an n8n with the packed package
// (fresh, or shared by the sessions of `withSharedEditor`), the examples provisioned, Chromium, and
// the owner's sign-in.
import { mkdtempSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { chromium, type Browser, type Page } from 'playwright-core';

import { loadDefaultSeed, startSandbox } from '../../sandbox/index';
import { buildAndPack, extractInto } from './package';
import { clearN8n, provision, type ProvisionResult } from './provision';
import { startN8n, type N8nHandle } from './start';

export interface EditorSession {
	sandbox: Awaited<ReturnType<typeof startSandbox>>;
	n8n: N8nHandle;
	browser: Browser;
	provisioned: ProvisionResult;
	stop(): Promise<void>;
}

/** An n8n and a Chromium that several sessions use one after another (`withSharedEditor`). */
let shared: { n8n: N8nHandle; browser: Browser } | undefined;
let sharedSessions = 0;
/**
 * How long the editor sessions wait for an element at most: a backstop a healthy run never nears.
 * n8n loads a dropdown's options and a node's panel through its own API and the service, and beside
 * CI's other suites that took more than the 10-15 s these waits had (CI21 of stop 67: the Resume
 * Address Field's options, in the first minutes, while four n8n and queue-mode stacks booted).
 */
export const BACKSTOP_MS = 120_000;

const usedPorts = new Set<string>();

async function startN8nAndBrowser(): Promise<{ n8n: N8nHandle; browser: Browser }> {
	const userFolder = mkdtempSync(join(tmpdir(), 'tq-editor-'));
	// CI packs once for every suite (TQ_E2E_TARBALL); alone, the tool builds and packs the tree
	const tarball =
		process.env.TQ_E2E_TARBALL ?? (await buildAndPack({ skipBuild: !!process.env.TQ_SKIP_BUILD }));
	await extractInto(tarball, userFolder);
	const n8n = await startN8n({ port: 0, brokerPort: 0, userFolder });
	try {
		const browser = await chromium.launch({
			executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
			args: ['--no-sandbox'],
		});
		return { n8n, browser };
	} catch (error) {
		await n8n.stop();
		throw error;
	}
}

/**
 * Runs `sessions` with one n8n and one Chromium for all of them (CI's tour and walks of one n8n
 * version: one boot instead of one per session). Each session still gets a sandbox of its own, an
 * n8n without the workflows and credentials of the session before, and browser contexts of its own.
 */
export async function withSharedEditor(sessions: () => Promise<void>): Promise<void> {
	shared = await startN8nAndBrowser();
	try {
		await sessions();
	} finally {
		const { n8n, browser } = shared;
		shared = undefined;
		await browser.close();
		await n8n.stop();
	}
}

export async function startEditorSession(options: {
	activate: boolean;
	log?: (s: string) => void;
}): Promise<EditorSession> {
	// the package's process memory keys some entries by task id: each session of a shared n8n has
	// task ids of its own
	const seed = loadDefaultSeed();
	if (shared) seed.nextIds = { ...seed.nextIds, task: 1_000_000 * ++sharedSessions };
	let sandbox = await startSandbox({ port: 0, seed });
	// and a port of its own (the package keys its confirmation reads by the service's address)
	while (shared && usedPorts.has(sandbox.baseUrl)) {
		await sandbox.close();
		sandbox = await startSandbox({ port: 0, seed });
	}
	usedPorts.add(sandbox.baseUrl);
	const own = shared
		? undefined
		: await startN8nAndBrowser().catch(async (error) => {
				await sandbox.close();
				throw error;
			});
	const { n8n, browser } = shared ?? own!;
	const contextsBefore = new Set(browser.contexts());
	const stop = async () => {
		if (own) {
			await browser.close();
			await n8n.stop();
		} else
			for (const context of browser.contexts())
				if (!contextsBefore.has(context)) await context.close();
		await sandbox.close();
	};
	try {
		if (!own) await clearN8n(n8n);
		const credential = {
			baseUrl: sandbox.baseUrl,
			apiKey: sandbox.apiKey,
			organizationId: sandbox.organizationId,
		};
		const provisioned = await provision(n8n, credential, {
			activate: options.activate,
			log: options.log,
		});
		return { sandbox, n8n, browser, provisioned, stop };
	} catch (error) {
		await stop();
		throw error;
	}
}

/** Signs the page in as n8n's owner. */
export async function signIn(page: Page, n8n: N8nHandle): Promise<void> {
	// n8n's editor is a large page: with CI's suites side by side its first load took over 30 s, and
	// a later page of it too (an execution's, CI12 of stop 65): every load and step of the session
	// gets a backstop a healthy run never nears, not playwright's 30 s
	page.setDefaultNavigationTimeout(120_000);
	page.setDefaultTimeout(60_000);
	await page.goto(`${n8n.url}/signin`);
	await page
		.locator('input[type=email], input[name=emailOrLdapLoginId], input[name=email]')
		.first()
		.fill(n8n.owner.email);
	await page.locator('input[type=password]').first().fill(n8n.owner.password);
	await page.keyboard.press('Enter');
	await page.waitForURL((u) => !u.pathname.includes('signin'), { timeout: 90_000 });
}

/** A list's shown value, once n8n has loaded its options ("Loading options..." is not a value). */
export async function selectValue(page: Page, parameter: string): Promise<string> {
	const input = page.locator(`[data-test-id="parameter-input-${parameter}"] input`).first();
	let value = (await input.inputValue()).trim();
	for (let waited = 0; waited < 30 && value === 'Loading options...'; waited++) {
		await page.waitForTimeout(1000);
		value = (await input.inputValue()).trim();
	}
	return value;
}
