import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { queueLocator } from '../../helpers/descriptions';
import { getQueueId } from '../../helpers/queue';
import { flushQueue, getQueue } from '../../transport/endpoints';

const properties: INodeProperties[] = [
	{
		...queueLocator,
		description: 'The queue to flush: its pending tasks are deleted, completed tasks are kept',
	},
];

export const description = updateDisplayOptions(
	{ show: { resource: ['queue'], operation: ['flush'] } },
	properties,
);

/** Flushing twice is harmless. The queue is read first, as every write to a queue is. */
export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject> {
	const queueId = getQueueId.call(this, itemIndex);
	await getQueue.call(this, queueId, itemIndex);
	await flushQueue.call(this, queueId, itemIndex);
	return { queueId, flushed: true };
}
