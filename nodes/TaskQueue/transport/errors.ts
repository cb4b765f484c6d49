import type { INode, JsonObject } from 'n8n-workflow';
import { NodeApiError } from 'n8n-workflow';

import { errorEnvelopeSchema } from './schemas';
import type { TaskQueueCredentials, TaskQueueRequest, TaskQueueResponse } from './types';

// The wording of every failure of a request: what happened, and how to fix it. The request loop
// (index.ts) decides when a request fails; this file says so.

/** Routes that the self-hosted 1.0.x server breaks under /queues and serves under /workflows. */
const LEGACY_DEFECT_ROUTE = /^\/\d+(\/webhook|\/flush)?$/;

const isHtml = (body: unknown) =>
	typeof body === 'string' && /<(!doctype|html|body|h1)\b/i.test(body);

const attemptsNote = (attempt: number) => (attempt > 1 ? ` (after ${attempt} attempts)` : '');

/** " Values sent: {…}" for a create whose outcome is unknown, so the task can be found. */
function sentValues(request: TaskQueueRequest): string {
	const data = request.body?.data;
	if (data === undefined) return '';
	const text = JSON.stringify(data);
	return ` Values sent: ${text.length > 500 ? `${text.slice(0, 497)}...` : text}`;
}

/**
 * The Base URL as errors show it: without a user name and password (`https://user:pass@host`), which
 * n8n would otherwise store with the execution.
 */
export function shownBaseUrl(baseUrl: string): string {
	try {
		const url = new URL(baseUrl);
		if (!url.username && !url.password) return baseUrl;
		url.username = '';
		url.password = '';
		return url.toString().replace(/\/+$/, '');
	} catch {
		return baseUrl.replace(/\/\/[^/@]*@/, '//');
	}
}

export function networkError(
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
		description: `Check the Base URL of the Task Queue API credential (${shownBaseUrl(credentials.baseUrl)}) and that the service is running and reachable from n8n.${createHint}`,
		itemIndex: request.itemIndex,
	});
	return keepMessage(error, message);
}

/**
 * The service answered, but not in valid HTTP (Node's parser: HPE_…). Not a network fault: the
 * request reached the service, which may have acted on it. Self-hosted servers answer a webhook
 * removal this way when the queue had no webhook (a 204 with a body).
 */
