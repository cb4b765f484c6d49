import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { queueLocator } from '../../helpers/descriptions';
import { getQueueId } from '../../helpers/queue';
import { getQueue, getWebhookTarget } from '../../transport/endpoints';
import { maskSecret } from '../../helpers/webhookTarget';

const properties: INodeProperties[] = [
	{ ...queueLocator, description: 'The queue whose webhook to get' },
];

export const description = updateDisplayOptions(
	{ show: { resource: ['webhook'], operation: ['get'] } },
	properties,
);

/** One shape whatever the service says: with no webhook set it answers `{"target": ""}`. */
export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject> {
	const queueId = getQueueId.call(this, itemIndex);
	// the service reads a webhook by queue id alone, in any organization: check the queue is ours
	await getQueue.call(this, queueId, itemIndex);
	const target = await getWebhookTarget.call(this, queueId, itemIndex);
	return { queueId, target: target === null ? null : maskSecret(target), active: target !== null };
}
