import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { queueLocator } from '../../helpers/descriptions';
import { asNodeError } from '../../helpers/errors';
import { getQueueId } from '../../helpers/queue';
import { isMalformedAnswer } from '../../transport/errors';
import { getQueue, getWebhookTarget, setWebhookTarget } from '../../transport/endpoints';

const properties: INodeProperties[] = [
	{ ...queueLocator, description: 'The queue whose webhook to remove' },
];

export const description = updateDisplayOptions(
	{ show: { resource: ['webhook'], operation: ['remove'] } },
	properties,
);

/**
 * The service deletes the webhook when its target is set to an empty string (answers 204). With no
 * webhook set, self-hosted servers answer that 204 with a body, which n8n's HTTP client cannot
 * parse: so nothing is written when nothing is set, and a malformed answer to the removal is
 * checked by reading the webhook again.
 */
export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject> {
	const queueId = getQueueId.call(this, itemIndex);
	await getQueue.call(this, queueId, itemIndex);
	if ((await getWebhookTarget.call(this, queueId, itemIndex)) !== null) {
		try {
			await setWebhookTarget.call(this, queueId, '', itemIndex);
		} catch (error) {
			if (
				!isMalformedAnswer(error) ||
				(await getWebhookTarget.call(this, queueId, itemIndex)) !== null
			) {
				throw asNodeError(this.getNode(), error, itemIndex);
			}
		}
	}
	return { queueId, target: null, removed: true };
}
