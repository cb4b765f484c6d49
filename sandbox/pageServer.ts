// The people's page under /app/: its files and its API.
import { readFileSync } from 'fs';
import type { IncomingMessage, ServerResponse } from 'http';
import { join } from 'path';
import { SandboxError } from './store';
import { isValidUrl } from './validate';
import {
	HTML_TYPE,
	type ServerContext,
	envelope,
	html404,
	isPlainObject,
	json,
	parseJson,
	readBody,
	send,
} from './http';
import { pageCounts } from './api';
import { queueInsights } from './insights';
import { blocksFromFields } from './queueBuilder';

// ---- the people's page ------------------------------------------------------------------------

export const STATIC: Record<string, string> = {
	'/app/app.js': 'application/javascript; charset=utf-8',
	'/app/app.css': 'text/css; charset=utf-8',
};

export class PageServer {
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
			case 'POST /orgs/:id/queues': {
				// an admin of the organization makes a queue (the real service's admin UI)
				const user = store.user(email);
				if (user.memberships.get(ids[0]) !== true)
					throw new SandboxError(403, `${user.email} is not an admin of organization ${ids[0]}`);
				const { name, blocks } = blocksFromFields(body.name, body.fields);
				const q = store.createQueue({ name, blocks, organizationId: ids[0] });
				return store.queueDetail(q);
			}
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
			case 'GET /queues/:id/insights': {
				const q = store.queue(ids[0]);
				const tasks = store.completedNewestFirst(q).map((s) => s.task);
				return queueInsights(tasks, store.queueDetail(q).n_tasks ?? 0);
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
