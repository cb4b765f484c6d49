// Issue 27, 3: the sandbox runs on people's workstations next to their real n8n, so a web page they
// visit must not drive it. In real headless Chromium: a page served from another origin posts to
// the people's page API (a simple POST, no preflight) and cannot complete a task; the people's page
// itself still can. Over HTTP: a foreign Host (DNS rebinding) is refused, so is a write without JSON.
import http from 'http';
import { existsSync, mkdtempSync, rmSync } from 'fs';
import type { AddressInfo } from 'net';
import { tmpdir } from 'os';
import { join } from 'path';
import { chromium, type BrowserContext } from 'playwright-core';

import { SandboxClient } from '../../sandbox/client';
import { startSandbox, type Sandbox } from '../../sandbox/index';
import { ALICE } from './helpers';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const QUEUE = 101;

let sandbox: Sandbox;
let client: SandboxClient;
let browser: BrowserContext;
let profile: string;
let attacker: { url: string; close(): Promise<void> };

beforeAll(async () => {
	if (!existsSync(CHROMIUM))
		throw new Error(`${CHROMIUM} is missing: run tools/install-chromium.sh`);
	sandbox = await startSandbox();
	client = new SandboxClient(sandbox.baseUrl, sandbox.adminSecret);
	// a page on another origin (another port is another origin) that tries to complete a task
	const server = http.createServer((req, res) => {
		const target = new URL(req.url ?? '/', 'http://x').searchParams.get('target') ?? '';
		res.writeHead(200, { 'content-type': 'text/html' });
		res.end(`<!doctype html><title>a page on the internet</title><script>
			window.result = fetch(${JSON.stringify(target)}, { method: 'POST', mode: 'no-cors', headers: { 'Content-Type': 'text/plain' }, body: JSON.stringify({ email: ${JSON.stringify(ALICE)}, data: { decision: 'approve' } }) })
				.then(() => 'sent', (e) => 'failed: ' + e.message);
		</script>`);
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	attacker = {
		url: `http://localhost:${(server.address() as AddressInfo).port}`,
		close: async () => await new Promise<void>((resolve) => server.close(() => resolve())),
	};
	profile = mkdtempSync(join(tmpdir(), 'tq-chromium-'));
	browser = await chromium.launchPersistentContext(profile, {
		executablePath: CHROMIUM,
		headless: true,
		args: [
			'--headless',
			'--no-sandbox',
			'--disable-gpu',
			'--no-first-run',
			'--disable-background-networking',
		],
	});
});

afterAll(async () => {
	await browser?.close();
	if (profile) rmSync(profile, { recursive: true, force: true });
	await attacker?.close();
	client?.close();
	await sandbox?.close();
});

test("a page from another origin cannot complete a task; the people's page still can", async () => {
	const { ids } = await client.createTasks(QUEUE, [{ customer_message: 'target', order_total: 5 }]);
	const completeUrl = `${sandbox.baseUrl}/app/api/queues/${QUEUE}/tasks/${ids[0]}/complete`;
	const page = await browser.newPage();
	try {
		await page.goto(`${attacker.url}/?target=${encodeURIComponent(completeUrl)}`);
		expect(
			await page.evaluate(
				async () => await (window as unknown as { result: Promise<string> }).result,
			),
		).toBe('sent');
		expect((await client.tasks(QUEUE)).find((t) => t.id === ids[0])?.status).not.toBe('completed');

		// the people's page, on its own origin, completes the same task
		await page.goto(`${sandbox.pageUrl}queues/${QUEUE}`);
		await page.getByTestId('user-select').selectOption(ALICE);
		const answer = await page.evaluate(
			async ([url]) => {
				const res = await fetch(url, {
					method: 'POST',
					headers: { 'Content-Type': 'application/json' },
					body: JSON.stringify({ email: 'alice@example.com', data: { decision: 'approve' } }),
				});
				return res.status;
			},
			[completeUrl.replace(sandbox.baseUrl, '')],
		);
		expect(answer).toBe(200);
		expect((await client.tasks(QUEUE)).find((t) => t.id === ids[0])?.status).toBe('completed');
	} finally {
		await page.close();
	}
});

async function raw(
	path: string,
	headers: Record<string, string>,
	method = 'GET',
	body?: string,
): Promise<{ status: number; text: string }> {
	const url = new URL(path, sandbox.baseUrl);
	return await new Promise((resolve, reject) => {
		const req = http.request(url, { method, headers }, (res) => {
			let text = '';
			res.on('data', (c: Buffer) => (text += c.toString()));
			res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
		});
		req.on('error', reject);
		req.end(body);
	});
}

test('a foreign Host (DNS rebinding) is refused on the page and its API; loopback names are served', async () => {
	const port = new URL(sandbox.baseUrl).port;
	const rebound = await raw('/app/api/queues', { Host: `attacker.example:${port}` });
	expect(rebound.status).toBe(403);
	expect(rebound.text).toContain(
		`This sandbox answers its page only as localhost, 127.0.0.1 or [::1], not as \\"attacker.example:${port}\\"`,
	);
	expect((await raw('/app/', { Host: `evil.test:${port}` })).status).toBe(403);
	for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`]) {
		expect((await raw('/app/', { Host: host })).status).toBe(200);
	}
	// the service's own API stays reachable through a proxy's Host (it needs the API key anyway)
	expect(
		(
			await raw('/orgs/1/queues', {
				Host: `proxy.internal:8000`,
				Authorization: `Token ${sandbox.apiKey}`,
			})
		).status,
	).toBe(200);
});

test("a write to the page's API from another origin, or without JSON, is refused", async () => {
	const { ids } = await client.createTasks(QUEUE, [{ customer_message: 'target', order_total: 5 }]);
	const path = `/app/api/queues/${QUEUE}/tasks/${ids[0]}/complete`;
	const host = new URL(sandbox.baseUrl).host;
	const body = JSON.stringify({ email: ALICE, data: { decision: 'approve' } });
	expect(
		(
			await raw(
				path,
				{ Host: host, Origin: 'https://evil.example', 'Content-Type': 'application/json' },
				'POST',
				body,
			)
		).status,
	).toBe(403);
	expect(
		(
			await raw(
				path,
				{ Host: host, 'Sec-Fetch-Site': 'cross-site', 'Content-Type': 'application/json' },
				'POST',
				body,
			)
		).status,
	).toBe(403);
	expect((await raw(path, { Host: host, 'Content-Type': 'text/plain' }, 'POST', body)).status).toBe(
		403,
	);
	expect((await client.tasks(QUEUE)).find((t) => t.id === ids[0])?.status).not.toBe('completed');
	expect(
		(
			await raw(
				path,
				{ Host: host, Origin: `http://${host}`, 'Content-Type': 'application/json' },
				'POST',
				body,
			)
		).status,
	).toBe(200);
});
