// The Task Queue Service API (both nouns): routing, authentication, the handlers, and the faults.
import type { IncomingMessage, ServerResponse } from 'http';
import { type QueueState, type Store, type UserState } from './store';
import type { RouteFaultRule } from './types';
import { CrashError, isValidUrl, ValidationError } from './validate';
import {
	type Answer,
	HTML_503,
	HTML_TYPE,
	JSON_TYPE,
	type ServerContext,
	envelope,
	html404,
	html500,
	isPlainObject,
	json,
	parseJson,
	readBody,
	send,
	sleep,
} from './http';

// ---- API routing -------------------------------------------------------------------------

export type RouteName =
	| 'listQueues'
	| 'getQueue'
	| 'createTask'
	| 'completed'
	| 'flush'
	| 'getWebhook'
	| 'setWebhook';

export interface Match {
	route: RouteName;
	noun: 'queues' | 'workflows';
	org: number;
	queueId: number | null;
}

export const API_RE =
	/^\/orgs\/(\d+)\/(queues|workflows)(?:\/(\d+)(\/tasks\/create|\/tasks\/completed|\/flush|\/webhook)?)?$/;
export const ADMIN_ROUTES: ReadonlySet<RouteName> = new Set([
	'createTask',
	'completed',
	'getWebhook',
	'setWebhook',
]);

/** Matches an API path; 'notFound' for an HTML 404, 'method' for a 405. */
export function matchApi(method: string, path: string): Match | 'notFound' | 'method' {
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

export const ANY_ORGANIZATION: ReadonlySet<RouteName> = new Set([
	'createTask',
	'getWebhook',
	'setWebhook',
]);

export const LEGACY_BROKEN: ReadonlySet<RouteName> = new Set([
	'getQueue',
	'getWebhook',
	'setWebhook',
	'flush',
]);

export function parseQuery(raw: string): Record<string, string> {
	const out: Record<string, string> = {};
	if (!raw) return out;
	for (const [k, v] of new URLSearchParams(raw)) out[k] = v;
	return out;
}

export const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;

export function parseDay(value: string | undefined): string | undefined {
	if (value === undefined) return undefined;
	const m = DATE_ONLY.exec(value);
	if (!m) return undefined;
	const d = new Date(`${value}T00:00:00.000Z`);
	if (Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== value) return undefined;
	return value;
}

/** DRF's _positive_int(strict=True) with a cutoff. */
export function positiveInt(
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

export function pageUrl(
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

export function authenticate(store: Store, req: IncomingMessage): UserState | Answer {
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

export function handleApi(
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

export function createTask(store: Store, queue: QueueState, rawBody: string): Answer {
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

export function completed(
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

export function setWebhook(
	store: Store,
	queue: QueueState,
	user: UserState,
	rawBody: string,
): Answer {
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
export function pageCounts(q: QueueState): { n_waiting: number; n_in_progress: number } {
	let inProgress = 0;
	for (const s of q.pending.values()) if (s.task.status === 'in_progress') inProgress++;
	return { n_waiting: q.pending.size - inProgress, n_in_progress: inProgress };
}

export function faultAnswer(rule: RouteFaultRule): Answer | null {
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

export async function serveApi(
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
	if (fault?.kind === 'longPage' && match.route === 'completed' && answer.status === 200)
		answer = { ...answer, body: withRepeatedRows(answer.body) };
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

/** A page longer than asked, as a broken server's join answers it: each task listed twice in a row. */
function withRepeatedRows(body: string): string {
	const page = JSON.parse(body) as { tasks: unknown[] };
	return JSON.stringify({ ...page, tasks: page.tasks.flatMap((task) => [task, task]) });
}
