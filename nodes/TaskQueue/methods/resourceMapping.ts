import type { ILoadOptionsFunctions, INodeParameterResourceLocator, ResourceMapperFields } from 'n8n-workflow';

import { blockToField, orderBlocks } from '../helpers/blocks';
import { getQueue } from '../transport/endpoints';

const URL_ID = /(?:queues|workflows)\/(\d+)/;

/** The Create operation's fields: one per block of the chosen queue, inputs first. */
export async function getTaskFields(this: ILoadOptionsFunctions): Promise<ResourceMapperFields> {
	const raw = this.getNodeParameter('queue', undefined, { extractValue: true }) as
		| INodeParameterResourceLocator
		| string
		| undefined;
	const value = typeof raw === 'object' && raw !== null ? raw.value : raw;
	const text = String(value ?? '').trim();
	const queueId = /^\d+$/.test(text) ? Number(text) : Number(URL_ID.exec(text)?.[1]);
	if (!Number.isSafeInteger(queueId) || queueId <= 0) {
		return { fields: [], emptyFieldsNotice: 'Choose a queue first: its fields appear here.' };
	}
	const queue = await getQueue.call(this, queueId);
	const fields = orderBlocks(queue.data ?? []).map(blockToField);
	return fields.length > 0
		? { fields }
		: { fields, emptyFieldsNotice: `Queue ${queueId} has no fields configured in the service.` };
}
