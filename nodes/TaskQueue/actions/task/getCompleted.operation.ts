import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { NodeOperationError, updateDisplayOptions } from 'n8n-workflow';

import { parseDateParameter } from '../../helpers/dates';
import { queueLocator, returnAllAndLimit } from '../../helpers/descriptions';
import { getLimit, getQueueId } from '../../helpers/queue';
import { parseBody, taskQueueRequest } from '../../transport';
import type { CompletedTask } from '../../transport/schemas';
import { completedPageSchema } from '../../transport/schemas';

/** The service caps a page at 1000 tasks. */
export const MAX_PAGE_SIZE = 1000;
/** Page size while dates are also filtered here, so few matches do not mean many tiny pages. */
const FILTERED_PAGE_SIZE = 100;

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

/**
 * Pages with limit/offset (computed here; the service's absolute `next` URL can be wrong behind a
 * proxy). Newest completions come first and new ones push older tasks to higher offsets while this
 * pages, so a task can come back on the next page: it is skipped by its ID. None is missed.
 */
export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject[]> {
	const queueId = getQueueId.call(this, itemIndex);
	const limit = getLimit.call(this, itemIndex, 'completed tasks');
	const filters = this.getNodeParameter('filters', itemIndex, {}) as IDataObject;
	const after = parseDateParameter.call(this, filters.completedAfter, 'Completed After', itemIndex);
	const before = parseDateParameter.call(this, filters.completedBefore, 'Completed Before', itemIndex);
	if (after && before && after.toMillis() >= before.toMillis()) {
		throw new NodeOperationError(this.getNode(), 'Completed After must be earlier than Completed Before', {
			itemIndex,
			description: 'Swap the two dates, or remove one of the filters.',
		});
	}
	const afterMs = after?.toMillis();
	const beforeMs = before?.toMillis();
	const qs: IDataObject = {};
	// The service filters by whole days (UTC) and ignores what it cannot parse; the exact times are
	// checked here on each task's completed_at.
	if (after) qs.start_date = after.toUTC().toISODate();
	if (before) qs.end_date = before.toUTC().toISODate();
	const filtering = after !== undefined || before !== undefined;

	const seen = new Set<number>();
	const tasks: CompletedTask[] = [];
	let offset = 0;
	for (;;) {
		const wanted = limit - tasks.length;
		const pageSize = Math.min(MAX_PAGE_SIZE, Math.max(wanted, filtering ? FILTERED_PAGE_SIZE : 1));
		const request = {
			method: 'GET' as const,
			path: `/${queueId}/tasks/completed`,
			qs: { ...qs, limit: pageSize, offset },
			retry: 'idempotent' as const,
			action: `list the completed tasks of queue ${queueId}`,
			itemIndex,
		};
		const page = parseBody(
			this.getNode(),
			completedPageSchema,
			await taskQueueRequest.call(this, request),
			request,
		);
		let pastRange = false;
		for (const task of page.tasks) {
			if (seen.has(task.id)) continue;
			seen.add(task.id);
			const completedAt = Date.parse(task.completed_at);
			if (beforeMs !== undefined && completedAt >= beforeMs) continue;
			if (afterMs !== undefined && completedAt < afterMs) {
				pastRange = true; // newest first: every later task is older still
				break;
			}
			tasks.push(task);
			if (tasks.length >= limit) break;
		}
		offset += page.tasks.length;
		if (
			tasks.length >= limit ||
			pastRange ||
			page.tasks.length === 0 ||
			page.tasks.length < pageSize ||
			offset >= page.count
		) {
			break;
		}
	}
	return tasks as IDataObject[];
}
