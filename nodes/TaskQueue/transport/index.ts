import type { IHttpRequestOptions, IN8nHttpFullResponse, INode, JsonObject } from 'n8n-workflow';
import { NodeApiError, sleep } from 'n8n-workflow';
import type { ZodError, ZodType, ZodTypeDef } from 'zod';

import { forgetCredential, requestSetup, type RequestSetup } from './credentials';
import { httpError, networkError, redirectError, tooLargeError } from './errors';
import { AnswerTooLarge, ANSWER_LIMITS, readAnswer, REQUEST_TIMEOUT_MS } from './answers';

export { ANSWER_LIMITS, MAX_ANSWER_BYTES, REQUEST_TIMEOUT_MS } from './answers';
export { getTaskQueueCredentials, normalizeCredentials } from './credentials';
export { postToThisN8n, withoutTheKey, type ThisN8nAnswer } from './thisN8n';
import type {
	TaskQueueContext,
	TaskQueueCredentials,
	TaskQueueRequest,
	TaskQueueResponse,
} from './types';
import { CREDENTIAL_TYPE } from './types';

export const MAX_ATTEMPTS = 5;
const BASE_BACKOFF_MS = 200;
const MAX_BACKOFF_MS = 5_000;
const MAX_RETRY_AFTER_MS = 30_000;
const IDEMPOTENT_RETRY_STATUSES = [429, 502, 503, 504];
const TRANSIENT_NETWORK_CODES = [
	'ECONNRESET',
	'ECONNREFUSED',
	'ETIMEDOUT',
	'ECONNABORTED',
	'EPIPE',
	'EAI_AGAIN',
	'ERR_SOCKET_CONNECTION_TIMEOUT',
];

/** The one way this package talks to the service. Retries per `request.retry`; throws NodeApiError. */
export async function taskQueueRequest(
	this: TaskQueueContext,
	request: TaskQueueRequest,
): Promise<TaskQueueResponse> {
	let setup = await requestSetup.call(this);
	for (let attempt = 1; ; attempt++) {
		const { node, credentials, credentialsDecrypted } = setup;
		const ticket = request.feedback?.sending() ?? 0;
		const sentAt = Date.now();
		const sent = await sendOnce.call(this, optionsFor(request, credentials), credentialsDecrypted);
		if ('tooLarge' in sent) {
			request.feedback?.answered(ticket, Date.now() - sentAt, true);
			throw tooLargeError(node, request, sent.tooLarge);
		}
		if ('code' in sent) {
			request.feedback?.answered(ticket, Date.now() - sentAt, true);
			const { code } = sent;
			const retryable =
				request.retry === 'idempotent'
					? code !== undefined && TRANSIENT_NETWORK_CODES.includes(code)
					: code === 'ECONNREFUSED';
			if (retryable && attempt < MAX_ATTEMPTS) {
				await sleep(backoffMs(attempt));
				continue;
			}
			throw networkError(node, request, credentials, code, attempt);
		}
		const { response } = sent;
		const busy = response.statusCode === 429 || response.statusCode === 503;
		request.feedback?.answered(ticket, Date.now() - sentAt, busy);
		if (response.statusCode === 401 || response.statusCode === 403) {
			// a key changed since this context looked the credential up: once more with it as it is now
			forgetCredential(this, credentialsDecrypted.id);
			setup = await requestSetup.call(this);
			if (setup.credentials.apiKey !== credentials.apiKey && attempt < MAX_ATTEMPTS) continue;
		}
		const result: TaskQueueResponse = {
			statusCode: response.statusCode,
			headers: response.headers as TaskQueueResponse['headers'],
			body: response.body,
		};
		if (result.statusCode >= 300 && result.statusCode < 400)
			throw redirectError(node, request, credentials, result);
		if (result.statusCode < 400) return result;

		const retryAfter = retryAfterMs(result.headers['retry-after']);
		const retryable =
			request.retry === 'idempotent'
				? IDEMPOTENT_RETRY_STATUSES.includes(result.statusCode)
				: result.statusCode === 429 || (result.statusCode === 503 && retryAfter !== undefined);
		if (retryable && attempt < MAX_ATTEMPTS && (retryAfter ?? 0) <= MAX_RETRY_AFTER_MS) {
			await sleep(retryAfter ?? backoffMs(attempt));
			continue;
		}
		throw httpError(node, request, credentials, result, attempt);
	}
}

