import type {
	ILoadOptionsFunctions,
	INodeListSearchItems,
	INodeListSearchResult,
} from 'n8n-workflow';

import { automaticResumeField, canCarryAddress } from '../helpers/blockModel';
import { runPool } from '../helpers/pool';
import { getQueue, listQueues } from '../transport/endpoints';

/** Queues whose fields Create and Wait's picker reads (one request each, 4 at a time). */
const MAX_READ = 50;

/** What Create and Wait can do with a queue, by its fields: said after its name in the picker. */
async function readiness(this: ILoadOptionsFunctions, queueId: number): Promise<string> {
	try {
		const blocks = (await getQueue.call(this, queueId)).data ?? [];
		if (automaticResumeField(blocks)) return 'ready to wait';
		if (blocks.some((block) => canCarryAddress(block)))
			return 'no field for the address: add a read-only one';
		return 'cannot wait: no read-only text or link field';
	} catch {
		return 'its fields could not be read';
	}
}

/** The organization's queues for the Queue picker; the service does not paginate this list. */
export async function searchQueues(
	this: ILoadOptionsFunctions,
	filter?: string,
): Promise<INodeListSearchResult> {
	const queues = await listQueues.call(this);
	const needle = filter?.trim().toLowerCase() ?? '';
	const results: INodeListSearchItems[] = queues
		.filter(
			(queue) =>
				!needle || queue.name.toLowerCase().includes(needle) || String(queue.id) === needle,
		)
		.sort((a, b) => a.name.localeCompare(b.name))
		.map((queue) => ({ name: `${queue.name} (${queue.id})`, value: String(queue.id) }));
	// Create and Wait: the list tells which queues can carry the run's address, and why not
	if (this.getNodeParameter('operation', '') !== 'sendAndWait') return { results };
	const shown = results.slice(0, MAX_READ);
	await runPool(shown.length, 4, async (i) => {
		shown[i].name = `${shown[i].name} · ${await readiness.call(this, Number(shown[i].value))}`;
	});
	return { results };
}
