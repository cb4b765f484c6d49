import type { ILoadOptionsFunctions, ResourceMapperFields } from 'n8n-workflow';

import { isInputBlock, isMeantForAddress } from '../helpers/blockModel';
import { blockToField, orderBlocks } from '../helpers/blocks';
import { parseQueueId } from '../helpers/queue';
import { getQueue } from '../transport/endpoints';

/** The Create operation's fields: one per block of the chosen queue, inputs first. */
export async function getTaskFields(this: ILoadOptionsFunctions): Promise<ResourceMapperFields> {
	// n8n's editor may ask the first "taskData" property's method whatever the operation (seen in 2.41.1)
	if (this.getNodeParameter('operation', '') === 'sendAndWait')
		return await getWaitTaskFields.call(this);
	const queueId = parseQueueId(this.getNodeParameter('queue', undefined, { extractValue: true }));
	if (queueId === undefined) {
		return { fields: [], emptyFieldsNotice: 'Choose a queue first: its fields appear here.' };
	}
	const queue = await getQueue.call(this, queueId);
	const fields = orderBlocks(queue.data ?? []).map(blockToField);
	return fields.length > 0
		? { fields }
		: { fields, emptyFieldsNotice: `Queue ${queueId} has no fields configured in the service.` };
}

/**
 * Create and Wait's fields: only the inputs a person works from (what people fill in comes back in
 * the answer, it is not sent), never a field named for the address (the node writes the address
 * there). The same whatever the Resume Address Field: n8n's field mapper clears every mapping when a
 * parameter it depends on changes, so it depends on the queue alone.
 */
export async function getWaitTaskFields(
	this: ILoadOptionsFunctions,
): Promise<ResourceMapperFields> {
	const queueId = parseQueueId(this.getNodeParameter('queue', undefined, { extractValue: true }));
	if (queueId === undefined) {
		return { fields: [], emptyFieldsNotice: 'Choose a queue first: its fields appear here.' };
	}
	const queue = await getQueue.call(this, queueId);
	const blocks = queue.data ?? [];
	// a field people read stays listed even when chosen for the address: a mapping made there is kept
	// (the editor drops the value of a field that leaves the list), and the node refuses the pair
	const fields = blocks
		.filter((block) => isInputBlock(block) && !isMeantForAddress(block))
		.map(blockToField);
	return fields.length > 0
		? { fields }
		: {
				fields,
				emptyFieldsNotice: `Queue ${queueId} has no input fields besides the Resume Address Field: people fill in every other field.`,
			};
}
