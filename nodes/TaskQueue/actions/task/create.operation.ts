import type {
	IDataObject,
	IExecuteFunctions,
	INodeProperties,
	JsonObject,
	ResourceMapperValue,
} from 'n8n-workflow';
import { NodeApiError, NodeOperationError, updateDisplayOptions } from 'n8n-workflow';

import type { CompiledQueue } from '../../helpers/blockModel';
import { fieldSummary } from '../../helpers/blockModel';
import { validateTaskData } from '../../helpers/taskData';
import { AdaptiveConcurrency, INITIAL_CONCURRENCY } from '../../helpers/concurrency';
import { asNodeError } from '../../helpers/errors';
import { compileFieldMapping, readMappedFields } from '../../helpers/fieldMapping';
import { queueLocator } from '../../helpers/descriptions';
import { getQueueId } from '../../helpers/queue';
import { parseBody } from '../../transport';
import { createTask } from '../../transport/endpoints';
import { isTask, taskSchema } from '../../transport/schemas';
import type { ExecutionState } from '../node.type';

export const DEFAULT_CONCURRENCY = 64;
const MAX_CONCURRENCY = 256;

/** The task's fields, from the queue's configuration (Create and Create and Wait). */
export const taskDataField: INodeProperties = {
	displayName: 'Task Data',
	name: 'taskData',
	type: 'resourceMapper',
	noDataExpression: true,
	default: { mappingMode: 'defineBelow', value: null },
	required: true,
	description:
		"The task's fields, loaded from the queue's configuration: the inputs a person works from come first, then the fields people fill in when they complete the task (optional here)",
	typeOptions: {
		// the queue alone: n8n's field mapper clears every mapping when a parameter it depends on changes
		loadOptionsDependsOn: ['queue.value'],
		resourceMapper: {
			resourceMapperMethod: 'getTaskFields',
			mode: 'add',
			fieldWords: { singular: 'field', plural: 'fields' },
			addAllFields: true,
			multiKeyMatch: false,
			supportAutoMap: true,
			// every empty list comes with its own notice ("Choose a queue first", ...): no red "No fields found" above it
			hideNoDataError: true,
		},
	},
};

export const maxConcurrencyOption: INodeProperties = {
	displayName: 'Max Concurrency',
	name: 'concurrency',
	type: 'number',
	typeOptions: { minValue: 1, maxValue: MAX_CONCURRENCY },
	default: DEFAULT_CONCURRENCY,
	description: `The most tasks to create at the same time when the node receives many items. The node starts with ${INITIAL_CONCURRENCY} and sends more while the service answers as fast as at first (a distant service), fewer when its answers slow down or it rate limits. Lower it to spare a small server.`,
};

const properties: INodeProperties[] = [
	{ ...queueLocator, description: 'The queue to add the task to' },
	taskDataField,
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add option',
		default: {},
		options: [maxConcurrencyOption],
	},
];

export const description = updateDisplayOptions(
	{ show: { resource: ['task'], operation: ['create'] } },
	properties,
);

export interface PreparedTask {
	queueId: number;
	data: Record<string, unknown>;
}

export type Prepared = PreparedTask | { error: unknown };

/** Create's state: each item's task, read and checked by `prepare` before any is sent. */
export interface CreateState extends ExecutionState {
	prepared: Prepared[];
}

function invalidData(
	this: IExecuteFunctions,
	queue: CompiledQueue,
	messages: string[],
	autoMap: boolean,
	itemIndex: number,
): NodeOperationError {
	const where = autoMap
		? 'Task Data maps the input item automatically, so fix the fields of the input item (remove others with an Edit Fields node), or switch Task Data to "Map Each Field Below".'
		: 'Fix the values under Task Data (Values to Send); if the queue changed, refresh its fields.';
	return new NodeOperationError(
		this.getNode(),
		`The task data has ${messages.length} problem${messages.length === 1 ? '' : 's'}: ${messages.join('; ')}`,
		{
			itemIndex,
			description: `Queue ${queue.queueId} (${queue.name}) takes these fields: ${fieldSummary(queue)}. Option fields take an option's ID or its name. ${where}`,
		},
	);
}

/**
 * Reads and checks every item before the first task is created: a bad item stops the run before
 * anything is sent (or, under "Continue", becomes an error item while the others are created).
 */
