import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { NodeOperationError, updateDisplayOptions } from 'n8n-workflow';

import { parseDateParameter } from '../../helpers/dates';
import { queueLocator, returnAllAndLimit } from '../../helpers/descriptions';
import { getLimit, getQueueId } from '../../helpers/queue';
import { getCompletedPage } from '../../transport/endpoints';
import type { CompletedPage, CompletedTask } from '../../transport/schemas';

/** The service caps a page at 1000 tasks. */
export const MAX_PAGE_SIZE = 1000;
/** Page size while dates are also filtered here, so few matches do not mean many tiny pages. */
const FILTERED_PAGE_SIZE = 100;
/** Pages requested at once after the first (reads only; the Create operation defaults to 8). */
export const PAGES_IN_FLIGHT = 4;

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
 * pages, so a task can come back on a later page: it is skipped by its ID. None is missed.
 *
 * After the first page (whose `count` says how many follow), up to PAGES_IN_FLIGHT pages are
 * requested at once, so the service's work and the round trips overlap. Each of those pages starts
 * on the last task of the page before it. Answered in order, a shift can only repeat tasks; but the
 * service may answer a later page first, and completions arriving in between would then push
 * unseen tasks past it. Its first task, not seen yet, shows that: the rest is paged one request at
 * a time from there, which no shift can get past.
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
	const qs: { start_date?: string; end_date?: string } = {};
	// The service filters by whole days (UTC) and ignores what it cannot parse; the exact times are
	// checked here on each task's completed_at.
	if (after) qs.start_date = after.toUTC().toISODate() ?? undefined;
	if (before) qs.end_date = before.toUTC().toISODate() ?? undefined;
	const filtering = after !== undefined || before !== undefined;

	const seen = new Set<number>();
	const tasks: CompletedTask[] = [];
	/** Keeps a page's tasks not seen yet; false once the limit or the start of the date range is reached. */
	const keep = (page: CompletedPage): boolean => {
		for (const task of page.tasks) {
			if (seen.has(task.id)) continue;
			seen.add(task.id);
			if (filtering) {
				const completedAt = Date.parse(task.completed_at);
				if (beforeMs !== undefined && completedAt >= beforeMs) continue;
				// newest first: every later task is older still
				if (afterMs !== undefined && completedAt < afterMs) return false;
			}
			tasks.push(task);
			if (tasks.length >= limit) return false;
		}
		return true;
	};
	const fetchPage = async (offset: number, size: number): Promise<CompletedPage> => {
		return await getCompletedPage.call(this, queueId, { ...qs, limit: size, offset }, itemIndex);
	};
	// A short page is the last one; a longer one than asked for (a server ignoring the limit) is not.
	const isLast = (page: CompletedPage, size: number, offset: number) =>
		page.tasks.length < size || offset >= page.count;

	let size = Math.min(MAX_PAGE_SIZE, Math.max(limit, filtering ? FILTERED_PAGE_SIZE : 1));
	let page = await fetchPage(0, size);
	let more = keep(page);
	let offset = page.tasks.length;
	if (more && !isLast(page, size, offset) && !filtering) {
		({ more, offset } = await readAhead(page, offset));
	} else {
		more &&= !isLast(page, size, offset);
	}
	while (more) {
		size = Math.min(MAX_PAGE_SIZE, Math.max(limit - tasks.length, filtering ? FILTERED_PAGE_SIZE : 1));
		page = await fetchPage(offset, size);
		more = keep(page);
		offset += page.tasks.length;
		more &&= !isLast(page, size, offset);
	}
	return tasks as IDataObject[];

	/** The pages after the first, several in flight; says where one-by-one paging goes on, if it must. */
	async function readAhead(first: CompletedPage, firstLength: number): Promise<{ more: boolean; offset: number }> {
		const inFlight: Array<{ offset: number; size: number; page: Promise<CompletedPage> }> = [];
		let count = first.count;
		let nextOffset = firstLength - 1;
		let planned = tasks.length; // tasks the pages asked for can bring, at most
		let lastEnd = firstLength;
		const settle = async () => {
			await Promise.allSettled(inFlight.map((request) => request.page));
		};
		try {
			for (;;) {
				while (inFlight.length < PAGES_IN_FLIGHT && nextOffset < count && planned < limit) {
					const pageSize = Math.min(MAX_PAGE_SIZE, limit - planned + 1);
					const pending = fetchPage(nextOffset, pageSize);
					pending.catch(() => undefined); // awaited in turn below; not an unhandled rejection meanwhile
					inFlight.push({ offset: nextOffset, size: pageSize, page: pending });
					planned += pageSize - 1;
					nextOffset += pageSize - 1;
				}
				const next = inFlight.shift();
				// nothing left to ask for, yet the limit is not reached: repeated tasks took the room
				if (!next) return { more: true, offset: lastEnd };
				const answer = await next.page;
				count = answer.count;
				if (answer.tasks.length > 0 && !seen.has(answer.tasks[0].id)) {
					return { more: true, offset: next.offset }; // tasks may hide before this page
				}
				lastEnd = next.offset + answer.tasks.length;
				if (!keep(answer) || isLast(answer, next.size, lastEnd)) return { more: false, offset: lastEnd };
			}
		} finally {
			await settle();
		}
	}
}
