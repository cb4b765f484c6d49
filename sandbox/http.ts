// Shared by the sandbox's server modules: the request context, the request log, answers, and
// bodies read within bounds.
import type { IncomingMessage, ServerResponse } from 'http';
import type { Faults } from './faults';
import { SandboxError, type Store } from './store';
import type { RequestLogEntry, SeedData } from './types';
import type { WebhookDeliverer } from './webhooks';

export interface ServerContext {
	store: Store;
	faults: Faults;
	webhooks: WebhookDeliverer;
	adminSecret: string;
	/** the seed reset() goes back to */
	seed: SeedData;
	log: RequestLog;
	/**
	 * The Host names the page and the control API answer to (with any port): the loopback names, and
	 * when bound elsewhere this machine's own names and addresses. Any other name is DNS rebinding.
	 */
	hostNames: Set<string>;
}

export const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];

/**
 * Why a browser's request to the page or the control API is refused, if it is. The sandbox runs on
 * people's workstations next to their real n8n: a web page they visit must not drive it. A foreign
 * Host is DNS rebinding (another site's name resolving to 127.0.0.1); a write from another origin
 * is a cross-site request (a simple POST needs no preflight: it would complete tasks as anyone).
 */
export function browserRefusal(
	ctx: ServerContext,
	req: IncomingMessage,
	method: string,
	path: string,
): string | undefined {
	const host = String(req.headers.host ?? '');
	const name = host.replace(/:\d+$/, '').toLowerCase();
	if (!ctx.hostNames.has(name) && !/^127\.\d+\.\d+\.\d+$/.test(name)) {
		const names = [...ctx.hostNames];
		const listed = `${names.slice(0, -1).join(', ')} or ${names[names.length - 1]}`;
		return `This sandbox answers its page only as ${listed}, not as "${host}"`;
	}
	if (!path.startsWith('/app/api/') || method === 'GET' || method === 'HEAD') return undefined;
	const origin = req.headers.origin;
	const site = req.headers['sec-fetch-site'];
	if (
		(origin !== undefined && origin !== `http://${host}`) ||
		(site !== undefined && site !== 'same-origin' && site !== 'none')
	) {
		return `The page's API takes writes from the page itself only (origin ${String(origin ?? site)} refused)`;
	}
	if (!String(req.headers['content-type'] ?? '').startsWith('application/json')) {
		return "The page's API takes JSON only (Content-Type: application/json)";
	}
	return undefined;
}

export const MAX_LOG = 200_000;

export class RequestLog {
	entries: RequestLogEntry[] = [];
	/** API requests being served now */
	inFlight = 0;
	private seq = 0;

	/** One counter for arrivals and answers, so tests can tell what arrived before which answer. */
	private events = 0;

	arrive(): number {
		return ++this.events;
	}

	add(entry: Omit<RequestLogEntry, 'seq' | 'timestamp' | 'answeredAt'>): void {
		this.entries.push({
			seq: ++this.seq,
			timestamp: new Date().toISOString(),
			answeredAt: ++this.events,
			...entry,
		});
		if (this.entries.length > MAX_LOG * 1.5) this.entries = this.entries.slice(-MAX_LOG);
	}

	clear(): void {
		this.entries = [];
	}
}

export interface Answer {
	status: number;
	body: string;
	contentType: string;
	headers?: Record<string, string>;
}

export const JSON_TYPE = 'application/json';
export const HTML_TYPE = 'text/html; charset=utf-8';

export const HTML_404 =
	'<!doctype html>\n<html lang="en">\n<head>\n  <title>Not Found</title>\n</head>\n<body>\n  <h1>Not Found</h1><p>The requested resource was not found on this server.</p>\n</body>\n</html>\n';
export const HTML_500 =
	'<!doctype html>\n<html lang="en">\n<head>\n  <title>Server Error (500)</title>\n</head>\n<body>\n  <h1>Server Error (500)</h1><p></p>\n</body>\n</html>\n';
export const HTML_503 =
	'<html>\r\n<head><title>503 Service Temporarily Unavailable</title></head>\r\n<body>\r\n<center><h1>503 Service Temporarily Unavailable</h1></center>\r\n</body>\r\n</html>\r\n';

export function json(status: number, value: unknown, headers?: Record<string, string>): Answer {
	return { status, body: JSON.stringify(value), contentType: JSON_TYPE, headers };
}

export function envelope(status: number, message: string, field?: string): Answer {
	const error: { message: string; field?: string } = { message };
	if (field) error.field = field;
	return json(status, { status_code: status, errors: [error] });
}

export const html404 = (): Answer => ({ status: 404, body: HTML_404, contentType: HTML_TYPE });
export const html500 = (): Answer => ({ status: 500, body: HTML_500, contentType: HTML_TYPE });

export function send(res: ServerResponse, a: Answer): void {
	if (res.destroyed) return;
	if (a.status === 204 && a.body !== '') {
		// Node's server never writes a body after a 204; the real server does, and an HTTP client
		// then reads those bytes where the next answer should start (llhttp: HPE_INVALID_CONSTANT).
		const length = Buffer.byteLength(a.body);
		res.socket?.end(
			`HTTP/1.1 204 No Content\r\nContent-Type: ${a.contentType}\r\nContent-Length: ${length}\r\n\r\n${a.body}`,
		);
		return;
	}
	const headers: Record<string, string | number> = {
		'Content-Type': a.contentType,
		'Content-Length': Buffer.byteLength(a.body),
		...a.headers,
	};
	res.writeHead(a.status, headers);
	res.end(a.body);
}

export function sleep(ms: number): Promise<void> {
	return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The largest body read (a bulk create of 100,000 tasks is far smaller); a larger one is refused, 413. */
export const MAX_BODY_BYTES = 16 * 1024 * 1024;

/** The most body bytes held across all requests being read at once; past it a request gets 503. */
export const MAX_BYTES_IN_FLIGHT = 64 * 1024 * 1024;
let bytesInFlight = 0;

export function readBody(req: IncomingMessage): Promise<string> {
	return new Promise((resolve, reject) => {
		const chunks: Buffer[] = [];
		let size = 0;
		const release = () => {
			bytesInFlight -= size;
			size = 0;
		};
		const refuse = (error: SandboxError) => {
			release();
			chunks.length = 0;
			req.removeAllListeners('data');
			req.resume(); // the rest is read and dropped, never kept
			reject(error);
		};
		req.on('data', (c: Buffer) => {
			size += c.length;
			bytesInFlight += c.length;
			if (size > MAX_BODY_BYTES)
				return refuse(
					new SandboxError(413, `The request body is larger than ${MAX_BODY_BYTES} bytes`),
				);
			if (bytesInFlight > MAX_BYTES_IN_FLIGHT)
				return refuse(new SandboxError(503, 'Too many request bodies at once; try again'));
			chunks.push(c);
		});
		req.on('end', () => {
			release();
			resolve(
				chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks).toString('utf8'),
			);
		});
		req.on('error', (error) => {
			release();
			reject(error);
		});
	});
}

export function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
	if (text === '') return { ok: true, value: undefined };
	try {
		return { ok: true, value: JSON.parse(text) as unknown };
	} catch {
		return { ok: false };
	}
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
	return typeof v === 'object' && v !== null && !Array.isArray(v);
}
