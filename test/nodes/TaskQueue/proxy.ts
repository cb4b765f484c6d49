// A pass-through HTTP proxy in front of the sandbox, with a hook that runs before each request is
// forwarded: tests use it to make things happen at an exact moment (completions between two
// pages) or to alter what a request carries.
import http from 'http';
import type { AddressInfo } from 'net';

export interface ProxiedRequest {
	method: string;
	url: string;
	body: string;
}

export interface TestProxy {
	baseUrl: string;
	close(): Promise<void>;
}

export async function startProxy(
	target: string,
	hook: (request: ProxiedRequest) => Promise<ProxiedRequest | void> | ProxiedRequest | void,
): Promise<TestProxy> {
	const upstream = new URL(target);
	const agent = new http.Agent({ keepAlive: true });
	const server = http.createServer((req, res) => {
		const chunks: Buffer[] = [];
		req.on('data', (chunk: Buffer) => chunks.push(chunk));
		req.on('end', () => {
			void (async () => {
				const original = {
					method: req.method ?? 'GET',
					url: req.url ?? '/',
					body: Buffer.concat(chunks).toString('utf8'),
				};
				const request = (await hook(original)) ?? original;
				const headers = {
					...req.headers,
					host: upstream.host,
					'content-length': String(Buffer.byteLength(request.body)),
				};
				const forward = http.request(
					{
						host: upstream.hostname,
						port: upstream.port,
						method: request.method,
						path: request.url,
						headers,
						agent,
					},
					(answer) => {
						res.writeHead(answer.statusCode ?? 502, answer.headers);
						answer.pipe(res);
					},
				);
				forward.on('error', () => res.destroy());
				forward.end(request.body);
			})().catch(() => res.destroy());
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const { port } = server.address() as AddressInfo;
	return {
		baseUrl: `http://127.0.0.1:${port}`,
		close: async () => {
			agent.destroy();
			server.closeAllConnections();
			await new Promise<void>((resolve) => server.close(() => resolve()));
		},
	};
}
