import type { IExecuteFunctions } from 'n8n-workflow';

import { getQueue } from '../transport/endpoints';
import type { CompiledQueue } from './blockModel';
import { compileQueue } from './blockModel';

/**
 * Each queue's configuration is read once per execution, however many items use it: the cache
 * holds the promise, so concurrent items wait for the same request.
 */
export class QueueConfigCache {
	private readonly queues = new Map<number, Promise<CompiledQueue>>();

	async get(
		context: IExecuteFunctions,
		queueId: number,
		itemIndex: number,
	): Promise<CompiledQueue> {
		let cached = this.queues.get(queueId);
		if (!cached) {
			cached = getQueue
				.call(context, queueId, itemIndex)
				.then((queue) => compileQueue(queue.id, queue.name, queue.data ?? []));
			this.queues.set(queueId, cached);
		}
		return await cached;
	}
}