function optionsFor(
	request: TaskQueueRequest,
	credentials: TaskQueueCredentials,
): Omit<IHttpRequestOptions, 'abortSignal'> {
	return {
		method: request.method,
		url: `${credentials.baseUrl}/orgs/${credentials.organizationId}/${credentials.apiPaths}${request.path}`,
		qs: request.qs,
		body: request.body,
		json: true,
		returnFullResponse: true,
		ignoreHttpStatusErrors: true,
		timeout: REQUEST_TIMEOUT_MS,
		skipSslCertificateValidation: credentials.ignoreSslIssues,
		// the key must not follow a redirect to another origin (answered with redirectError)
		disableFollowRedirect: true,
		// a read's answer is read here, within MAX_ANSWER_BYTES (a write's answer is small, and some
		// servers send a body with a 204 that only Node's parser, reading it whole, reports); every
		// answer must arrive whole within REQUEST_TIMEOUT_MS (axios's own timeout only counts idle
		// time: a trickled answer would hold the call for ever)
		...(request.method === 'GET' ? { encoding: 'stream' as const } : {}),
	};
}

/**
 * One attempt: the answer, read whole within its bounds; or the network code of why none came (a
 * whole answer that did not arrive in time counts as ETIMEDOUT); or the size of one too large.
 */
async function sendOnce(
	this: TaskQueueContext,
	options: Omit<IHttpRequestOptions, 'abortSignal'>,
	credentialsDecrypted: RequestSetup['credentialsDecrypted'],
): Promise<
	{ response: IN8nHttpFullResponse } | { code: string | undefined } | { tooLarge: number }
> {
	const cutOff = new AbortController();
	const deadline = AbortSignal.timeout(ANSWER_LIMITS.wholeAnswerMs);
	try {
		const response = (await this.helpers.httpRequestWithAuthentication.call(
			this,
			CREDENTIAL_TYPE,
			{ ...options, abortSignal: AbortSignal.any([cutOff.signal, deadline]) },
			{ credentialsDecrypted },
		)) as IN8nHttpFullResponse;
		response.body = (await readAnswer(response.body, deadline, () =>
			cutOff.abort(),
		)) as IN8nHttpFullResponse['body'];
		return { response };
	} catch (error) {
		if (error instanceof AnswerTooLarge) return { tooLarge: error.bytes };
		return { code: deadline.aborted ? 'ETIMEDOUT' : networkErrorCode(error) };
	}
}

/**
 * Checks an answer's shape; a service that answers something else gets a clear NodeApiError.
 * `accepts`, a hand-written check equal to the schema, returns a body that passes it as it is.
 */
/** The first problems zod found, each with where it is in the answer. */
export function problemOf(error: ZodError): string {
	return error.issues
		.slice(0, 3)
		.map((issue) => `${issue.path.join('.') || '(body)'}: ${issue.message}`)
		.join('; ');
}

export function parseBody<T>(
	node: INode,
	schema: ZodType<T, ZodTypeDef, unknown>,
	response: TaskQueueResponse,
	request: Pick<TaskQueueRequest, 'action' | 'itemIndex'>,
	accepts?: (body: unknown) => body is T,
): T {
	if (accepts?.(response.body)) return response.body;
	const parsed = schema.safeParse(response.body);
	if (parsed.success) return parsed.data;
	const problem = problemOf(parsed.error);
	// JSON came back: the address answers, and what is wrong is the answer, not the Base URL
	const json = typeof response.body === 'object' && response.body !== null;
	throw new NodeApiError(node, { statusCode: response.statusCode, problem } as JsonObject, {
		message: `The service's answer to "${request.action}" has an unexpected shape`,
		description: json
			? `${problem}. The service answered in JSON, but not in a shape this node can read: check the value it names on the server (a queue's blocks, a task's fields), or report the answer to the node's maintainers.`
			: `${problem}. Check that the Base URL points at a Task Queue Service and that the API Paths setting matches the server.`,
		httpCode: String(response.statusCode),
		itemIndex: request.itemIndex,
	});
}

function backoffMs(attempt: number): number {
	const exponential = Math.min(MAX_BACKOFF_MS, BASE_BACKOFF_MS * 2 ** (attempt - 1));
	return Math.round(exponential / 2 + Math.random() * (exponential / 2));
}

/** Retry-After is either seconds or an HTTP date. */
export function retryAfterMs(header: string | string[] | undefined): number | undefined {
	const value = Array.isArray(header) ? header[0] : header;
	if (value === undefined || value.trim() === '') return undefined;
	const seconds = Number(value);
	if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
	const date = Date.parse(value);
	return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

function networkErrorCode(error: unknown): string | undefined {
	let current: unknown = error;
	for (let depth = 0; depth < 4 && current && typeof current === 'object'; depth++) {
		const { code } = current as { code?: unknown };
		if (typeof code === 'string' && /^(E|HPE_)[A-Z_]+$/.test(code)) return code;
		current = (current as { cause?: unknown }).cause;
	}
	const message = error instanceof Error ? error.message : '';
	if (/socket hang up/i.test(message)) return 'ECONNRESET';
	const match = /\b(E[A-Z]{4,})\b/.exec(message);
	return match?.[1];
}
