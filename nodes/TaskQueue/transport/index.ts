import type {
	ICredentialDataDecryptedObject,
	IDataObject,
	IExecuteFunctions,
	IHookFunctions,
	IHttpRequestMethods,
	IHttpRequestOptions,
	ILoadOptionsFunctions,
	IN8nHttpFullResponse,
	INode,
	IPollFunctions,
	IWebhookFunctions,
	JsonObject,
} from 'n8n-workflow';
import { NodeApiError, sleep } from 'n8n-workflow';
import type { ZodType } from 'zod';

import { errorEnvelopeSchema } from './schemas';

export type TaskQueueContext =
	| IExecuteFunctions
	| ILoadOptionsFunctions
	| IHookFunctions
	| IPollFunctions
	| IWebhookFunctions;

export const CREDENTIAL_TYPE = 'taskQueueApi';

export interface TaskQueueCredentials {
	baseUrl: string;
	apiKey: string;
	organizationId: number;
	apiPaths: 'queues' | 'workflows';
	ignoreSslIssues: boolean;
}

/**
 * How a failed request may be sent again.
 * - `idempotent`: reads and writes that give the same result twice (get, list, flush, set webhook).
 * - `ifNotProcessed`: creates; only where the service cannot have stored anything (429, 503 with
 *   Retry-After, connection refused), so a retry never creates a task twice.
 */
export type RetryMode = 'idempotent' | 'ifNotProcessed';

/** Told how each attempt went, to pace the requests that follow (helpers/concurrency.ts). */
export interface ConcurrencyFeedback {
	/** An attempt is being sent; returns its ticket. */
	sending(): number;
	/** Its answer came after `elapsedMs`; `overloaded`: 429, 503 or no connection. */
	answered(ticket: number, elapsedMs: number, overloaded: boolean): void;
}

export interface TaskQueueRequest {
	method: IHttpRequestMethods;
	/** Path below `/orgs/{organization}/{queues|workflows}`: '' lists queues, `/101/flush` flushes. */
	path: string;
	body?: IDataObject;
	qs?: IDataObject;
	retry: RetryMode;
	/** What the request does, for error messages: "create a task in queue 101". */
	action: string;
	itemIndex?: number;
	feedback?: ConcurrencyFeedback;
}

export interface TaskQueueResponse {
	statusCode: number;
	headers: Record<string, string | string[] | undefined>;
	body: unknown;
}

export const MAX_ATTEMPTS = 5;
/** A service that never answers must not hang the workflow; a create cut off this way is not retried. */
export const REQUEST_TIMEOUT_MS = 60_000;
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
/** Routes that the self-hosted 1.0.x server breaks under /queues and serves under /workflows. */
const LEGACY_DEFECT_ROUTE = /^\/\d+(\/webhook|\/flush)?$/;

/** What every request of one execution context needs, looked up once. */
interface RequestSetup {
	node: INode;
	credentials: TaskQueueCredentials;
	/** Handed to n8n's helper so that it does not look up (and decrypt) the credential per request. */
	credentialsDecrypted: {
		id: string;
		name: string;
		type: string;
		data: ICredentialDataDecryptedObject;
	};
}

// One lookup per execution context: n8n would otherwise decrypt the credential, and copy the node
// (`getNode()` returns a deep copy), for every request.
const setupCache = new WeakMap<object, Promise<RequestSetup>>();

async function lookUp(this: TaskQueueContext): Promise<RequestSetup> {
	const data = await this.getCredentials(CREDENTIAL_TYPE);
	const node = this.getNode();
	return {
		node,
		credentials: normalizeCredentials(data),
		credentialsDecrypted: {
			id: node.credentials?.[CREDENTIAL_TYPE]?.id ?? '',
			name: node.credentials?.[CREDENTIAL_TYPE]?.name ?? '',
			type: CREDENTIAL_TYPE,
			data,
		},
	};
}

async function requestSetup(this: TaskQueueContext): Promise<RequestSetup> {
	let cached = setupCache.get(this);
	if (!cached) {
		cached = lookUp.call(this);
		setupCache.set(this, cached);
		cached.catch(() => setupCache.delete(this));
	}
	return await cached;
}

export function normalizeCredentials(data: ICredentialDataDecryptedObject): TaskQueueCredentials {
	return {
		baseUrl: String(data.baseUrl ?? '').replace(/\/+$/, ''),
		apiKey: String(data.apiKey ?? ''),
		organizationId: Number(data.organizationId),
		apiPaths: data.apiPaths === 'workflows' ? 'workflows' : 'queues',
		ignoreSslIssues: data.ignoreSslIssues === true,
	};
}

export async function getTaskQueueCredentials(this: TaskQueueContext): Promise<TaskQueueCredentials> {
	return (await requestSetup.call(this)).credentials;
}