export function malformedAnswerError(
	node: INode,
	request: TaskQueueRequest,
	code: string,
): NodeApiError {
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

/**
 * A redirect is never followed: the API key goes only to the Base URL's origin (an SSO page, a moved
 * host or an open redirect would receive it, and on 307 the task's data too).
 */
export function redirectError(
	node: INode,
	request: TaskQueueRequest,
	credentials: TaskQueueCredentials,
	response: TaskQueueResponse,
): NodeApiError {
	const location = response.headers.location;
	const to = Array.isArray(location) ? location[0] : location;
	let origin = 'an address it did not give';
	try {
		if (to) origin = new URL(to, credentials.baseUrl).origin;
	} catch {
		origin = 'an address that is not a URL';
	}
	const error = new NodeApiError(node, { statusCode: response.statusCode } as JsonObject, {
		message: `The service redirected the request to ${origin} (HTTP ${response.statusCode}) instead of answering: could not ${request.action}`,
		description: `The node does not follow redirects, so the API key stays with ${new URL(credentials.baseUrl).origin}. If ${origin} is the service's own address, set the credential's Base URL to it; otherwise check the Base URL (a proxy or a sign-in page answers there).`,
		httpCode: String(response.statusCode),
	});
	return keepMessage(error, error.message);
}

export function httpError(
	node: INode,
	request: TaskQueueRequest,
	credentials: TaskQueueCredentials,
	response: TaskQueueResponse,
	attempt: number,
): NodeApiError {
	const { statusCode, body } = response;
	const envelope = errorEnvelopeSchema.safeParse(body);
	const serviceMessages = envelope.success
		? envelope.data.errors.map((e) => (e.field ? `${e.field}: ${e.message}` : e.message)).join('; ')
		: undefined;
	const html = isHtml(body);

	const facts = { statusCode, html, serviceMessages, request, credentials, attempt };
	const { message, description } =
		statusCode >= 500 ? explainFailure(facts) : explainRefusal(facts);

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
const keepMessage = (error: NodeApiError, message: string) => Object.assign(error, { message });

/** The service's answer was larger than the package reads (a hostile or broken service); not retried. */
export function tooLargeError(node: INode, request: TaskQueueRequest, bytes: number): NodeApiError {
	const message = `The Task Queue Service's answer to ${request.action} was too large (more than ${Math.floor(bytes / 1_048_576)} MB): it was not read`;
	const error = new NodeApiError(node, { code: 'ANSWER_TOO_LARGE' } as JsonObject, {
		message,
		description:
			'A page of the service is a few MB at most. Check that the Base URL of the Task Queue API credential points at the Task Queue Service, and not at something else that answers.',
		itemIndex: request.itemIndex,
	});
	return keepMessage(error, message);
}

interface Explained {
	message: string;
	description: string;
}

interface ErrorFacts {
	statusCode: number;
	html: boolean;
	serviceMessages: string | undefined;
	request: TaskQueueRequest;
	credentials: TaskQueueCredentials;
	attempt: number;
}

/** What a 4xx (and anything not 5xx) says, and how to fix it. */
function explainRefusal(facts: ErrorFacts): Explained {
	const { statusCode, html, serviceMessages, request, credentials, attempt } = facts;
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
			? `Check the Base URL of the credential (${shownBaseUrl(credentials.baseUrl)}): it should be the service's root, without /orgs or a trailing path.`
			: `Check the queue ID: pick the queue from the list, or copy the number from the queue's URL in the service. A queue of another organization is not found either (the credential's Organization ID is ${credentials.organizationId}).`;
	} else if (statusCode === 429) {
		message = `The service is rate limiting requests; could not ${request.action}${attemptsNote(attempt)}`;
		description = 'Lower the Max Concurrency option of the node, or run the workflow again later.';
	} else {
		message = `Unexpected answer (HTTP ${statusCode}) trying to ${request.action}`;
		description =
			serviceMessages ?? 'Check the Base URL and the API Paths setting of the credential.';
	}
	return { message, description };
}

/** What a 5xx says, and how to fix it. */
function explainFailure(facts: ErrorFacts): Explained {
	const { statusCode, html, request, credentials, attempt } = facts;
	let message: string;
	let description: string;
	if (html && credentials.apiPaths === 'queues' && LEGACY_DEFECT_ROUTE.test(request.path)) {
		message = `The service crashed (HTTP ${statusCode}) trying to ${request.action}`;
		description =
			'Self-hosted 1.0.x servers fail on this /queues route. Set "API Paths" to "Legacy (/workflows)" in the Task Queue API credential.';
	} else if (request.retry === 'ifNotProcessed') {
		// A server can store the task and then fail to answer (real deployments do, e.g. without a
		// list value): the task may exist, so say so and show what was sent, as for a cut-off answer.
		message = `The service failed (HTTP ${statusCode}) after receiving the request to ${request.action}: the task may have been created${attemptsNote(attempt)}`;
		description = `Check the queue before running this item again: the service may have stored the task before it failed, and a rerun would create it a second time.${sentValues(request)}`;
	} else {
		message = `The service failed (HTTP ${statusCode}) trying to ${request.action}${attemptsNote(attempt)}`;
		if ([502, 503, 504].includes(statusCode)) {
			description =
				'The service (or a proxy in front of it) is temporarily unavailable. Run the workflow again later.';
		} else {
			description = html
				? 'The service answered with an error page. This happens when a value has a type the service does not expect; check the values sent, or try again later.'
				: "The service had a temporary problem. Run the workflow again later; if it persists, contact the service's administrator.";
		}
	}
	return { message, description };
}
