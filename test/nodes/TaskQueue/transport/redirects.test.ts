// Issue 27, 1: the API key never follows a redirect to another origin. A Base URL that answers 302 or
// 307 with a Location elsewhere (an SSO page, a moved host, an open redirect): n8n's HTTP helper
// would follow it and send `Authorization: Token …` again (and, on 307, the task's data). The node
// does not follow it, and says where it pointed and what to set instead.
import http from 'http';
import type { AddressInfo } from 'net';

import { runActionNode } from '../../../helpers/n8n';
import { locator, node, startEnv, type TestEnv } from '../env';

let env: TestEnv;
let elsewhere: {
	url: string;
	received: Array<{ method?: string; url?: string; authorization?: string; body: string }>;
	close(): Promise<void>;
};
let redirector: { url: string; status: number; close(): Promise<void> };

async function listen(
	handler: http.RequestListener,
): Promise<{ server: http.Server; url: string }> {
	const server = http.createServer(handler);
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

const closing = (server: http.Server) => async () =>
	await new Promise<void>((resolve) => server.close(() => resolve()));

beforeAll(async () => {
	env = await startEnv();
	const received: typeof elsewhere.received = [];
	const other = await listen((req, res) => {
		const chunks: Buffer[] = [];
		req.on('data', (c: Buffer) => chunks.push(c));
		req.on('end', () => {
			received.push({
				method: req.method,
				url: req.url,
				authorization: req.headers.authorization,
				body: Buffer.concat(chunks).toString(),
			});
			res.writeHead(200, { 'content-type': 'application/json' });
			res.end('[]');
		});
	});
	elsewhere = { url: other.url, received, close: closing(other.server) };
	const state = { status: 302 };
	const redirecting = await listen((req, res) => {
		res.writeHead(state.status, {
			location: `${other.url}/login?next=${encodeURIComponent(req.url ?? '')}`,
		});
		res.end();
	});
	redirector = {
		url: redirecting.url,
		get status() {
			return state.status;
		},
		set status(value: number) {
			state.status = value;
		},
		close: closing(redirecting.server),
	};
});
afterAll(async () => {
	await env.close();
	await elsewhere.close();
	await redirector.close();
});
beforeEach(() => (elsewhere.received.length = 0));

test.each([
	[302, 'Queue > Get Many', { resource: 'queue', operation: 'getMany', returnAll: true }],
	[
		307,
		'Task > Create',
		{
			resource: 'task',
			operation: 'create',
			queue: locator(101),
			taskData: {
				mappingMode: 'defineBelow',
				value: { customer_message: 'hello', order_total: 1 },
				matchingColumns: [],
				schema: [],
			},
			options: {},
		},
	],
])(
	'a %i to another origin: %s sends nothing there and names where it pointed',
	async (status, _, parameters) => {
		redirector.status = status;
		const credentials = env.credentials({ baseUrl: redirector.url });
		const { error } = await runActionNode({
			types: { taskQueue: node },
			node: { type: 'taskQueue', parameters: parameters as never },
			input: [{}],
			credentials,
		});
		expect(elsewhere.received).toEqual([]);
		expect(error).toMatchObject({
			name: 'NodeApiError',
			message: expect.stringMatching(
				new RegExp(
					`^The service redirected the request to ${elsewhere.url} \\(HTTP ${status}\\) instead of answering: could not `,
				),
			),
		});
		expect((error as unknown as { description: string }).description).toBe(
			`The node does not follow redirects, so the API key stays with ${redirector.url}. If ${elsewhere.url} is the service's own address, set the credential's Base URL to it; otherwise check the Base URL (a proxy or a sign-in page answers there).`,
		);
		expect(JSON.stringify(error)).not.toContain(String(credentials.data.apiKey));
	},
);