/** The one way this package talks to the service. Retries per `request.retry`; throws NodeApiError. */
export async function taskQueueRequest(
	this: TaskQueueContext,
	request: TaskQueueRequest,
): Promise<TaskQueueResponse> {
	const { node, credentials, credentialsDecrypted } = await requestSetup.call(this);
	const options: IHttpRequestOptions = {
		method: request.method,
		url: `${credentials.baseUrl}/orgs/${credentials.organizationId}/${credentials.apiPaths}${request.path}`,
		qs: request.qs,
		body: request.body,
		json: true,
		returnFullResponse: true,
		ignoreHttpStatusErrors: true,
		timeout: REQUEST_TIMEOUT_MS,
		skipSslCertificateValidation: credentials.ignoreSslIssues,
	};

	for (let attempt = 1; ; attempt++) {
		let response: IN8nHttpFullResponse;
		const ticket = request.feedback?.sending() ?? 0;
		const sentAt = Date.now();
		try {
			response = (await this.helpers.httpRequestWithAuthentication.call(
				this,
				CREDENTIAL_TYPE,
				{ ...options },
				{ credentialsDecrypted },
			)) as IN8nHttpFullResponse;
			request.feedback?.answered(
				ticket,
				Date.now() - sentAt,
				response.statusCode === 429 || response.statusCode === 503,
			);
		} catch (error) {
			request.feedback?.answered(ticket, Date.now() - sentAt, true);
			const code = networkErrorCode(error);
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

		const result: TaskQueueResponse = {
			statusCode: response.statusCode,
			headers: response.headers as TaskQueueResponse['headers'],
			body: response.body,
		};
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

/**
 * Checks an answer's shape; a service that answers something else gets a clear NodeApiError.
 * `accepts`, a hand-written check equal to the schema, returns a body that passes it as it is.
 */
export function parseBody<T>(
	node: INode,
	schema: ZodType<T>,
	response: TaskQueueResponse,
	request: Pick<TaskQueueRequest, 'action' | 'itemIndex'>,
	accepts?: (body: unknown) => body is T,
): T {
	if (accepts?.(response.body)) return response.body;
	const parsed = schema.safeParse(response.body);
	if (parsed.success) return parsed.data;
	const problem = parsed.error.issues
		.slice(0, 3)
		.map((issue) => `${issue.path.join('.') || '(body)'}: ${issue.message}`)
		.join('; ');
	throw new NodeApiError(
		node,
		{ statusCode: response.statusCode, problem } as JsonObject,
		{
			message: `The service's answer to "${request.action}" has an unexpected shape`,
			description: `${problem}. Check that the Base URL points at a Task Queue Service and that the API Paths setting matches the server.`,
			httpCode: String(response.statusCode),
			itemIndex: request.itemIndex,
		},
	);
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

function isHtml(body: unknown): boolean {
	return typeof body === 'string' && /<(!doctype|html|body|h1)\b/i.test(body);
}

function attemptsNote(attempt: number): string {
	return attempt > 1 ? ` (after ${attempt} attempts)` : '';
}

/** " Values sent: {…}" for a create whose outcome is unknown, so the task can be found. */
function sentValues(request: TaskQueueRequest): string {
	const data = request.body?.data;
	if (data === undefined) return '';
	const text = JSON.stringify(data);
	return ` Values sent: ${text.length > 500 ? `${text.slice(0, 497)}...` : text}`;
}

function networkError(
	node: INode,
	request: TaskQueueRequest,
	credentials: TaskQueueCredentials,
	code: string | undefined,
	attempt: number,
): NodeApiError {
	if (code?.startsWith('HPE_')) return malformedAnswerError(node, request, code);
	const reason = code ?? 'network error';
	const createHint =
		request.retry === 'ifNotProcessed' && code !== 'ECONNREFUSED'
			? ' The task may or may not have been created: check the queue before running this item again.'
			: '';
	const message = `Could not reach the Task Queue Service to ${request.action} (${reason})${attemptsNote(attempt)}`;
	const error = new NodeApiError(node, { code: reason } as JsonObject, {
		message,
		description: `Check the Base URL of the Task Queue API credential (${credentials.baseUrl}) and that the service is running and reachable from n8n.${createHint}`,
		itemIndex: request.itemIndex,
	});
	return keepMessage(error, message);
}

/**
 * The service answered, but not in valid HTTP (Node's parser: HPE_…). Not a network fault: the
 * request reached the service, which may have acted on it. Self-hosted servers answer a webhook
 * removal this way when the queue had no webhook (a 204 with a body).
 */
function malformedAnswerError(node: INode, request: TaskQueueRequest, code: string): NodeApiError {
	const message = `The service answered the request to ${request.action} with a malformed HTTP response (${code})`;
	const error = new NodeApiError(node, { code } as JsonObject, {
		message,
		description:
			request.retry === 'ifNotProcessed'
				? `The service received the request and may have acted on it: check the queue before running this item again.${sentValues(request)}`
				: 'The service received the request and may have acted on it; n8n could not read its answer. Check the queue in the service, or read it again with a Get operation.',
		itemIndex: request.itemIndex,
	});
	error.context.malformedAnswer = true;
	return keepMessage(error, message);
}

/** Whether the request reached the service but its answer was not valid HTTP (see above). */
export function isMalformedAnswer(error: unknown): boolean {
	return error instanceof NodeApiError && error.context.malformedAnswer === true;
}

function httpError(
	node: INode,
	request: TaskQueueRequest,
	credentials: TaskQueueCredentials,
	response: TaskQueueResponse,
	attempt: number,
): NodeApiError {
	const { statusCode, body } = response;
	const envelope = errorEnvelopeSchema.safeParse(body);
	const serviceMessages = envelope.success
		? envelope.data.errors
				.map((e) => (e.field ? `${e.field}: ${e.message}` : e.message))
				.join('; ')
		: undefined;
	const html = isHtml(body);
	let message: string;
	let description: string;

	if (statusCode === 400) {
		message = `The service refused to ${request.action}: ${serviceMessages ?? 'bad request'}`;
		description =
			'Fix the value the service names and run the item again. Field names are the block IDs of the queue.';
	} else if (statusCode === 401) {
		message = `The API key was refused while trying to ${request.action}`;
		description =
			'Open the Task Queue API credential and paste the API key again from the organization settings of the service.';
	} else if (statusCode === 403) {
		message = `The API key's user may not ${request.action} in organization ${credentials.organizationId}`;
		description =
			'Check the Organization ID of the credential. Creating tasks, reading completed tasks and webhooks need an API key of an organization admin.';
	} else if (statusCode === 404) {
		message = html
			? `The service has no such address (404) for "${request.action}"`
			: `Not found: could not ${request.action}`;
		description = html
			? `Check the Base URL of the credential (${credentials.baseUrl}): it should be the service's root, without /orgs or a trailing path.`
			: `Check the queue ID: pick the queue from the list, or copy the number from the queue's URL in the service. A queue of another organization is not found either (the credential's Organization ID is ${credentials.organizationId}).`;
	} else if (statusCode === 429) {
		message = `The service is rate limiting requests; could not ${request.action}${attemptsNote(attempt)}`;
		description = 'Lower the Max Concurrency option of the node, or run the workflow again later.';
	} else if (
		statusCode >= 500 &&
		html &&
		credentials.apiPaths === 'queues' &&
		LEGACY_DEFECT_ROUTE.test(request.path)
	) {
		message = `The service crashed (HTTP ${statusCode}) trying to ${request.action}`;
		description =
			'Self-hosted 1.0.x servers fail on this /queues route. Set "API Paths" to "Legacy (/workflows)" in the Task Queue API credential.';
	} else if (statusCode >= 500 && request.retry === 'ifNotProcessed') {
		// A server can store the task and then fail to answer (real deployments do, e.g. without a
		// list value): the task may exist, so say so and show what was sent, as for a cut-off answer.
		message = `The service failed (HTTP ${statusCode}) after receiving the request to ${request.action}: the task may have been created${attemptsNote(attempt)}`;
		description = `Check the queue before running this item again: the service may have stored the task before it failed, and a rerun would create it a second time.${sentValues(request)}`;
	} else if (statusCode >= 500) {
		message = `The service failed (HTTP ${statusCode}) trying to ${request.action}${attemptsNote(attempt)}`;
		if ([502, 503, 504].includes(statusCode)) {
			description = `The service (or a proxy in front of it) is temporarily unavailable. Run the workflow again later.${
				request.retry === 'ifNotProcessed'
					? ' The task may or may not have been created: check the queue before running this item again.'
					: ''
			}`;
		} else {
			description = html
				? 'The service answered with an error page. This happens when a value has a type the service does not expect; check the values sent, or try again later.'
				: 'The service had a temporary problem. Run the workflow again later; if it persists, contact the service\'s administrator.';
		}
	} else {
		message = `Unexpected answer (HTTP ${statusCode}) trying to ${request.action}`;
		description = serviceMessages ?? 'Check the Base URL and the API Paths setting of the credential.';
	}

	const error = new NodeApiError(
		node,
		{ statusCode, message, serviceMessages: serviceMessages ?? null } as JsonObject,
		{ message, description, httpCode: String(statusCode), itemIndex: request.itemIndex },
	);
	return keepMessage(error, message);
}

/**
 * NodeApiError swaps a message that mentions a Node.js error code (ECONNRESET, ...) for a generic
 * text of its own ("The connection to the server was closed unexpectedly"): keep the one written here,
 * which says what the node was doing and whether a create may have gone through.
 */
function keepMessage(error: NodeApiError, message: string): NodeApiError {
	error.message = message;
	return error;
}
