// Shared helpers of the sandbox tests: raw HTTP calls to the API, and a webhook listener.
import http from 'http';
import { connect, type AddressInfo } from 'net';

import { SandboxClient } from '../../sandbox/client';
import { loadDefaultSeed, startSandbox, type Sandbox } from '../../sandbox/index';

export const ALICE = 'alice@example.com';
export const BOB = 'bob@example.com';
export const CAROL = 'carol@example.com';
/** Alice's key in sandbox/seed.json (`tqs_sandbox_2f8a61c4e9d07b35`) */
export const API_KEY = loadDefaultSeed().apiKeys[0].key;

export interface RawResponse {
	status: number;
	headers: http.IncomingHttpHeaders;
	text: string;
	/** parsed JSON, or undefined when the body is not JSON */
	json: unknown;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });

/** Frees the keep-alive sockets (call in afterAll). */
export function closeAgent(): void {
	agent.destroy();
}

/**
 * One HTTP request with node's http module (so status codes, content types and bodies are
 * seen exactly as sent). `token: null` sends no Authorization header.
 */
export async function call(
	baseUrl: string,
	method: string,
	path: string,
	options: {
		token?: string | null;
		body?: unknown;
		rawBody?: string;
		headers?: Record<string, string>;
	} = {},
): Promise<RawResponse> {
	const url = new URL(baseUrl + path);
	const headers: Record<string, string> = { ...options.headers };
	const token = options.token === undefined ? API_KEY : options.token;
	if (token !== null && !headers.Authorization) headers.Authorization = `Token ${token}`;
	let payload: string | undefined = options.rawBody;
	if (options.body !== undefined) payload = JSON.stringify(options.body);
	if (payload !== undefined) {
		headers['Content-Type'] ??= 'application/json';
		headers['Content-Length'] = String(Buffer.byteLength(payload));
	}
	return await new Promise<RawResponse>((resolve, reject) => {
		const req = http.request(url, { method, headers, agent }, (res) => {
			const chunks: Buffer[] = [];
			res.on('data', (c: Buffer) => chunks.push(c));
			res.on('error', reject);
			res.on('end', () => {
				const text = Buffer.concat(chunks).toString('utf8');
				let json: unknown;
				try {
					json = text === '' ? undefined : JSON.parse(text);
				} catch {
					json = undefined;
				}
				resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
			});
		});
		req.on('error', reject);
		req.end(payload);
	});
}

export interface ReceivedHook {
	method: string;
	url: string;
	headers: http.IncomingHttpHeaders;
	body: string;
}

export interface Listener {
	url: string;
	received: ReceivedHook[];
	/** status the listener answers (default 200) */
	status: number;
	waitFor(count: number, timeoutMs?: number): Promise<ReceivedHook[]>;
	/** Records requests but answers none of them until the returned function is called. */
	hold(): () => void;
	close(): Promise<void>;
}

/** A local HTTP listener on 127.0.0.1, random port, recording every request. */
export async function startListener(): Promise<Listener> {
	const received: ReceivedHook[] = [];
	const waiters: Array<() => void> = [];
	const state: { status: number; held?: Array<() => void> } = { status: 200 };
	const server = http.createServer((req, res) => {
		const chunks: Buffer[] = [];
		req.on('data', (c: Buffer) => chunks.push(c));
		req.on('end', () => {
			received.push({
				method: req.method ?? '',
				url: req.url ?? '',
				headers: req.headers,
				body: Buffer.concat(chunks).toString('utf8'),
			});
			const answer = () => {
				res.writeHead(state.status, { 'Content-Type': 'text/plain' });
				res.end('ok');
			};
			if (state.held) state.held.push(answer);
			else answer();
			for (const w of waiters.splice(0)) w();
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const { port } = server.address() as AddressInfo;
	const listener: Listener = {
		url: `http://127.0.0.1:${port}`,
		received,
		get status() {
			return state.status;
		},
		set status(s: number) {
			state.status = s;
		},
		async waitFor(count, timeoutMs = 5000) {
			const deadline = Date.now() + timeoutMs;
			while (received.length < count) {
				if (Date.now() > deadline) {
					throw new Error(`expected ${count} webhook POSTs, got ${received.length}`);
				}
				await new Promise<void>((resolve) => {
					const t = setTimeout(resolve, 50);
					waiters.push(() => {
						clearTimeout(t);
						resolve();
					});
				});
			}
			return received;
		},
		hold() {
			const held: Array<() => void> = [];
			state.held = held;
			return () => {
				state.held = undefined;
				for (const answer of held.splice(0)) answer();
			};
		},
		async close() {
			server.closeAllConnections();
			await new Promise<void>((resolve) => server.close(() => resolve()));
		},
	};
	return listener;
}

export function sleep(ms: number): Promise<void> {
	return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A webhook delivery's timestamp: milliseconds, or no fraction on a whole second. */
export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/;
/** A REST answer's timestamp: microseconds, or no fraction on a whole second. */
export const ISO_MICROS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{6})?Z$/;

/** One request over a plain socket, for answers node's HTTP parser refuses; resolves with every byte read. */
export async function rawHttp(
	baseUrl: string,
	method: string,
	path: string,
	body: unknown,
): Promise<string> {
	const url = new URL(baseUrl);
	const payload = JSON.stringify(body);
	return await new Promise<string>((resolve, reject) => {
		const socket = connect(Number(url.port), url.hostname, () => {
			socket.write(
				`${method} ${path} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Token ${API_KEY}\r\n` +
					`Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(payload)}\r\nConnection: close\r\n\r\n${payload}`,
			);
		});
		const chunks: Buffer[] = [];
		socket.on('data', (c: Buffer) => chunks.push(c));
		socket.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
		socket.on('error', reject);
	});
}

/**
 * One sandbox and one admin client for a test file, reset before each test and closed after the
 * file. Read `env.sandbox` and `env.client` inside tests (they exist once beforeAll has run).
 */
export function useSandbox(): { readonly sandbox: Sandbox; readonly client: SandboxClient } {
	let sandbox: Sandbox | undefined;
	let client: SandboxClient | undefined;
	beforeAll(async () => {
		sandbox = await startSandbox();
		client = new SandboxClient(sandbox.baseUrl, sandbox.adminSecret);
	});
	afterAll(async () => {
		client?.close();
		closeAgent();
		await sandbox?.close();
	});
	beforeEach(async () => await client!.reset());
	return {
		get sandbox() {
			return sandbox!;
		},
		get client() {
			return client!;
		},
	};
}
