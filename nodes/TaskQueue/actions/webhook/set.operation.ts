import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { NodeOperationError, updateDisplayOptions } from 'n8n-workflow';

import { isValidUrl } from '../../helpers/values';
import { queueLocator } from '../../helpers/descriptions';
import { getQueueId } from '../../helpers/queue';
import { getQueue, MAX_TARGET_LENGTH, setWebhookTarget } from '../../transport/endpoints';
import { maskSecret } from '../../helpers/webhookTarget';

const properties: INodeProperties[] = [
	{ ...queueLocator, description: 'The queue whose webhook to set' },
	{
		displayName: 'URL',
		name: 'url',
		type: 'string',
		default: '',
		required: true,
		placeholder: 'e.g. https://example.com/hooks/task-completed',
		description:
			"The address that receives a POST with the task each time a task of the queue is completed. A queue has one webhook: this replaces any set before, including one set in the service's web page or used by a Task Queue Trigger.",
	},
];

export const description = updateDisplayOptions(
	{ show: { resource: ['webhook'], operation: ['set'] } },
	properties,
);

export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject> {
	const queueId = getQueueId.call(this, itemIndex);
	const url = String(this.getNodeParameter('url', itemIndex, '') ?? '').trim();
	if (!isValidUrl(url) || url.length > MAX_TARGET_LENGTH) {
		throw new NodeOperationError(
			this.getNode(),
			url === ''
				? 'No webhook URL given'
				: url.length > MAX_TARGET_LENGTH
					? `The webhook URL is ${url.length} characters long; the service keeps at most ${MAX_TARGET_LENGTH}`
					: `"${url}" is not a URL the service accepts`,
			{
				itemIndex,
				description:
					'Enter a full http:// or https:// address whose host has a dot (or is localhost), at most 255 characters. To clear the webhook, use the Remove operation.',
			},
		);
	}
	// the service writes a webhook by queue id alone, in any organization: check the queue is ours
	await getQueue.call(this, queueId, itemIndex);
	const target = await setWebhookTarget.call(this, queueId, url, itemIndex);
	return { queueId, target: maskSecret(target ?? url) };
}
