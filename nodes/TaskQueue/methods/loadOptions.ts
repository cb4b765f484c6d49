import type { ILoadOptionsFunctions, INodePropertyOptions } from 'n8n-workflow';

import { mappedFields, RESUME_FIELD_KINDS } from '../waiting/settings';
import { isInputBlock, optionsOf } from '../helpers/blocks';
import { parseQueueId } from '../helpers/queue';
import { getQueue, getWebhookTarget } from '../transport/endpoints';
import { describeRouteBack, routeBackOf } from '../waiting/setup';
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

/**
 * Create and Wait's route back, checked each time the node opens or its queue changes: its only
 * option's name is the state, so the editor shows it where the node is configured.
 */
export async function getRouteBackState(this: ILoadOptionsFunctions): Promise<INodePropertyOptions[]> {
	const state = (name: string, description?: string): INodePropertyOptions[] => [{ name, value: '', ...(description ? { description } : {}) }];
	const queueId = parseQueueId(this.getNodeParameter('queue', undefined, { extractValue: true }));
	if (queueId === undefined) return state('Choose a queue first');
	if (this.getNodeParameter('options.routeBack', 'trigger') === 'pollTrigger') {
		return state(`Through a Task Queue Poll Trigger on queue ${queueId}: not checked, make sure one is active`);
	}
	let target: string | null;
	try {
		target = await getWebhookTarget.call(this, queueId);
	} catch (error) {
		return state(`Not checked: could not read queue ${queueId}'s webhook (${(error as Error).message})`);
	}
	// the editor's address stands for the webhook address (they differ only where N8N_EDITOR_BASE_URL is set)
	const route = routeBackOf(target, this.getInstanceBaseUrl());
	return state(describeRouteBack(route, queueId, target), route === 'routed' ? 'The node checks this again before it creates anything' : 'The node refuses to run until this is fixed');
}