export async function prepare(
	this: IExecuteFunctions,
	itemCount: number,
	state: CreateState,
): Promise<void> {
	await prepareTasks.call(this, itemCount, state);
}

/**
 * `prepare` of Create, shared with Create and Wait: `fill` adds the values the node sets itself to
 * an item's mapped fields before they are checked.
 */
export async function prepareTasks(
	this: IExecuteFunctions,
	itemCount: number,
	state: CreateState,
	fill?: (input: IDataObject, queue: CompiledQueue, itemIndex: number) => IDataObject,
): Promise<void> {
	const continueOnFail = this.continueOnFail();
	const items = this.getInputData();
	state.prepared = [];
	const mode = this.getNodeParameter('taskData.mappingMode', 0, 'defineBelow') as string;
	if (mode !== 'defineBelow' && mode !== 'autoMapInputData') {
		throw new NodeOperationError(
			this.getNode(),
			`Task Data has an unknown mapping mode "${String(mode)}"`,
			{
				description: 'Set Task Data to "Map Each Field Below" or "Map Automatically".',
			},
		);
	}
	const autoMap = mode === 'autoMapInputData';
	// fields dragged from the input are read from each item; any other mapping is n8n's to resolve
	const mapping = autoMap
		? undefined
		: compileFieldMapping(
				this.getNodeParameter('taskData.value', 0, null, { rawExpressions: true }),
			);
	for (let i = 0; i < itemCount; i++) {
		let prepared: Prepared;
		try {
			const queueId = getQueueId.call(this, i);
			let input: IDataObject;
			if (autoMap) {
				input = items[i].json;
			} else {
				input =
					(mapping && readMappedFields(mapping, items[i].json)) ??
					(((this.getNodeParameter('taskData', i) as ResourceMapperValue)?.value ??
						{}) as IDataObject);
			}
			const queue = await state.queues.get(this, queueId, i);
			const { data, problems } = validateTaskData(queue, fill ? fill(input, queue, i) : input);
			if (problems.length > 0) {
				throw invalidData.call(
					this,
					queue,
					problems.map((p) => p.message),
					autoMap,
					i,
				);
			}
			prepared = { queueId, data };
		} catch (error) {
			if (!continueOnFail) throw asNodeError(this.getNode(), error, i);
			prepared = { error };
		}
		state.prepared[i] = prepared;
	}
}

export function concurrency(this: IExecuteFunctions, state: ExecutionState): () => number {
	const raw = this.getNodeParameter('options.concurrency', 0, DEFAULT_CONCURRENCY) as unknown;
	const value = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : raw;
	if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
		throw new NodeOperationError(
			this.getNode(),
			`Max Concurrency must be a whole number of at least 1, not ${JSON.stringify(raw)}`,
			{
				description: `Set the Max Concurrency option to the most tasks to create at the same time (1 to ${MAX_CONCURRENCY}), or remove it to use ${DEFAULT_CONCURRENCY}.`,
			},
		);
	}
	const limit = new AdaptiveConcurrency(Math.min(MAX_CONCURRENCY, value));
	state.concurrency = limit;
	return () => limit.limit;
}

export async function execute(
	this: IExecuteFunctions,
	itemIndex: number,
	state: CreateState,
): Promise<IDataObject> {
	const prepared = state.prepared[itemIndex];
	if ('error' in prepared) throw asNodeError(this.getNode(), prepared.error, itemIndex);
	const { response, action } = await createTask.call(
		this,
		prepared.queueId,
		prepared.data as IDataObject,
		itemIndex,
		state.concurrency,
	);
	if (isTask(response.body)) return response.body as IDataObject;
	// A success status means the task exists even when the answer was cut off or garbled: say so,
	// or a rerun of the "failed" items would create it a second time.
	if (response.statusCode >= 200 && response.statusCode < 300) {
		throw new NodeApiError(this.getNode(), { statusCode: response.statusCode } as JsonObject, {
			message: `The task was created in queue ${prepared.queueId} (HTTP ${response.statusCode}), but the service's answer could not be read`,
			description:
				'Do not run this item again: the task exists. Its ID is unknown because the answer was cut off or not JSON; find the task in the queue.',
			httpCode: String(response.statusCode),
			itemIndex,
		});
	}
	return parseBody(this.getNode(), taskSchema, response, { action, itemIndex }) as IDataObject;
}
