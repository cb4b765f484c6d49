// Screenshots of the example workflows in the n8n editor (headless Chromium, logged in as the owner):
//   npx tsx tools/n8n/screenshots.ts            -> docs/images/example-<file>.jpg
// Starts its own sandbox and n8n on free ports, installs the packed package, provisions, shoots, stops.
import { mkdirSync } from 'fs';
import { join } from 'path';

import { signIn, startEditorSession } from './editor-session';
import { REPO_ROOT } from './package';

async function main() {
	const out = join(REPO_ROOT, 'docs', 'images');
	mkdirSync(out, { recursive: true });
	const {
		n8n,
		browser,
		provisioned: result,
		stop,
	} = await startEditorSession({ activate: false, log: (s) => console.log(s) });
	try {
		const page = await browser.newPage({
			viewport: { width: 1440, height: 820 },
			deviceScaleFactor: 1,
		});
		await signIn(page, n8n);
		for (const wf of result.workflows) {
			await page.goto(`${n8n.url}/workflow/${wf.id}`);
			await page.locator('.vue-flow__node').first().waitFor({ timeout: 30_000 });
			await page.waitForTimeout(1500);
			// close anything that floats above the canvas, then fit the view
			await page.keyboard.press('Escape');
			await page
				.locator('.vue-flow__pane, [data-test-id="canvas-wrapper"]')
				.first()
				.click({ position: { x: 5, y: 5 }, force: true })
				.catch(() => undefined);
			await page.keyboard.press('1');
			await page.waitForTimeout(800);
			// JPEG, not PNG: n8n-node build copies every .png and .svg of the tree into dist/
			const file = join(out, `example-${wf.file.replace(/\.json$/, '')}.jpg`);
			await page.screenshot({ path: file, type: 'jpeg', quality: 80 });
			console.log(`saved ${file}`);
		}
	} finally {
		await stop();
	}
}

main().catch((error) => {
	console.error(error);
	process.exit(1);
});
