import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { queueLocator } from '../../helpers/descriptions';
import { getQueueId } from '../../helpers/queue';
import { parseBody, taskQueueRequest } from '../../transport';
import { webhookSchema } from '../../transport/schemas';

const properties: INodeProperties[] = [{ ...queueLocator, description: 'The queue whose webhook to get' }];

export const description = updateDisplayOptions(
	{ show: { resource: ['webhook'], operation: ['get'] } },
	properties,
);

/** One shape whatever the service says: with no webhook set it answers `{"target": ""}`. */
export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject> {
	const queueId = getQueueId.call(this, itemIndex);
	const request = {
		method: 'GET' as const,
		path: `/${queueId}/webhook`,
		retry: 'idempotent' as const,
		action: `get the webhook of queue ${queueId}`,
		itemIndex,
	};
	const webhook = parseBody(this.getNode(), webhookSchema, await taskQueueRequest.call(this, request), request);
	const target = typeof webhook.target === 'string' && webhook.target.trim() !== '' ? webhook.target : null;
	return { queueId, target, active: target !== null };
}
