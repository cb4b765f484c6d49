import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { queueLocator } from '../../helpers/descriptions';
import { getQueueId } from '../../helpers/queue';
import { getQueue } from '../../transport/endpoints';

const properties: INodeProperties[] = [{ ...queueLocator, description: 'The queue to get' }];

export const description = updateDisplayOptions(
	{ show: { resource: ['queue'], operation: ['get'] } },
	properties,
);

export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject> {
	const queueId = getQueueId.call(this, itemIndex);
	return (await getQueue.call(this, queueId, itemIndex)) as IDataObject;
}
