import type { IExecuteFunctions, INodeExecutionData, JsonObject } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { asNodeError } from '../helpers/errors';
import { runPool } from '../helpers/pool';
import { QueueConfigCache } from '../helpers/queueConfig';
import * as queue from './queue';
import * as task from './task';
import * as webhook from './webhook';
import type {
	ExecutionState,
	NodeMap,
	OperationsOf,
	TaskQueueOperation,
	TaskQueueType,
} from './node.type';

const resources: { [R in keyof NodeMap]: OperationsOf<R> } = {
	task: task.operations,
	queue: queue.operations,
	webhook: webhook.operations,
};

/** The item a failed input becomes under "Continue (using error output)" or "Continue". */
function errorItem(error: unknown, itemIndex: number): INodeExecutionData {
	const json: JsonObject = {
		error: error instanceof Error ? error.message : String(error),
	};
	const description = (error as { description?: unknown }).description;
	if (typeof description === 'string' && description !== '') json.description = description;
	const httpCode = (error as { httpCode?: unknown }).httpCode;
	if (typeof httpCode === 'string' && httpCode !== '') json.httpCode = httpCode;
	return { json, pairedItem: { item: itemIndex } };
}

export async function router(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const items = this.getInputData();
	const resource = this.getNodeParameter('resource', 0) as TaskQueueType['resource'];
	// checked first: n8n cannot even read the operation of a resource the node does not have
	if (!Object.prototype.hasOwnProperty.call(resources, resource)) {
		throw new NodeOperationError(
			this.getNode(),
			`The resource "${String(resource)}" is not supported`,
			{
				description: `Pick a resource from the list of the Task Queue node: ${Object.keys(resources).join(', ')}.`,
			},
		);
	}
	const operationName = this.getNodeParameter('operation', 0) as string;
	const operations: Record<string, TaskQueueOperation> = resources[resource];
	const operation = Object.prototype.hasOwnProperty.call(operations, operationName)
		? operations[operationName]
		: undefined;
	if (!operation) {
		throw new NodeOperationError(
			this.getNode(),
			`The operation "${operationName}" is not supported for resource "${resource}"`,
			{ description: 'Pick an operation from the list of the Task Queue node.' },
		);
	}

	const state: ExecutionState = { queues: new QueueConfigCache() };
	const continueOnFail = this.continueOnFail();
	// options first: a bad one stops the run before any request
	const concurrency = operation.concurrency?.call(this, state) ?? 1;
	if (operation.prepare) await operation.prepare.call(this, items.length, state);

	const results: INodeExecutionData[][] = new Array(items.length);
	await runPool(items.length, concurrency, async (i) => {
		try {
			const data = await operation.execute.call(this, i, state);
			results[i] = this.helpers.constructExecutionMetaData(this.helpers.returnJsonArray(data), {
				itemData: { item: i },
			});
		} catch (error) {
			if (!continueOnFail) throw asNodeError(this.getNode(), error, i);
			results[i] = [errorItem(error, i)];
		}
	});
	if (operation.finish) return await operation.finish.call(this, results, state);
	return [results.flat()];
}
