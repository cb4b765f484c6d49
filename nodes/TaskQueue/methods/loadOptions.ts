import type { ILoadOptionsFunctions, INodePropertyOptions } from 'n8n-workflow';

import { fieldsInValuesToSend } from '../waiting/settings';
import { canCarryAddress, isMeantForAddress, optionsOf } from '../helpers/blockModel';
import { parseQueueId } from '../helpers/queue';
import { getQueue, getWebhookTarget, listQueues } from '../transport/endpoints';
import { chooseResumeField } from '../waiting/resumeField';
import { describeRouteBack, routeBackOf } from '../waiting/setup';
import type { Block } from '../transport/schemas';

// The field pickers of Create and Wait: blocks of the chosen queue, of the kinds each parameter takes.

async function blocksOf(context: ILoadOptionsFunctions): Promise<Block[]> {
	const queueId = parseQueueId(
		context.getNodeParameter('queue', undefined, { extractValue: true }),
	);
	if (queueId === undefined) return [];
	return (await getQueue.call(context, queueId)).data ?? [];
}

const asOptions = (blocks: Block[]): INodePropertyOptions[] =>
	blocks.map((block) => ({ name: `${block.name || block.id} (${block.type})`, value: block.id }));

/**
 * Automatic first (named after the field it takes now), then the read-only text and link blocks
 * (people cannot change them) that are not among the Values to Send, each saying what it is. The
 * editor sends expressions resolved (null without input data), so every field listed in Values to
 * Send counts, whatever its value; remove one there to offer it here.
 */
export async function getResumeFields(
	this: ILoadOptionsFunctions,
): Promise<INodePropertyOptions[]> {
	const queueId = parseQueueId(this.getNodeParameter('queue', undefined, { extractValue: true }));
	if (queueId === undefined) {
		return [
			{
				name: 'Automatic (Choose a Queue First)',
				value: '',
				description: "Takes the queue's read-only field named for the address",
			},
		];
	}
	const mapped = fieldsInValuesToSend(this.getNodeParameter('taskData', null));
	const blocks = await blocksOf(this);
	const automatic = chooseResumeField(blocks, '', mapped, String(queueId));
	const label = (block: Block) => block.name || block.id;
	return [
		'field' in automatic
			? {
					name: `Automatic: ${label(automatic.field)}`,
					value: '',
					description: `The queue's read-only field named for the address (${automatic.field.id})`,
				}
			: {
					name: 'Automatic: No Field Is Named for the Address',
					value: '',
					description: [automatic.problem, automatic.fix].join('. '),
				},
		...blocks
			.filter((block) => canCarryAddress(block) && !mapped.has(block.id))
			.map((block) =>
				isMeantForAddress(block)
					? {
							name: `${label(block)} (${block.type}, for the address)`,
							value: block.id,
							description: 'A read-only field named for the address',
						}
					: {
							name: `${label(block)} (${block.type}): people see the address instead`,
							value: block.id,
							description: `People read this field: the address replaces what it would show. The node refuses it while Values to Send maps it${blocks.some((b) => isMeantForAddress(b)) ? ', or while the queue has a field for the address' : ''}.`,
						},
			),
	];
}

export async function getSelectionFields(
	this: ILoadOptionsFunctions,
): Promise<INodePropertyOptions[]> {
	return asOptions((await blocksOf(this)).filter((block) => block.type === 'single_selection'));
}

/** Text fields, for the optional Feedback and Message Fields: "None" first (n8n flags a value it does not list). */
export async function getTextFields(this: ILoadOptionsFunctions): Promise<INodePropertyOptions[]> {
	return [
		{ name: 'None', value: '', description: 'Not used' },
		...asOptions((await blocksOf(this)).filter((block) => block.type === 'text')),
	];
}

/**
 * The Approval Field's options; before it is chosen, every selection field's, named with their field:
 * n8n loads this list when the field appears and skips the reload after the Approval Field is picked
 * while an expression of the node fails in the editor (a mapping of input data not yet run).
 */
export async function getApprovalChoices(
	this: ILoadOptionsFunctions,
): Promise<INodePropertyOptions[]> {
	const fieldId = this.getNodeParameter('approvalField', '') as string;
	const blocks = await blocksOf(this);
	const block = blocks.find((b) => b.id === fieldId);
	if (block)
		return optionsOf(block).map((option) => ({ name: option.name || option.id, value: option.id }));
	const byId = new Map<string, string[]>();
	for (const field of blocks.filter((b) => b.type === 'single_selection')) {
		for (const option of optionsOf(field)) {
			const named = `${option.name || option.id} (${field.name || field.id})`;
			byId.set(option.id, [...(byId.get(option.id) ?? []), named]);
		}
	}
	return [...byId].map(([value, names]) => ({ name: names.join(', '), value }));
}

/**
 * Create and Wait's route back, checked each time the node opens or its queue changes: its only
 * option's name is the state, so the editor shows it where the node is configured.
 */
export async function getRouteBackState(
	this: ILoadOptionsFunctions,
): Promise<INodePropertyOptions[]> {
	const state = (name: string, description: string): INodePropertyOptions[] => [
		{ name, value: '', description },
	];
	const queueId = parseQueueId(this.getNodeParameter('queue', undefined, { extractValue: true }));
	if (queueId === undefined)
		return state('Choose a queue first', 'The route back is checked once a queue is chosen');
	if (this.getNodeParameter('options.routeBack', 'trigger') === 'pollTrigger') {
		return state(
			'Through a Poll Trigger (not checked)',
			`Make sure a Task Queue Poll Trigger on queue ${queueId} is active: the node cannot check it`,
		);
	}
	let target: string | null;
	try {
		target = await getWebhookTarget.call(this, queueId);
	} catch (error) {
		return state("Not checked: the queue's webhook cannot be read", (error as Error).message);
	}
	// the editor's address stands for the webhook address (they differ only where N8N_EDITOR_BASE_URL is set)
	const { state: name, detail } = describeRouteBack(
		routeBackOf(target, this.getInstanceBaseUrl()),
		queueId,
		target,
	);
	return state(name, detail);
}

/** Escalate's queue picker: each queue says whether a Task Queue Trigger of this n8n routes it back. */
export async function getEscalationQueues(
	this: ILoadOptionsFunctions,
): Promise<INodePropertyOptions[]> {
	const queues = (await listQueues.call(this)).sort((a, b) => a.name.localeCompare(b.name));
	const base = this.getInstanceBaseUrl();
	return await Promise.all(
		queues.slice(0, 50).map(async (queue) => {
			const target = await getWebhookTarget.call(this, queue.id).catch(() => null);
			const routed = routeBackOf(target, base) === 'routed';
			return {
				name: `${queue.name} (${queue.id}) · ${routed ? 'can be a level' : 'not routed back'}`,
				value: String(queue.id),
				description: routed
					? "Its completions come back through this n8n's Task Queue Trigger"
					: `Activate a Task Queue Trigger on queue ${queue.id} first: its answers must come back to the run`,
			};
		}),
	);
}
