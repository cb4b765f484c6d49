import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { NodeOperationError, updateDisplayOptions } from 'n8n-workflow';

import { parseDateParameter } from '../../helpers/dates';
import { queueLocator, returnAllAndLimit } from '../../helpers/descriptions';
import { getLimit, getQueueId } from '../../helpers/queue';
import { readCompletedTasks } from '../../reader/pages';

const properties: INodeProperties[] = [
	{ ...queueLocator, description: 'The queue whose completed tasks to return' },
	...returnAllAndLimit,
	{
		displayName: 'Filters',
		name: 'filters',
		type: 'collection',
		placeholder: 'Add filter',
		default: {},
		options: [
			{
				displayName: 'Completed After',
				name: 'completedAfter',
				type: 'dateTime',
				default: '',
				description: 'Only tasks completed at or after this time',
			},
			{
				displayName: 'Completed Before',
				name: 'completedBefore',
				type: 'dateTime',
				default: '',
				description: 'Only tasks completed before this time',
			},
		],
	},
];

export const description = updateDisplayOptions(
	{ show: { resource: ['task'], operation: ['getCompleted'] } },
	properties,
);

/** The queue's completed tasks, newest first, within the dates; paging: reader/pages.ts. */
export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject[]> {
	const queueId = getQueueId.call(this, itemIndex);
	const limit = getLimit.call(this, itemIndex, 'completed tasks');
	const filters = this.getNodeParameter('filters', itemIndex, {}) as IDataObject;
	const after = parseDateParameter.call(this, filters.completedAfter, 'Completed After', itemIndex);
	const before = parseDateParameter.call(
		this,
		filters.completedBefore,
		'Completed Before',
		itemIndex,
	);
	if (after && before && after.toMillis() >= before.toMillis()) {
		throw new NodeOperationError(
			this.getNode(),
			'Completed After must be earlier than Completed Before',
			{
				itemIndex,
				description: 'Swap the two dates, or remove one of the filters.',
			},
		);
	}
	const tasks = await readCompletedTasks.call(this, queueId, {
		limit,
		after: after ?? undefined,
		before: before ?? undefined,
		itemIndex,
	});
	return tasks as IDataObject[];
}
