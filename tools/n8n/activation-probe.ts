// What a user sees when the Task Queue Trigger cannot register, in the real editor (headless
// Chromium), for each case of a failed activation:
//   npx tsx tools/n8n/activation-probe.ts [--version 1|2] [--out DIR]
// Cases: another address set on the queue (Replace Existing Webhook off), a self-hosted 1.0.x server
// on the standard paths (HTML 500), an n8n address the service refuses (a host without a dot).
// Prints, per case, the editor's messages, whether n8n reports the workflow active, and n8n's
// activation error; saves a screenshot of each editor.
import { mkdirSync, mkdtempSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { chromium, type Browser } from 'playwright-core';

import { SandboxClient } from '../../sandbox/client';
import { startSandbox, type Sandbox } from '../../sandbox/index';
import { buildAndPack, extractInto } from './package';
import { ensureCredential } from './provision';
import { startN8n, type N8nHandle } from './start';

interface Case {
	name: string;
	/** n8n's WEBHOOK_URL host, where the case needs one the service refuses. */
	webhookHost?: string;
	prepare(client: SandboxClient): Promise<void>;
}

const CASES: Case[] = [
	{
		name: 'foreign-target',
		prepare: async (client) => {
			await client.setWebhook(101, 'https://hooks.example.com/intake');
		},
	},
	{ name: 'legacy-server', prepare: async (client) => await client.setLegacyDefect(true) },
	{ name: 'refused-address', webhookHost: 'n8nbox', prepare: async () => undefined },
];

function arg(name: string): string | undefined {
	const i = process.argv.indexOf(`--${name}`);
	return i === -1 ? undefined : process.argv[i + 1];
}

async function probe(
	browser: Browser,
	sandbox: Sandbox,
	version: string,
	c: Case,
	tarball: string,
	out: string,
) {
	const client = new SandboxClient(sandbox.baseUrl, sandbox.adminSecret);
	await client.reset();
	const userFolder = mkdtempSync(join(tmpdir(), 'tq-probe-'));
	await extractInto(tarball, userFolder);
	let n8n: N8nHandle | undefined;
	try {
		const port = 0;
		n8n = await startN8n({ port, brokerPort: 0, userFolder, version });
		if (c.webhookHost) {
			// the same n8n, restarted with a WEBHOOK_URL the service refuses
			await n8n.stop();
			n8n = await startN8n({
				port: n8n.port,
				brokerPort: 0,
				userFolder,
				version,
				env: { WEBHOOK_URL: `http://${c.webhookHost}:${n8n.port}/` },
			});
		}
		const credentialId = await ensureCredential(n8n, {
			baseUrl: sandbox.baseUrl,
			apiKey: sandbox.apiKey,
			organizationId: sandbox.organizationId,
			apiPaths: 'queues',
		});
		await c.prepare(client);
		const created = await n8n.api.post('/workflows', {
			name: `Probe ${c.name}`,
			settings: { executionOrder: 'v1' },
			nodes: [
				{
					id: 'trigger-1',
					name: 'Task Queue Trigger',
					type: 'n8n-nodes-task-queue.taskQueueTrigger',
					typeVersion: 1.1,
					position: [0, 0],
					webhookId: `probe-${c.name}`,
					parameters: {
						event: 'taskCompleted',
						queue: { __rl: true, mode: 'id', value: '101' },
						options: {},
					},
					credentials: { taskQueueApi: { id: credentialId, name: 'Task Queue sandbox' } },
				},
			],
			connections: {},
		});
		const id = String(created.data.id);

		const page = await browser.newPage({ viewport: { width: 1440, height: 820 } });
		await page.goto(`${n8n.url}/signin`);
		await page
			.locator('input[type=email], input[name=emailOrLdapLoginId], input[name=email]')
			.first()
			.fill(n8n.owner.email);
		await page.locator('input[type=password]').first().fill(n8n.owner.password);
		await page.keyboard.press('Enter');
		await page.waitForURL((u) => !u.pathname.includes('signin'), { timeout: 30_000 });
		await page.goto(`${n8n.url}/workflow/${id}`);
		await page.locator('.vue-flow__node').first().waitFor({ timeout: 30_000 });
		await page.waitForTimeout(1500);

		// as a user: Publish in the editor (n8n 2.x), or the Active switch (n8n 1.x)
		const publish = page.getByRole('button', { name: 'Publish', exact: true });
		if (await publish.count()) {
			await publish.first().click();
			await page.waitForTimeout(1500);
			await page.screenshot({ path: join(out, `activation-${version}-${c.name}-dialog.png`) });
			const confirm = page
				.locator('.el-dialog, [role=dialog]')
				.getByRole('button', { name: /publish/i });
			if (await confirm.count()) await confirm.last().click();
		} else {
			await page.locator('[data-test-id="workflow-activate-switch"]').first().click();
		}
		// n8n 2.x publishes in the background (an outbox polled every 15 s): wait for the editor to settle
		const clicked = Date.now();
		const deadline = clicked + 120_000;
		await page.waitForTimeout(3000);
		while (Date.now() < deadline && (await page.getByText(/Publishing/).count()) > 0)
			await page.waitForTimeout(500);
		await page.waitForTimeout(1500);
		const settledAfterMs = Date.now() - clicked;
		const toasts = await page.locator('.el-notification, [role=alert], .n8n-toast').allInnerTexts();
		await page.screenshot({ path: join(out, `activation-${version}-${c.name}.png`) });
		const after = await n8n.api.get(`/workflows/${id}`);
		const activationError = await n8n.rest
			.get(`/active-workflows/error/${id}`, { validateStatus: () => true })
			.then((r) => r.data as unknown);
		const live =
			((await client.getQueue(101)) as { webhook?: { target?: string } }).webhook?.target ?? '';
		console.log(
			JSON.stringify(
				{
					case: c.name,
					n8n: n8n.version,
					settledAfterMs,
					activeAfter: (after.data as { active?: boolean }).active,
					editorMessages: toasts.map((t) => t.replace(/\s+/g, ' ').trim()),
					activationError,
					queueWebhook: live,
					n8nLog: n8n.logs
						.text()
						.split('\n')
						.filter(
							(line) =>
								/Task Queue|activat|publicat|queue 101|trigger/i.test(line) &&
								!/migration/i.test(line),
						)
						.slice(-12),
				},
				null,
				2,
			),
		);
		await page.close();
	} finally {
		client.close();
		await n8n?.stop();
	}
}

async function main() {
	const version = arg('version') ?? '2';
	const out = arg('out') ?? join(tmpdir(), 'tq-activation-probe');
	mkdirSync(out, { recursive: true });
	const tarball = await buildAndPack({ skipBuild: !!process.env.TQ_SKIP_BUILD });
	const sandbox = await startSandbox({ port: 0 });
	const browser = await chromium.launch({
		executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
		args: ['--no-sandbox'],
	});
	try {
		for (const c of CASES) {
			if (arg('case') && arg('case') !== c.name) continue;
			await probe(browser, sandbox, version, c, tarball, out);
		}
	} finally {
		await browser.close();
		await sandbox.close();
	}
	console.log(`screenshots in ${out}`);
}

main().catch((error) => {
	console.error(error);
	process.exit(1);
});
