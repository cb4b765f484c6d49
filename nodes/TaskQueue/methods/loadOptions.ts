import type { ILoadOptionsFunctions, INodePropertyOptions } from 'n8n-workflow';

import { mappedFields, RESUME_FIELD_KINDS } from '../waiting/settings';
import { isInputBlock, optionsOf } from '../helpers/blocks';
import { parseQueueId } from '../helpers/queue';
import { getQueue } from '../transport/endpoints';
import type { Block } from '../transport/schemas';

// The field pickers of Create and Wait: blocks of the chosen queue, of the kinds each parameter takes.

async function blocksOf(context: ILoadOptionsFunctions): Promise<Block[]> {
	const queueId = parseQueueId(context.getNodeParameter('queue', undefined, { extractValue: true }));
	if (queueId === undefined) return [];
	return (await getQueue.call(context, queueId)).data ?? [];
}

const asOptions = (blocks: Block[]): INodePropertyOptions[] =>
	blocks.map((block) => ({ name: `${block.name || block.id} (${block.type})`, value: block.id }));

/** Read-only text and link blocks (people cannot change them), none mapped in Values to Send. */
export async function getResumeFields(this: ILoadOptionsFunctions): Promise<INodePropertyOptions[]> {
	const mapped = mappedFields(this.getNodeParameter('taskData', null, { rawExpressions: true }));
	return asOptions((await blocksOf(this)).filter((block) => RESUME_FIELD_KINDS.has(block.type) && isInputBlock(block) && !mapped.has(block.id)));
}

export async function getSelectionFields(this: ILoadOptionsFunctions): Promise<INodePropertyOptions[]> {
	return asOptions((await blocksOf(this)).filter((block) => block.type === 'single_selection'));
}

export async function getTextFields(this: ILoadOptionsFunctions): Promise<INodePropertyOptions[]> {
	return asOptions((await blocksOf(this)).filter((block) => block.type === 'text'));
}

/** The options of the chosen approval field. */
export async function getApprovalChoices(this: ILoadOptionsFunctions): Promise<INodePropertyOptions[]> {
	const fieldId = this.getNodeParameter('approvalField', '') as string;
	const block = (await blocksOf(this)).find((b) => b.id === fieldId);
	return block ? optionsOf(block).map((option) => ({ name: option.name || option.id, value: option.id })) : [];
}
