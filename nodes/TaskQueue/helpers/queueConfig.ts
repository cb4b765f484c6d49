import type { IExecuteFunctions, ILoadOptionsFunctions } from 'n8n-workflow';

import { parseBody, taskQueueRequest } from '../transport';
import type { Queue } from '../transport/schemas';
import { queueSchema } from '../transport/schemas';
import type { CompiledQueue } from './blocks';
import { compileQueue } from './blocks';

/** GET one queue, with its block configuration (`data`). */
export async function fetchQueue(
	this: IExecuteFunctions | ILoadOptionsFunctions,
	queueId: number,
	itemIndex?: number,
): Promise<Queue> {
	const request = {
		method: 'GET' as const,
		path: `/${queueId}`,
		retry: 'idempotent' as const,
		action: `get queue ${queueId}`,
		itemIndex,
	};
	return parseBody(this.getNode(), queueSchema, await taskQueueRequest.call(this, request), request);
}

/**
 * Each queue's configuration is read once per execution, however many items use it: the cache
 * holds the promise, so concurrent items wait for the same request.
 */
export class QueueConfigCache {
	private readonly queues = new Map<number, Promise<CompiledQueue>>();

	async get(context: IExecuteFunctions, queueId: number, itemIndex: number): Promise<CompiledQueue> {
		let cached = this.queues.get(queueId);
		if (!cached) {
			cached = fetchQueue
				.call(context, queueId, itemIndex)
				.then((queue) => compileQueue(queue.id, queue.name, queue.data ?? []));
			this.queues.set(queueId, cached);
		}
		return await cached;
	}
}
