// Test control under /_sandbox/: reset, state, faults, webhooks and the people's actions.
import type { IncomingMessage, ServerResponse } from 'http';
import { SandboxError, type QueueState, type Store } from './store';
import type { Block, FaultConfig, SeedData } from './types';
import { isValidUrl } from './validate';
import { resetRealism, setRealism, type Realism } from './realism';
import { type ServerContext, isPlainObject, json, parseJson, readBody, send } from './http';
import { parseQuery } from './api';

// ---- test control ----------------------------------------------------------------------------

export function num(value: unknown, what: string): number {
	const n = Number(value);
	if (!Number.isInteger(n)) throw new SandboxError(400, `${what} must be an integer`);
	return n;
}

export async function handleAdmin(
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
		case 'PUT /queues/:id/blocks':
			return ok(store.queueDetail(store.setBlocks(queue(), body.blocks as Block[])));
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
			const at = typeof body.completedAt === 'string' ? body.completedAt : undefined;
			const late = typeof body.commitAfterMs === 'number' ? body.commitAfterMs : undefined;
			return ok(store.complete(queue(), taskId, String(body.by ?? ''), data, at, late));
		}
		case 'POST /queues/:id/complete-many': {
			const ids = store.completeMany(queue(), num(body.count, 'count'), String(body.by ?? ''));
			return ok({ count: ids.length, ids });
		}
		case 'POST /tasks/:id/recomplete':
			return ok(
				store.recomplete(
					num(id, 'task id'),
					typeof body.by === 'string' ? body.by : undefined,
					typeof body.data === 'object' && body.data !== null
						? (body.data as Record<string, unknown>)
						: undefined,
				),
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
		case 'GET /queues/:id/webhook-history':
			return ok(store.webhookHistory.filter((h) => h.queueId === queue().id).map((h) => h.target));
		case 'GET /requests': {
			const since = query.since ? Number(query.since) : 0;
			return ok(since ? log.entries.filter((e) => e.seq > since) : log.entries);
		}
		case 'DELETE /requests':
			log.clear();
			return ok({ ok: true });
		case 'GET /webhook-calls':
			// `?count=1`: how many, and how many finished, past the list's 200,000 too (and quicker
			// than a list of 250,000 calls)
			return ok(query.count ? webhooks.counts : webhooks.calls);
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
		case 'POST /commit-held':
			return ok({ committed: store.commitHeld() });
		case 'POST /api-keys/revoke':
			return ok({ revoked: store.apiKeys.delete(String(body.key ?? '')) });
	}
	throw new SandboxError(404, `No test-control route ${route}`);
}

export function firstAdmin(store: Store, q: QueueState): number {
	for (const u of store.users.values()) if (u.memberships.get(q.organizationId)) return u.id;
	return 0;
}
