import type { IDataObject } from 'n8n-workflow';
import type { ZodType, ZodTypeDef } from 'zod';

import type { ConcurrencyFeedback, TaskQueueContext, TaskQueueResponse } from './types';
import { parseBody, problemOf, taskQueueRequest } from './index';
import type { CompletedPage, Queue } from './schemas';
import {
	completedPageSchema,
	isCompletedPage,
	queueListSchema,
	queueSchema,
	webhookSchema,
} from './schemas';

// One function per endpoint of the service: the only place that knows its paths, methods and retry
// rules. Paths are below `/orgs/{organization}/{queues|workflows}` (the transport adds that part).

/** The service stores a webhook target of at most 255 characters. */
export const MAX_TARGET_LENGTH = 255;

const queuePath = (queueId: number, tail = '') => `/${queueId}${tail}`;

/** GET (a read: retried where the service is busy or the network failed), its answer's shape checked. */
async function read<T>(
	context: TaskQueueContext,
	schema: ZodType<T, ZodTypeDef, unknown>,
	get: { path: string; action: string; itemIndex?: number; qs?: IDataObject },
	accepts?: (body: unknown) => body is T,
): Promise<T> {
	const request = { ...get, method: 'GET' as const, retry: 'idempotent' as const };
	const response = await taskQueueRequest.call(context, request);
	return parseBody(context.getNode(), schema, response, request, accepts);
}

/**
 * GET the organization's queues (not paginated). A queue of the list the node cannot read (its API
 * lets anyone store odd shapes) is left out with a warning naming it, so that the others stay usable.
 */
export async function listQueues(this: TaskQueueContext, itemIndex?: number): Promise<Queue[]> {
	const entries = await read(this, queueListSchema, {
		path: '',
		action: 'list the queues',
		itemIndex,
	});
	const queues: Queue[] = [];
	for (const entry of entries) {
		const parsed = queueSchema.safeParse(entry);
		if (parsed.success) queues.push(parsed.data);
		else
			this.logger.warn(
				`Left out of the queue list: ${describeEntry(entry)}: ${problemOf(parsed.error)}`,
			);
	}
	return queues;
}

function describeEntry(entry: unknown): string {
	const { id, name } = (typeof entry === 'object' && entry !== null ? entry : {}) as Record<
		string,
		unknown
	>;
	const shown = [
		id === undefined ? '' : `queue ${String(id)}`,
		typeof name === 'string' ? `"${name}"` : '',
	]
		.filter(Boolean)
		.join(' ');
	return shown || 'an entry that is not a queue';
}

/**
 * GET one queue with its blocks, through the credential's organization: a queue of another
 * organization is "not found". Routes that find a queue by its id alone (webhook, create) read it
 * here first, so that nothing is read from or written to another organization's queue.
 */
export async function getQueue(
	this: TaskQueueContext,
	queueId: number,
	itemIndex?: number,
): Promise<Queue> {
	const action = `get queue ${queueId}`;
	return await read(this, queueSchema, { path: queuePath(queueId), action, itemIndex });
}

/** PUT flush: the service answers 200 with an empty, non-JSON body; flushing twice is harmless. */
export async function flushQueue(
	this: TaskQueueContext,
	queueId: number,
	itemIndex?: number,
): Promise<void> {
	await taskQueueRequest.call(this, {
		method: 'PUT',
		path: queuePath(queueId, '/flush'),
		retry: 'idempotent',
		action: `flush queue ${queueId}`,
		itemIndex,
	});
}

/** POST one task. Not retried where the service may have stored it; the caller reads the answer. */
export async function createTask(
	this: TaskQueueContext,
	queueId: number,
	data: IDataObject,
	itemIndex?: number,
	feedback?: ConcurrencyFeedback,
): Promise<{ response: TaskQueueResponse; action: string }> {
	const action = `create a task in queue ${queueId}`;
	const response = await taskQueueRequest.call(this, {
		method: 'POST',
		path: queuePath(queueId, '/tasks/create'),
		body: { data },
		retry: 'ifNotProcessed',
		action,
		itemIndex,
		feedback,
	});
	return { response, action };
}

/** GET one page of the completed tasks, newest completion first. */
export async function getCompletedPage(
	this: TaskQueueContext,
	queueId: number,
	query: { offset?: number; limit: number; start_date?: string; end_date?: string },
	itemIndex?: number,
): Promise<CompletedPage> {
	const path = queuePath(queueId, '/tasks/completed');
	const action = `list the completed tasks of queue ${queueId}`;
	const get = { path, qs: query as IDataObject, action, itemIndex };
	const page = await read(this, completedPageSchema, get, isCompletedPage);
	// a page longer than asked (a server repeating rows) is read as the rows asked for: offsets count rows
	const rows = [...new Map(page.tasks.map((task) => [task.id, task])).values()];
	return { ...page, tasks: rows.slice(0, query.limit) };
}

/** GET the queue's webhook target; null when none is set (the service answers `{"target": ""}`). */
export async function getWebhookTarget(
	this: TaskQueueContext,
	queueId: number,
	itemIndex?: number,
): Promise<string | null> {
	const path = queuePath(queueId, '/webhook');
	const action = `read the webhook of queue ${queueId}`;
	const webhook = await read(this, webhookSchema, { path, action, itemIndex });
	return typeof webhook.target === 'string' && webhook.target.trim() !== '' ? webhook.target : null;
}

/** PUT the queue's webhook target; '' removes it. Returns the target the service answered with, if any. */
export async function setWebhookTarget(
	this: TaskQueueContext,
	queueId: number,
	target: string,
	itemIndex?: number,
): Promise<string | null> {
	const response = await taskQueueRequest.call(this, {
		method: 'PUT',
		path: queuePath(queueId, '/webhook'),
		body: { target },
		retry: 'idempotent',
		action: target
			? `set the webhook of queue ${queueId}`
			: `remove the webhook of queue ${queueId}`,
		itemIndex,
	});
	const parsed = webhookSchema.safeParse(response.body);
	return parsed.success && typeof parsed.data.target === 'string' && parsed.data.target
		? parsed.data.target
		: null;
}
