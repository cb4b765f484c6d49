import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { NodeOperationError, updateDisplayOptions } from 'n8n-workflow';

import { parseBody, taskQueueRequest } from '../../transport';
import { queueListSchema } from '../../transport/schemas';

const properties: INodeProperties[] = [
	{
		displayName: 'Return All',
		name: 'returnAll',
		type: 'boolean',
		default: false,
		description: 'Whether to return all results or only up to a given limit',
	},
	{
		displayName: 'Limit',
		name: 'limit',
		type: 'number',
		typeOptions: { minValue: 1 },
		default: 50,
		description: 'Max number of results to return',
		displayOptions: { show: { returnAll: [false] } },
	},
];

export const description = updateDisplayOptions(
	{ show: { resource: ['queue'], operation: ['getMany'] } },
	properties,
);

/** The service answers the whole list at once (no paging); Limit is applied here. */
export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject[]> {
	const returnAll = this.getNodeParameter('returnAll', itemIndex, false) as boolean;
	const limit = returnAll ? Infinity : (this.getNodeParameter('limit', itemIndex, 50) as number);
	if (!returnAll && !(Number.isInteger(limit) && limit >= 1)) {
		throw new NodeOperationError(this.getNode(), `Limit must be a whole number of at least 1, not ${limit}`, {
			itemIndex,
			description: 'Set Limit to how many queues to return, or turn on Return All.',
		});
	}
	const request = {
		method: 'GET' as const,
		path: '',
		retry: 'idempotent' as const,
		action: 'list the queues',
		itemIndex,
	};
	const queues = parseBody(this.getNode(), queueListSchema, await taskQueueRequest.call(this, request), request);
	return (returnAll ? queues : queues.slice(0, limit)) as IDataObject[];
}
