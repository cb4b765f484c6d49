// What the tools that drive n8n's editor in Chromium share: a sandbox, a fresh n8n with the packed
// package, the examples provisioned, Chromium, and the owner's sign-in.
import { mkdtempSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { chromium, type Browser, type Page } from 'playwright-core';

import { startSandbox } from '../../sandbox/index';
import { buildAndPack, extractInto } from './package';
import { provision, type ProvisionResult } from './provision';
import { startN8n, type N8nHandle } from './start';

export interface EditorSession {
	sandbox: Awaited<ReturnType<typeof startSandbox>>;
	n8n: N8nHandle;
	browser: Browser;
	provisioned: ProvisionResult;
	stop(): Promise<void>;
}

export async function startEditorSession(options: {
	activate: boolean;
	log?: (s: string) => void;
}): Promise<EditorSession> {
	const sandbox = await startSandbox({ port: 0 });
	const userFolder = mkdtempSync(join(tmpdir(), 'tq-editor-'));
	// CI packs once for every suite (TQ_E2E_TARBALL); alone, the tool builds and packs the tree
	const tarball =
		process.env.TQ_E2E_TARBALL ?? (await buildAndPack({ skipBuild: !!process.env.TQ_SKIP_BUILD }));
	await extractInto(tarball, userFolder);
	const n8n = await startN8n({ port: 0, brokerPort: 0, userFolder });
	const browser = await chromium.launch({
		executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
		args: ['--no-sandbox'],
	});
	const stop = async () => {
		await browser.close();
		await n8n.stop();
		await sandbox.close();
	};
	try {
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
	// n8n's editor is a large page: with CI's suites side by side its first load took over 30 s
	await page.goto(`${n8n.url}/signin`, { timeout: 120_000 });
	await page
		.locator('input[type=email], input[name=emailOrLdapLoginId], input[name=email]')
		.first()
		.fill(n8n.owner.email);
	await page.locator('input[type=password]').first().fill(n8n.owner.password);
	await page.keyboard.press('Enter');
	await page.waitForURL((u) => !u.pathname.includes('signin'), { timeout: 90_000 });
}
