import type { IHookFunctions, IPollFunctions, IWebhookFunctions } from 'n8n-workflow';
import type { DateTime } from 'luxon';

import type { TaskQueueContext } from '../transport';
import { getCompletedPage } from '../transport/endpoints';
import type { CompletedPage, CompletedTask } from '../transport/schemas';
import type { Cursor } from './completions';
import { compareCompletions, completionKey, isAfter, timeKey } from './completions';

// Reading the completed-tasks list, the one place that reasons about a list that moves while it is
// read (newest completion first; new completions shift every offset): the triggers read it down to
// their cursor (collectAfter), Get Completed reads it to a limit (readCompletedTasks).

type TriggerContext = IPollFunctions | IWebhookFunctions | IHookFunctions;

/**
 * Size of the first page of a poll. When nothing is new, this one page holds the cursor's
 * completion and older ones, so an idle poll costs one request; 20 also leaves room for a tie
 * group (completions sharing one timestamp) and a few new completions without a second request.
 */
export const FIRST_PAGE_LIMIT = 20;
/** Later pages, while draining a backlog (the service caps a page at 1,000). */
export const NEXT_PAGE_LIMIT = 500;

export async function fetchCompletedPage(
	this: TriggerContext,
	queueId: number,
	offset: number,
	limit: number,
): Promise<CompletedPage> {
	return await getCompletedPage.call(this, queueId, offset > 0 ? { offset, limit } : { limit });
}

export interface Collected {
	/** Completions after the cursor, oldest first, each once. */
	tasks: CompletedTask[];
	/** Requests sent. */
	requests: number;
	/** False when a time budget stopped the paging before it reached the cursor. */
	complete: boolean;
}

/**
 * Every completion after `cursor`, read newest first with limit/offset and only down to the
 * cursor. The list moves while it is read: a completion arriving mid-way enters at the front and
 * pushes everything one place further (the next page repeats an item, dropped by its key); a
 * forced re-completion leaves its old place and enters at the front, which moves nothing below
 * its old place. Pages overlap by one item anyway, so one item pulled back between two requests
 * (tasks sharing a timestamp ordered differently by the server) is not skipped. Completions that
 * arrive after the first page was read are left to the next call: they sort after everything
 * returned here, so the cursor never passes them.
 */
export async function collectAfter(
	this: TriggerContext,
	queueId: number,
	cursor: Cursor,
	options: { deadline?: number; firstLimit?: number; nextLimit?: number } = {},
): Promise<Collected> {
	const firstLimit = options.firstLimit ?? FIRST_PAGE_LIMIT;
	const nextLimit = options.nextLimit ?? NEXT_PAGE_LIMIT;
	const found = new Map<string, CompletedTask>();
	let offset = 0;
	let limit = firstLimit;
	let requests = 0;
	for (;;) {
		if (requests > 0 && options.deadline !== undefined && Date.now() > options.deadline) {
			return { tasks: [], requests, complete: false };
		}
		const page = await fetchCompletedPage.call(this, queueId, offset, limit);
		requests++;
		let reachedOlder = false;
		for (const task of page.tasks) {
			if (isAfter(task, cursor)) found.set(completionKey(task), task);
			else if (timeKey(task.completed_at) < cursor.at) reachedOlder = true;
		}
		const end = page.tasks.length < limit || offset + page.tasks.length >= page.count;
		if (reachedOlder || end) break;
		// Overlap one item with the page just read (see above).
		offset = Math.max(0, offset + page.tasks.length - 1);
		limit = nextLimit;
	}
	return { tasks: [...found.values()].sort(compareCompletions), requests, complete: true };
}

/** The service caps a page at 1000 tasks. */
export const MAX_PAGE_SIZE = 1000;
/** Page size while dates are also filtered here, so few matches do not mean many tiny pages. */
const FILTERED_PAGE_SIZE = 100;
/** Pages requested at once after the first (reads only). */
export const PAGES_IN_FLIGHT = 4;

/**
 * Get Completed's read: up to `limit` completed tasks, newest first, completed within [after,
 * before). Pages with limit/offset (computed here; the service's absolute `next` URL can be wrong
 * behind a proxy). Newest completions come first and new ones push older tasks to higher offsets
 * while this pages, so a task can come back on a later page: it is skipped by its ID. None is missed.
 *
 * After the first page (whose `count` says how many follow), up to PAGES_IN_FLIGHT pages are
 * requested at once, so the service's work and the round trips overlap. Each of those pages starts
 * on the last task of the page before it. Answered in order, a shift can only repeat tasks; but the
 * service may answer a later page first, and completions arriving in between would then push
 * unseen tasks past it. Its first task, not seen yet, shows that: the rest is paged one request at
 * a time from there, which no shift can get past.
 */
export async function readCompletedTasks(
	this: TaskQueueContext,
	queueId: number,
	options: { limit: number; after?: DateTime; before?: DateTime; itemIndex?: number },
): Promise<CompletedTask[]> {
	const { limit, after, before, itemIndex } = options;
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
	return tasks;

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
