// What the sandbox refuses before it does any work: a body too large to keep, an unauthenticated
// control call of any size, and a Host name that is not this machine's (also with --host 0.0.0.0).
import http from 'http';
import { hostname } from 'os';
import { Readable } from 'stream';

import { MAX_BODY_BYTES } from '../../sandbox/server';
import { loadDefaultSeed, startSandbox, type Sandbox } from '../../sandbox/index';

let sandbox: Sandbox;
afterEach(async () => await sandbox?.close());

/** A raw request whose body is streamed, never held whole by the client. */
function send(
	port: number,
	options: { method: string; path: string; headers?: Record<string, string>; bytes?: number },
): Promise<{ status: number; body: string }> {
	return new Promise((resolve, reject) => {
		const req = http.request(
			{
				host: '127.0.0.1',
				port,
				method: options.method,
				path: options.path,
				headers: options.headers,
			},
			(res) => {
				let body = '';
				res.on('data', (chunk: Buffer) => (body += chunk.toString()));
				res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
			},
		);
		req.on('error', reject);
		if (!options.bytes) return void req.end();
		const chunk = Buffer.alloc(1024 * 1024, 'a');
		let left = options.bytes;
		Readable.from(
			(function* () {
				while (left > 0) {
					const size = Math.min(left, chunk.length);
					left -= size;
					yield chunk.subarray(0, size);
				}
			})(),
		)
			.on('error', () => undefined)
			.pipe(req)
			.on('error', () => undefined);
	});
}

const portOf = (s: Sandbox) => Number(new URL(s.baseUrl).port);

test('an unauthenticated 600 MB POST to the control API is refused without being kept; the sandbox goes on', async () => {
	sandbox = await startSandbox();
	const before = process.memoryUsage().rss;
	const refused = await send(portOf(sandbox), {
		method: 'POST',
		path: '/_sandbox/reset',
		headers: { 'content-type': 'application/json' },
		bytes: 600 * 1024 * 1024,
	});
	expect(refused.status).toBe(401);
	expect(process.memoryUsage().rss - before).toBeLessThan(200 * 1024 * 1024);
	const state = await send(portOf(sandbox), {
		method: 'GET',
		path: '/_sandbox/state',
		headers: { 'x-sandbox-admin': sandbox.adminSecret },
	});
	expect(state.status).toBe(200);
}, 60_000);

test('a body over the limit on the service API is refused (413) and never kept', async () => {
	sandbox = await startSandbox();
	const refused = await send(portOf(sandbox), {
		method: 'POST',
		path: '/orgs/1/queues/101/tasks',
		headers: { 'content-type': 'application/json' },
		bytes: MAX_BODY_BYTES + 1024 * 1024,
	});
	expect(refused.status).toBe(413);
}, 60_000);

test("bound to every address (--host 0.0.0.0), the page answers this machine's names, never a rebound one", async () => {
	sandbox = await startSandbox({ host: '0.0.0.0' });
	const port = portOf(sandbox);
	const page = async (host: string) =>
		(await send(port, { method: 'GET', path: '/app/', headers: { host: `${host}:${port}` } }))
			.status;
	expect(await page('attacker.example')).toBe(403);
	expect(await page('evil.test')).toBe(403);
	expect(
		(
			await send(port, {
				method: 'GET',
				path: '/_sandbox/state',
				headers: { host: `attacker.example:${port}`, 'x-sandbox-admin': sandbox.adminSecret },
			})
		).status,
	).toBe(403);
	expect(await page('localhost')).toBe(200);
	expect(await page('127.0.0.1')).toBe(200);
	expect(await page(hostname())).toBe(200);
});

/** A request that sends its headers and `bytes` of body, then holds the rest back until `finish()`. */
function holdOpen(port: number, path: string, token: string, bytes: number) {
	let finish = () => undefined as void;
	const answered = new Promise<number>((resolve, reject) => {
		const req = http.request(
			{
				host: '127.0.0.1',
				port,
				method: 'POST',
				path,
				headers: { authorization: `Token ${token}`, 'content-type': 'application/json' },
			},
			(res) => {
				res.resume();
				resolve(res.statusCode ?? 0);
			},
		);
		req.on('error', () => resolve(0));
		req.write(Buffer.alloc(bytes, ' '));
		finish = () => void req.end(']');
		void reject;
	});
	return { answered, finish: () => finish() };
}

test('an API call with a wrong key is refused before its body is read: 401 while the body is still on its way', async () => {
	sandbox = await startSandbox();
	const call = holdOpen(portOf(sandbox), '/orgs/1/queues/101/tasks/create', 'tqs_wrong', 1024);
	// answered although the body never ends
	expect(await call.answered).toBe(401);
	call.finish();
});

test('request bodies held at once are capped across requests: past 64 MB the next gets 503, and the sandbox goes on', async () => {
	sandbox = await startSandbox();
	const key = loadDefaultSeed().apiKeys[0].key;
	const calls = Array.from({ length: 5 }, () =>
		holdOpen(portOf(sandbox), '/orgs/1/queues/101/tasks/create', key, 15 * 1024 * 1024),
	);
	const first = await Promise.race(calls.map((c) => c.answered));
	expect(first).toBe(503);
	for (const c of calls) c.finish();
	await Promise.all(calls.map((c) => c.answered));
	const after = await send(portOf(sandbox), {
		method: 'GET',
		path: '/orgs/1/queues',
		headers: { authorization: `Token ${key}` },
	});
	expect(after.status).toBe(200);
}, 60_000);
