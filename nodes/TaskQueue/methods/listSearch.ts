import type { ILoadOptionsFunctions, INodeListSearchResult } from 'n8n-workflow';

import { parseBody, taskQueueRequest } from '../transport';
import { queueListSchema } from '../transport/schemas';

/** The organization's queues for the Queue picker; the service does not paginate this list. */
export async function searchQueues(
	this: ILoadOptionsFunctions,
	filter?: string,
): Promise<INodeListSearchResult> {
	const request = { method: 'GET' as const, path: '', retry: 'idempotent' as const, action: 'list the queues' };
	const queues = parseBody(this.getNode(), queueListSchema, await taskQueueRequest.call(this, request), request);
	const needle = filter?.trim().toLowerCase() ?? '';
	return {
		results: queues
			.filter((queue) => !needle || queue.name.toLowerCase().includes(needle) || String(queue.id) === needle)
			.sort((a, b) => a.name.localeCompare(b.name))
			.map((queue) => ({
				name: `${queue.name} (${queue.id})`,
				value: String(queue.id),
			})),
	};
}
