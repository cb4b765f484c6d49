// The sandbox's HTTP server: the Task Queue Service API (both nouns), test control under
// /_sandbox/, and the people's page under /app/.
import { readFileSync } from 'fs';
import type { IncomingMessage, ServerResponse } from 'http';
import { join } from 'path';

import type { Faults } from './faults';
import { SandboxError, type QueueState, type Store, type UserState } from './store';
import type { FaultConfig, RequestLogEntry, RouteFaultRule, SeedData } from './types';
import { CrashError, isValidUrl, ValidationError } from './validate';
import type { WebhookDeliverer } from './webhooks';
import { resetRealism, setRealism, type Realism } from './realism';

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
function browserRefusal(
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

const MAX_LOG = 200_000;

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

interface Answer {
	status: number;
	body: string;
	contentType: string;
	headers?: Record<string, string>;
}

const JSON_TYPE = 'application/json';
const HTML_TYPE = 'text/html; charset=utf-8';

const HTML_404 =
	'<!doctype html>\n<html lang="en">\n<head>\n  <title>Not Found</title>\n</head>\n<body>\n  <h1>Not Found</h1><p>The requested resource was not found on this server.</p>\n</body>\n</html>\n';
const HTML_500 =
	'<!doctype html>\n<html lang="en">\n<head>\n  <title>Server Error (500)</title>\n</head>\n<body>\n  <h1>Server Error (500)</h1><p></p>\n</body>\n</html>\n';
const HTML_503 =
	'<html>\r\n<head><title>503 Service Temporarily Unavailable</title></head>\r\n<body>\r\n<center><h1>503 Service Temporarily Unavailable</h1></center>\r\n</body>\r\n</html>\r\n';

function json(status: number, value: unknown, headers?: Record<string, string>): Answer {
	return { status, body: JSON.stringify(value), contentType: JSON_TYPE, headers };
}

function envelope(status: number, message: string, field?: string): Answer {
	const error: { message: string; field?: string } = { message };
	if (field) error.field = field;
	return json(status, { status_code: status, errors: [error] });
}

const html404 = (): Answer => ({ status: 404, body: HTML_404, contentType: HTML_TYPE });
const html500 = (): Answer => ({ status: 500, body: HTML_500, contentType: HTML_TYPE });

function send(res: ServerResponse, a: Answer): void {
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

function sleep(ms: number): Promise<void> {
	return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The largest body read (a bulk create of 100,000 tasks is far smaller); a larger one is refused, 413. */
export const MAX_BODY_BYTES = 16 * 1024 * 1024;

/** The most body bytes held across all requests being read at once; past it a request gets 503. */
export const MAX_BYTES_IN_FLIGHT = 64 * 1024 * 1024;
let bytesInFlight = 0;

function readBody(req: IncomingMessage): Promise<string> {
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

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
	if (text === '') return { ok: true, value: undefined };
	try {
		return { ok: true, value: JSON.parse(text) as unknown };
	} catch {
		return { ok: false };
	}
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
	return typeof v === 'object' && v !== null && !Array.isArray(v);
}

// ---- API routing -------------------------------------------------------------------------

type RouteName =
	| 'listQueues'
	| 'getQueue'
	| 'createTask'
	| 'completed'
	| 'flush'
	| 'getWebhook'
	| 'setWebhook';

interface Match {
	route: RouteName;
	noun: 'queues' | 'workflows';
	org: number;
	queueId: number | null;
}

const API_RE =
	/^\/orgs\/(\d+)\/(queues|workflows)(?:\/(\d+)(\/tasks\/create|\/tasks\/completed|\/flush|\/webhook)?)?$/;
const ADMIN_ROUTES: ReadonlySet<RouteName> = new Set([
	'createTask',
	'completed',
	'getWebhook',
	'setWebhook',
]);

/** Matches an API path; 'notFound' for an HTML 404, 'method' for a 405. */
function matchApi(method: string, path: string): Match | 'notFound' | 'method' {
	const m = API_RE.exec(path);
	if (!m) return 'notFound';
	const org = Number(m[1]);
	const noun = m[2] as Match['noun'];
	const queueId = m[3] === undefined ? null : Number(m[3]);
	const tail = m[4];
	let route: RouteName | null = null;
	if (queueId === null) route = method === 'GET' ? 'listQueues' : null;
	else if (tail === undefined) route = method === 'GET' ? 'getQueue' : null;
	else if (tail === '/tasks/create') route = method === 'POST' ? 'createTask' : null;
	else if (tail === '/tasks/completed') route = method === 'GET' ? 'completed' : null;
	else if (tail === '/flush') route = method === 'PUT' ? 'flush' : null;
	else if (tail === '/webhook') {
		if (method === 'GET') route = 'getWebhook';
		else if (method === 'PUT') route = 'setWebhook';
	}
	if (!route) return 'method';
	return { route, noun, org, queueId };
}

const ANY_ORGANIZATION: ReadonlySet<RouteName> = new Set([
	'createTask',
	'getWebhook',
	'setWebhook',
]);

const LEGACY_BROKEN: ReadonlySet<RouteName> = new Set([
	'getQueue',
	'getWebhook',
	'setWebhook',
	'flush',
]);

function parseQuery(raw: string): Record<string, string> {
	const out: Record<string, string> = {};
	if (!raw) return out;
	for (const [k, v] of new URLSearchParams(raw)) out[k] = v;
	return out;
}

const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;

function parseDay(value: string | undefined): string | undefined {
	if (value === undefined) return undefined;
	const m = DATE_ONLY.exec(value);
	if (!m) return undefined;
	const d = new Date(`${value}T00:00:00.000Z`);
	if (Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== value) return undefined;
	return value;
}

/** DRF's _positive_int(strict=True) with a cutoff. */
function positiveInt(
	value: string | undefined,
	fallback: number,
	strict: boolean,
	cutoff?: number,
): number {
	if (value === undefined || !/^\s*[+-]?\d+\s*$/.test(value)) return fallback;
	const n = parseInt(value, 10);
	if (n < 0 || (strict && n === 0)) return fallback;
	return cutoff !== undefined ? Math.min(n, cutoff) : n;
}

function pageUrl(
	req: IncomingMessage,
	path: string,
	rawQuery: string,
	set: Record<string, number | null>,
): string {
	const params = new URLSearchParams(rawQuery);
	for (const [k, v] of Object.entries(set)) {
		if (v === null) params.delete(k);
		else params.set(k, String(v));
	}
	const qs = params.toString();
	return `http://${req.headers.host ?? 'localhost'}${path}${qs ? `?${qs}` : ''}`;
}

function authenticate(store: Store, req: IncomingMessage): UserState | Answer {
	const header = req.headers.authorization;
	if (!header) return envelope(401, 'Authentication credentials were not provided.');
	const m = /^token\s+(\S+)\s*$/i.exec(header);
	if (!m) {
		if (/^token\s*$/i.test(header)) {
			return envelope(401, 'Invalid token header. No credentials provided.');
		}
		return envelope(401, 'Authentication credentials were not provided.');
	}
	const user = store.userByKey(m[1]);
	if (!user) return envelope(401, 'Invalid token.');
	return user;
}

function handleApi(
	ctx: ServerContext,
	req: IncomingMessage,
	match: Match,
	path: string,
	rawQuery: string,
	query: Record<string, string>,
	rawBody: string,
): Answer {
	const { store } = ctx;
	const auth = authenticate(store, req);
	if (!('id' in auth)) return auth;
	const user = auth;
	const admin = user.memberships.get(match.org);
	if (admin === undefined || (ADMIN_ROUTES.has(match.route) && !admin)) {
		return envelope(403, 'You do not have permission to perform this action.');
	}
	if (ctx.faults.legacyDefect && match.noun === 'queues' && LEGACY_BROKEN.has(match.route)) {
		return html500();
	}
	if (match.route === 'listQueues') {
		return json(
			200,
			store.queuesOf(match.org).map((q) => store.queueSummary(q)),
		);
	}
	const queue = store.queues.get(match.queueId ?? -1);
	// Real deployments check the organization in the path only for the user's membership; these
	// routes then find the queue by its id alone, in any organization (real-deployments: tenancy).
	const anyOrganization = ANY_ORGANIZATION.has(match.route);
	if (!queue && match.route === 'getWebhook') return json(200, { target: '' });
	if (!queue || (!anyOrganization && queue.organizationId !== match.org)) {
		return envelope(404, 'Not found.');
	}
	switch (match.route) {
		case 'getQueue':
			return json(200, store.queueDetail(queue));
		case 'createTask':
			return createTask(store, queue, rawBody);
		case 'completed':
			return completed(store, queue, req, path, rawQuery, query);
		case 'flush':
			store.flush(queue);
			return { status: 200, body: '', contentType: HTML_TYPE };
		case 'getWebhook':
			return json(200, store.webhookObject(queue));
		case 'setWebhook':
			return setWebhook(store, queue, user, rawBody);
	}
	return html404();
}

function createTask(store: Store, queue: QueueState, rawBody: string): Answer {
	const parsed = parseJson(rawBody);
	if (!parsed.ok) return envelope(400, 'JSON parse error - Expecting value');
	const body = parsed.value;
	const data = isPlainObject(body) ? body.data : undefined;
	if (!isPlainObject(data) || Object.keys(data).length === 0)
		return envelope(400, 'No data', 'data');
	try {
		return json(201, store.createTask(queue, data));
	} catch (error) {
		if (error instanceof ValidationError) return envelope(400, error.message, error.field);
		if (error instanceof CrashError) return html500();
		throw error;
	}
}

function completed(
	store: Store,
	queue: QueueState,
	req: IncomingMessage,
	path: string,
	rawQuery: string,
	query: Record<string, string>,
): Answer {
	const limit = positiveInt(query.limit, 100, true, 1000);
	const offset = positiveInt(query.offset, 0, false);
	const all = store.completedNewestFirst(
		queue,
		parseDay(query.start_date),
		parseDay(query.end_date),
	);
	const count = all.length;
	const tasks = all.slice(offset, offset + limit).map((s) => s.task);
	const next =
		offset + limit < count ? pageUrl(req, path, rawQuery, { limit, offset: offset + limit }) : null;
	let previous: string | null = null;
	if (offset > 0) {
		previous =
			offset - limit <= 0
				? pageUrl(req, path, rawQuery, { limit, offset: null })
				: pageUrl(req, path, rawQuery, { limit, offset: offset - limit });
	}
	return json(200, { next, previous, count, tasks });
}

function setWebhook(store: Store, queue: QueueState, user: UserState, rawBody: string): Answer {
	const parsed = parseJson(rawBody);
	if (!parsed.ok) return envelope(400, 'JSON parse error - Expecting value');
	const body = parsed.value;
	const target = isPlainObject(body) ? body.target : undefined;
	if (target === undefined || target === null)
		return envelope(400, 'This field is required.', 'target');
	if (typeof target !== 'string') return envelope(400, 'Not a valid string.', 'target');
	if (target.length > 255) {
		return envelope(400, 'Ensure this field has no more than 255 characters.', 'target');
	}
	if (target !== '' && !isValidUrl(target)) return envelope(400, 'Enter a valid URL.', 'target');
	const had = queue.webhook !== null;
	const status = store.setWebhook(queue, target, user.id);
	// With no webhook set, the server's 204 carries a body anyway (see send()).
	if (status === 204)
		return { status: 204, body: had ? '' : '{"status_code":204}', contentType: JSON_TYPE };
	return json(status, store.webhookObject(queue));
}

/** The page's counts: tasks waiting for someone, and tasks someone works on (n_tasks is both). */
function pageCounts(q: QueueState): { n_waiting: number; n_in_progress: number } {
	let inProgress = 0;
	for (const s of q.pending.values()) if (s.task.status === 'in_progress') inProgress++;
	return { n_waiting: q.pending.size - inProgress, n_in_progress: inProgress };
}

function faultAnswer(rule: RouteFaultRule): Answer | null {
	const retry =
		rule.retryAfter !== undefined ? { 'Retry-After': String(rule.retryAfter) } : undefined;
	switch (rule.kind) {
		case '429':
			return {
				...envelope(
					429,
					`Request was throttled.${rule.retryAfter !== undefined ? ` Expected available in ${rule.retryAfter} seconds.` : ''}`,
				),
				headers: retry,
			};
		case '503':
			return { status: 503, body: HTML_503, contentType: 'text/html', headers: retry };
		case 'html500':
			return html500();
		default:
			return null;
	}
}

// ---- the request handler -------------------------------------------------------------------

export function createHandler(ctx: ServerContext, pageDir: string) {
	const page = new PageServer(ctx, pageDir);

	return function handler(req: IncomingMessage, res: ServerResponse): void {
		const url = req.url ?? '/';
		const q = url.indexOf('?');
		const path = q === -1 ? url : url.slice(0, q);
		const rawQuery = q === -1 ? '' : url.slice(q + 1);
		const method = req.method ?? 'GET';

		if (path.startsWith('/app') || path.startsWith('/_sandbox')) {
			const refusal = browserRefusal(ctx, req, method, path);
			if (refusal) {
				req.resume();
				send(res, json(403, { status_code: 403, errors: [{ message: refusal }] }));
				return;
			}
		}
		if (path.startsWith('/_sandbox/') || path === '/_sandbox') {
			void handleAdmin(ctx, req, res, method, path, rawQuery).catch((e) => internalError(res, e));
			return;
		}
		if (path === '/' || path === '/app') {
			res.writeHead(302, { Location: '/app/', 'Content-Length': 0 });
			res.end();
			return;
		}
		if (path.startsWith('/app/')) {
			void page.handle(req, res, method, path).catch((e) => internalError(res, e));
			return;
		}
		ctx.log.inFlight++;
		void serveApi(ctx, req, res, method, path, rawQuery)
			.catch((e) => internalError(res, e))
			.finally(() => ctx.log.inFlight--);
	};
}

function internalError(res: ServerResponse, error: unknown): void {
	if (error instanceof SandboxError) {
		send(
			res,
			json(error.status, { status_code: error.status, errors: [{ message: error.message }] }),
		);
		return;
	}
	if (!res.headersSent) send(res, html500());
	else res.destroy();
}

async function serveApi(
	ctx: ServerContext,
	req: IncomingMessage,
	res: ServerResponse,
	method: string,
	path: string,
	rawQuery: string,
): Promise<void> {
	const query = parseQuery(rawQuery);
	const match = matchApi(method, path);
	const base = {
		method,
		path,
		query,
		headers: req.headers,
		inFlight: ctx.log.inFlight,
		arrivedAt: ctx.log.arrive(),
	};
	if (match === 'notFound' || match === 'method') {
		const rawBody = await readBody(req);
		const parsed = parseJson(rawBody);
		const answer =
			match === 'notFound' ? html404() : envelope(405, `Method "${method}" not allowed.`);
		ctx.log.add({
			...base,
			body: parsed.ok ? (parsed.value ?? null) : rawBody,
			route: null,
			status: answer.status,
			fault: null,
		});
		send(res, answer);
		return;
	}
	const fault = ctx.faults.forRoute(match.route);
	if (fault?.kind === 'reset') {
		ctx.log.add({ ...base, body: null, route: match.route, status: null, fault: 'reset' });
		req.socket.destroy();
		return;
	}
	const auth = authenticate(ctx.store, req);
	if (!('id' in auth)) {
		// a wrong key is refused before its body is read: a caller without a key holds no memory
		req.resume();
		ctx.log.add({ ...base, body: null, route: match.route, status: auth.status, fault: null });
		send(res, auth);
		return;
	}
	const rawBody = await readBody(req);
	const parsed = parseJson(rawBody);
	const loggedBody = parsed.ok ? (parsed.value ?? null) : rawBody;
	await ctx.faults.admit();
	let answer: Answer | null;
	try {
		if (ctx.faults.latencyMs > 0) await sleep(ctx.faults.latencyMs);
		if (fault?.kind === 'slow') await sleep(fault.delayMs ?? 1000);
		answer = fault ? faultAnswer(fault) : null;
		if (!answer) answer = handleApi(ctx, req, match, path, rawQuery, query, rawBody);
	} finally {
		ctx.faults.release();
	}
	ctx.log.add({
		...base,
		body: loggedBody,
		route: match.route,
		status: answer.status,
		fault: fault?.kind ?? null,
	});
	if (fault?.kind === 'truncated') {
		const half = Buffer.from(answer.body).subarray(
			0,
			Math.floor(Buffer.byteLength(answer.body) / 2),
		);
		if (res.destroyed) return;
		res.writeHead(answer.status, {
			'Content-Type': answer.contentType,
			'Content-Length': half.length,
		});
		res.end(half);
		return;
	}
	send(res, answer);
}

// ---- test control ----------------------------------------------------------------------------

function num(value: unknown, what: string): number {
	const n = Number(value);
	if (!Number.isInteger(n)) throw new SandboxError(400, `${what} must be an integer`);
	return n;
}

async function handleAdmin(
	ctx: ServerContext,
	req: IncomingMessage,
	res: ServerResponse,
	method: string,
	path: string,
	rawQuery: string,
): Promise<void> {
	if (req.headers['x-sandbox-admin'] !== ctx.adminSecret) {
		req.resume(); // the body of a refused call is never read into memory
		send(
			res,
			json(401, {
				status_code: 401,
				errors: [{ message: 'x-sandbox-admin header missing or wrong' }],
			}),
		);
		return;
	}
	const rawBody = await readBody(req);
	const parsed = parseJson(rawBody);
	if (!parsed.ok) throw new SandboxError(400, 'Body is not JSON');
	const body = (isPlainObject(parsed.value) ? parsed.value : {}) as Record<string, unknown>;
	const query = parseQuery(rawQuery);
	const { store, faults, webhooks, log } = ctx;
	const parts = path.split('/').filter(Boolean).slice(1); // drop '_sandbox'
	const route = `${method} /${parts.map((p) => (/^\d+$/.test(p) ? ':id' : p)).join('/')}`;
	const id = parts.find((p) => /^\d+$/.test(p));
	const queue = () => store.queue(num(id, 'queue id'));
	const ok = (value: unknown, status = 200) => send(res, json(status, value));

	switch (route) {
		case 'GET /health':
			return ok({ ok: true });
		case 'POST /reset': {
			const seed = isPlainObject(body.seed) ? (body.seed as unknown as SeedData) : ctx.seed;
			store.load(seed);
			store.onChange();
			log.clear();
			webhooks.clear();
			faults.clear();
			faults.legacyDefect = false;
			resetRealism();
			return ok({ ok: true });
		}
		case 'GET /state':
			return ok(store.dump());
		case 'POST /queues': {
			const q = store.createQueue(body as unknown as Parameters<Store['createQueue']>[0]);
			return ok(store.queueDetail(q), 201);
		}
		case 'GET /queues/:id':
			return ok(store.queueDetail(queue()));
		case 'GET /queues/:id/tasks': {
			const q = queue();
			const tasks = [...store.tasks.values()]
				.filter((s) => s.task.queue_id === q.id)
				.map((s) => s.task);
			return ok(tasks);
		}
		case 'POST /queues/:id/tasks': {
			const q = queue();
			const spec = Array.isArray(body.datas)
				? (body.datas as Array<Record<string, unknown>>)
				: num(body.count, 'count');
			const ids = store.createTasksBulk(
				q,
				spec,
				typeof body.source === 'string' ? body.source : 'api',
			);
			return ok({ count: ids.length, ids }, 201);
		}
		case 'POST /queues/:id/take': {
			const task = store.takeNext(queue(), String(body.email ?? body.by ?? ''));
			if (!task) throw new SandboxError(404, 'No pending task to take');
			return ok(task);
		}
		case 'POST /queues/:id/complete': {
			const taskId =
				body.taskId === undefined || body.taskId === null ? undefined : num(body.taskId, 'taskId');
			const data = isPlainObject(body.data) ? body.data : undefined;
			return ok(store.complete(queue(), taskId, String(body.by ?? ''), data));
		}
		case 'POST /queues/:id/complete-many': {
			const ids = store.completeMany(queue(), num(body.count, 'count'), String(body.by ?? ''));
			return ok({ count: ids.length, ids });
		}
		case 'POST /tasks/:id/recomplete':
			return ok(
				store.recomplete(num(id, 'task id'), typeof body.by === 'string' ? body.by : undefined),
			);
		case 'PUT /queues/:id/webhook': {
			const q = queue();
			const target = typeof body.target === 'string' ? body.target : '';
			if (target !== '' && !isValidUrl(target)) throw new SandboxError(400, 'Enter a valid URL.');
			const by = typeof body.by === 'string' ? store.requireMember(q, body.by) : undefined;
			const status = store.setWebhook(
				q,
				target,
				by?.id ?? q.webhook?.userId ?? firstAdmin(store, q),
			);
			return ok({ status, webhook: store.webhookObject(q) });
		}
		case 'GET /requests': {
			const since = query.since ? Number(query.since) : 0;
			return ok(since ? log.entries.filter((e) => e.seq > since) : log.entries);
		}
		case 'DELETE /requests':
			log.clear();
			return ok({ ok: true });
		case 'GET /webhook-calls':
			return ok(webhooks.calls);
		case 'DELETE /webhook-calls':
			webhooks.clear();
			return ok({ ok: true });
		case 'GET /faults':
			return ok(faults.describe());
		case 'PUT /faults':
			try {
				faults.set(Array.isArray(parsed.value) ? parsed.value : (body as FaultConfig));
			} catch (e) {
				throw new SandboxError(400, (e as Error).message);
			}
			return ok(faults.describe());
		case 'DELETE /faults':
			faults.clear();
			return ok(faults.describe());
		case 'GET /realism':
			return ok(setRealism({}));
		case 'PUT /realism':
			try {
				return ok(setRealism(body as Partial<Realism>));
			} catch (e) {
				throw new SandboxError(400, (e as Error).message);
			}
		case 'PUT /legacy-defect':
			faults.legacyDefect = !!body.on;
			return ok({ on: faults.legacyDefect });
		case 'POST /api-keys':
			return ok({ key: store.mintApiKey(String(body.email ?? '')) }, 201);
	}
	throw new SandboxError(404, `No test-control route ${route}`);
}

function firstAdmin(store: Store, q: QueueState): number {
	for (const u of store.users.values()) if (u.memberships.get(q.organizationId)) return u.id;
	return 0;
}

// ---- the people's page ------------------------------------------------------------------------

const STATIC: Record<string, string> = {
	'/app/app.js': 'application/javascript; charset=utf-8',
	'/app/app.css': 'text/css; charset=utf-8',
};

class PageServer {
	private cache = new Map<string, string>();

	constructor(
		private readonly ctx: ServerContext,
		private readonly dir: string,
	) {}

	private file(name: string): string {
		let text = this.cache.get(name);
		if (text === undefined) {
			text = readFileSync(join(this.dir, name), 'utf8');
			if (!process.env.SANDBOX_PAGE_NOCACHE) this.cache.set(name, text);
		}
		return text;
	}

	async handle(
		req: IncomingMessage,
		res: ServerResponse,
		method: string,
		path: string,
	): Promise<void> {
		if (path.startsWith('/app/api/')) {
			const rawBody = await readBody(req);
			const parsed = parseJson(rawBody);
			if (!parsed.ok) throw new SandboxError(400, 'Body is not JSON');
			const body = isPlainObject(parsed.value) ? parsed.value : {};
			send(res, json(200, this.api(method, path.slice('/app/api'.length), body)));
			return;
		}
		req.resume();
		if (method !== 'GET' && method !== 'HEAD') {
			send(res, envelope(405, `Method "${method}" not allowed.`));
			return;
		}
		if (STATIC[path]) {
			send(res, {
				status: 200,
				body: this.file(path.slice('/app/'.length)),
				contentType: STATIC[path],
			});
			return;
		}
		if (path === '/app/' || /^\/app\/queues\/\d+(\/connections)?$/.test(path)) {
			send(res, { status: 200, body: this.file('index.html'), contentType: HTML_TYPE });
			return;
		}
		send(res, html404());
	}

	private api(method: string, path: string, body: Record<string, unknown>): unknown {
		const { store } = this.ctx;
		const parts = path.split('/').filter(Boolean);
		const route = `${method} /${parts.map((p) => (/^\d+$/.test(p) ? ':id' : p)).join('/')}`;
		const ids = parts.filter((p) => /^\d+$/.test(p)).map(Number);
		const email = String(body.email ?? '');
		switch (route) {
			case 'GET /users':
				return [...store.users.values()].map((u) => ({
					id: u.id,
					email: u.email,
					name: u.name,
					organizations: [...u.memberships].map(([id, admin]) => ({
						id,
						name: store.orgs.get(id)?.name ?? String(id),
						admin,
					})),
				}));
			case 'GET /orgs/:id/queues':
				return store.queuesOf(ids[0]).map((q) => ({ ...store.queueSummary(q), ...pageCounts(q) }));
			case 'GET /queues/:id': {
				const q = store.queue(ids[0]);
				return { ...store.queueDetail(q), ...pageCounts(q), webhook: store.webhookObject(q) };
			}
			case 'GET /queues/:id/pending': {
				const q = store.queue(ids[0]);
				return store
					.pendingNewestFirst(q)
					.slice(0, 50)
					.map(({ task, assignedTo }) => ({ ...task, assigned_to: assignedTo }));
			}
			case 'GET /queues/:id/completed': {
				const q = store.queue(ids[0]);
				return store
					.completedNewestFirst(q)
					.slice(0, 20)
					.map((s) => s.task);
			}
			case 'POST /queues/:id/take': {
				const q = store.queue(ids[0]);
				const taskId = Number(body.taskId);
				return {
					task:
						Number.isInteger(taskId) && taskId > 0
							? store.take(q, email, taskId)
							: store.takeNext(q, email),
				};
			}
			case 'POST /queues/:id/tasks/:id/release': {
				const q = store.queue(ids[0]);
				store.requireMember(q, email);
				return { task: store.release(q, ids[1]) };
			}
			case 'POST /queues/:id/tasks/:id/complete': {
				const q = store.queue(ids[0]);
				const data = isPlainObject(body.data) ? body.data : {};
				return { task: store.complete(q, ids[1], email, data) };
			}
			case 'PUT /queues/:id/webhook': {
				const q = store.queue(ids[0]);
				const user = store.requireMember(q, email);
				const target = typeof body.target === 'string' ? body.target.trim() : '';
				if (target.length > 255)
					throw new SandboxError(400, 'The URL is longer than 255 characters.');
				if (target !== '' && !isValidUrl(target)) throw new SandboxError(400, 'Enter a valid URL.');
				store.setWebhook(q, target, user.id);
				return { webhook: store.webhookObject(q) };
			}
		}
		throw new SandboxError(404, `No page route ${route}`);
	}
}
