import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { queueLocator } from '../../helpers/descriptions';
import { getQueueId } from '../../helpers/queue';
import { taskQueueRequest } from '../../transport';

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

/** The service answers 200 with an empty, non-JSON body; flushing twice is harmless (retried). */
export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject> {
	const queueId = getQueueId.call(this, itemIndex);
	await taskQueueRequest.call(this, {
		method: 'PUT',
		path: `/${queueId}/flush`,
		retry: 'idempotent',
		action: `flush queue ${queueId}`,
		itemIndex,
	});
	return { queueId, flushed: true };
}
