// The sandbox's HTTP server: the Task Queue Service API (both nouns, api.ts), test control under
// /_sandbox/ (control.ts), and the people's page under /app/ (pageServer.ts).
import type { IncomingMessage, ServerResponse } from 'http';
import { SandboxError } from './store';
import { type ServerContext, browserRefusal, html500, json, send } from './http';
import { serveApi } from './api';
import { handleAdmin } from './control';
import { PageServer } from './pageServer';

export {
	LOOPBACK_NAMES,
	MAX_BODY_BYTES,
	MAX_BYTES_IN_FLIGHT,
	RequestLog,
	type ServerContext,
} from './http';

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
