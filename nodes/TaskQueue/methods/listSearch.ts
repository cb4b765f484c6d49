import type { ILoadOptionsFunctions, INodeListSearchResult } from 'n8n-workflow';

import { listQueues } from '../transport/endpoints';

/** The organization's queues for the Queue picker; the service does not paginate this list. */
export async function searchQueues(
	this: ILoadOptionsFunctions,
	filter?: string,
): Promise<INodeListSearchResult> {
	const queues = await listQueues.call(this);
	const needle = filter?.trim().toLowerCase() ?? '';
	return {
		results: queues
			.filter(
				(queue) =>
					!needle || queue.name.toLowerCase().includes(needle) || String(queue.id) === needle,
			)
			.sort((a, b) => a.name.localeCompare(b.name))
			.map((queue) => ({
				name: `${queue.name} (${queue.id})`,
				value: String(queue.id),
			})),
	};
}
