import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { returnAllAndLimit } from '../../helpers/descriptions';
import { getLimit } from '../../helpers/queue';
import { listQueues } from '../../transport/endpoints';

const properties: INodeProperties[] = [...returnAllAndLimit];

export const description = updateDisplayOptions(
	{ show: { resource: ['queue'], operation: ['getMany'] } },
	properties,
);

/** The service answers the whole list at once (no paging); Limit is applied here. */
export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject[]> {
	const limit = getLimit.call(this, itemIndex, 'queues');
	const queues = await listQueues.call(this, itemIndex);
	return queues.slice(0, limit) as IDataObject[];
}
