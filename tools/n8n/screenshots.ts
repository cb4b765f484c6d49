/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports, no-console */
// Screenshots of the example workflows in the n8n editor (headless Chromium, logged in as the owner):
//   npx tsx tools/n8n/screenshots.ts            -> docs/images/example-<file>.jpg
// Starts its own sandbox and n8n on free ports, installs the packed package, provisions, shoots, stops.
import { mkdirSync, mkdtempSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { chromium } from 'playwright-core';

import { startSandbox } from '../../sandbox/index';
import { buildAndPack, extractInto, REPO_ROOT } from './package';
import { provision } from './provision';
import { startN8n } from './start';

async function main() {
	const out = join(REPO_ROOT, 'docs', 'images');
	mkdirSync(out, { recursive: true });
	const sandbox = await startSandbox({ port: 0 });
	const userFolder = mkdtempSync(join(tmpdir(), 'tq-shots-'));
	await extractInto(await buildAndPack({ skipBuild: !!process.env.TQ_SKIP_BUILD }), userFolder);
	const n8n = await startN8n({ port: 0, brokerPort: 0, userFolder });
	const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--no-sandbox'] });
	try {
		const result = await provision(
			n8n,
			{ baseUrl: sandbox.baseUrl, apiKey: sandbox.apiKey, organizationId: sandbox.organizationId },
			{ activate: false, log: (s) => console.log(s) },
		);
		const page = await browser.newPage({ viewport: { width: 1440, height: 820 }, deviceScaleFactor: 1 });
		await page.goto(`${n8n.url}/signin`);
		await page.locator('input[type=email], input[name=emailOrLdapLoginId], input[name=email]').first().fill(n8n.owner.email);
		await page.locator('input[type=password]').first().fill(n8n.owner.password);
		await page.keyboard.press('Enter');
		await page.waitForURL((u) => !u.pathname.includes('signin'), { timeout: 30_000 });
		for (const wf of result.workflows) {
			await page.goto(`${n8n.url}/workflow/${wf.id}`);
			await page.locator('.vue-flow__node').first().waitFor({ timeout: 30_000 });
			await page.waitForTimeout(1500);
			// close anything that floats above the canvas, then fit the view
			await page.keyboard.press('Escape');
			await page.locator('.vue-flow__pane, [data-test-id="canvas-wrapper"]').first().click({ position: { x: 5, y: 5 }, force: true }).catch(() => undefined);
			await page.keyboard.press('1');
			await page.waitForTimeout(800);
			// JPEG, not PNG: n8n-node build copies every .png and .svg of the tree into dist/
			const file = join(out, `example-${wf.file.replace(/\.json$/, '')}.jpg`);
			await page.screenshot({ path: file, type: 'jpeg', quality: 80 });
			console.log(`saved ${file}`);
		}
	} finally {
		await browser.close();
		await n8n.stop();
		await sandbox.close();
	}
}

main().catch((error) => {
	console.error(error);
	process.exit(1);
});
