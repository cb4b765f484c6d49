import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { queueLocator } from '../../helpers/descriptions';
import { getQueueId } from '../../helpers/queue';
import { taskQueueRequest } from '../../transport';

const properties: INodeProperties[] = [{ ...queueLocator, description: 'The queue whose webhook to remove' }];

export const description = updateDisplayOptions(
	{ show: { resource: ['webhook'], operation: ['remove'] } },
	properties,
);

/** The service deletes the webhook when its target is set to an empty string (answers 204). */
export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject> {
	const queueId = getQueueId.call(this, itemIndex);
	await taskQueueRequest.call(this, {
		method: 'PUT',
		path: `/${queueId}/webhook`,
		body: { target: '' },
		retry: 'idempotent',
		action: `remove the webhook of queue ${queueId}`,
		itemIndex,
	});
	return { queueId, target: null, removed: true };
}
