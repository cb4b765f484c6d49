import type { DateTime } from 'luxon';

import { getCompletedPage } from '../transport/endpoints';
import type { CompletedPage, CompletedTask } from '../transport/schemas';
import type { TaskQueueContext } from '../transport/types';

// Paging the completed-tasks list, the one place that reasons about a list that moves while it is
// read: newest completion first, and each new completion enters at the front and pushes every task
// one place further. Three readers use it: the triggers read down to their cursor (collectAfter in
// reader/completions.ts), the confirming read of a waiting run down to its tasks' creation
// (waiting/confirmation.ts), and Get Completed to a limit (readCompletedTasks, below).

/** The service caps a page at 1,000 tasks. */
export const MAX_PAGE = 1000;
/**
 * Size of the first page of a poll. When nothing is new, this one page holds the cursor's
 * completion and older ones, so an idle poll costs one request; 20 also leaves room for a tie
 * group (completions sharing one timestamp) and a few new completions without a second request.
 */
export const FIRST_PAGE_LIMIT = 20;
/** Later pages, while draining a backlog. */
export const NEXT_PAGE_LIMIT = 500;
/** Pages requested at once after the first (Get Completed only). */
export const PAGES_IN_FLIGHT = 4;

/**
 * Where the page after one read at `offset` starts: on that page's last task. A completion
 * arriving between two requests then repeats a task (dropped by its key or id) rather than hiding
 * one, and one task pulled back between two requests (tasks sharing a timestamp ordered differently
 * by the server) is not skipped.
 */
export function overlapping(offset: number, pageLength: number): number {
	return Math.max(0, offset + pageLength - 1);
}

/** One page; the first one without an offset (as the service's own first page). */
export async function fetchCompletedPage(
	this: TaskQueueContext,
	queueId: number,
	offset: number,
	limit: number,
): Promise<CompletedPage> {
	return await getCompletedPage.call(this, queueId, offset > 0 ? { offset, limit } : { limit });
}

export interface PageRead {
	page: CompletedPage;
	/** The limit the page was asked for with. */
	limit: number;
	/** A short page, or one that reaches the end of the list: nothing follows. */
	last: boolean;
}

/**
 * The list from the top, one page at a time, each page overlapping the one before by one task. The
 * reader stops when it has read far enough (or at the last page).
 */
export async function* completedPages(
	this: TaskQueueContext,
	queueId: number,
	sizes: { first: number; next: number },
): AsyncGenerator<PageRead> {
	for (
		let offset = 0, limit = Math.min(MAX_PAGE, sizes.first);
		;
		limit = Math.min(MAX_PAGE, sizes.next)
	) {
		const page = await fetchCompletedPage.call(this, queueId, offset, limit);
		const last = page.tasks.length < limit || offset + page.tasks.length >= page.count;
		yield { page, limit, last };
		if (last) return;
		offset = overlapping(offset, page.tasks.length);
	}
}

/** Page size while dates are also filtered here, so few matches do not mean many tiny pages. */
const FILTERED_PAGE_SIZE = 100;

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
	const qs = dateQuery(after, before);
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
	const fetchPage = async (offset: number, size: number): Promise<CompletedPage> =>
		await getCompletedPage.call(this, queueId, { ...qs, limit: size, offset }, itemIndex);
	// A short page is the last one; a longer one than asked for (a server ignoring the limit) is not.
	const isLast = (page: CompletedPage, size: number, offset: number) =>
		page.tasks.length < size || offset >= page.count;

	let size = Math.min(MAX_PAGE, Math.max(limit, filtering ? FILTERED_PAGE_SIZE : 1));
	let page = await fetchPage(0, size);
	let more = keep(page);
	let offset = page.tasks.length;
	if (more && !isLast(page, size, offset) && !filtering) {
		({ more, offset } = await readAhead(
			{ fetchPage, keep, isLast, seen, tasks, limit },
			page,
			offset,
		));
	} else {
		more &&= !isLast(page, size, offset);
	}
	while (more) {
		size = Math.min(MAX_PAGE, Math.max(limit - tasks.length, filtering ? FILTERED_PAGE_SIZE : 1));
		page = await fetchPage(offset, size);
		more = keep(page);
		offset += page.tasks.length;
		more &&= !isLast(page, size, offset);
	}
	return tasks;
}

/**
 * The service filters by whole days (UTC) and ignores what it cannot parse; the exact times are
 * checked on each task's completed_at.
 */
function dateQuery(
	after?: DateTime,
	before?: DateTime,
): { start_date?: string; end_date?: string } {
	return {
		...(after ? { start_date: after.toUTC().toISODate() ?? undefined } : {}),
		...(before ? { end_date: before.toUTC().toISODate() ?? undefined } : {}),
	};
}

/** What readAhead shares with the read it serves: its page reader, its keeper and what it kept. */
interface ReadAheadState {
	fetchPage: (offset: number, size: number) => Promise<CompletedPage>;
	keep: (page: CompletedPage) => boolean;
	isLast: (page: CompletedPage, size: number, offset: number) => boolean;
	seen: Set<number>;
	tasks: CompletedTask[];
	limit: number;
}

/** The pages after the first, several in flight; says where one-by-one paging goes on, if it must. */
async function readAhead(
	reading: ReadAheadState,
	first: CompletedPage,
	firstLength: number,
): Promise<{ more: boolean; offset: number }> {
	const { fetchPage, keep, isLast, seen, tasks, limit } = reading;
	const inFlight: Array<{ offset: number; size: number; page: Promise<CompletedPage> }> = [];
	let count = first.count;
	let nextOffset = overlapping(0, firstLength);
	let planned = tasks.length; // tasks the pages asked for can bring, at most
	let lastEnd = firstLength;
	const settle = async () => {
		await Promise.allSettled(inFlight.map((request) => request.page));
	};
	try {
		for (;;) {
			while (inFlight.length < PAGES_IN_FLIGHT && nextOffset < count && planned < limit) {
				const pageSize = Math.min(MAX_PAGE, limit - planned + 1);
				const pending = fetchPage(nextOffset, pageSize);
				pending.catch(() => undefined); // awaited in turn below; not an unhandled rejection meanwhile
				inFlight.push({ offset: nextOffset, size: pageSize, page: pending });
				planned += pageSize - 1;
				nextOffset = overlapping(nextOffset, pageSize);
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
			if (!keep(answer) || isLast(answer, next.size, lastEnd))
				return { more: false, offset: lastEnd };
		}
	} finally {
		await settle();
	}
}

/**
 * Where a point lies in the list (newest first): the first offset whose completion is not `above`
 * it, by a binary search of one-task pages (about 15 for 25,000 completions); undefined when the
 * deadline passes first.
 */
export async function findPlace(
	this: TaskQueueContext,
	queueId: number,
	above: (task: CompletedTask) => boolean,
	options: { deadline?: number; guess?: number } = {},
): Promise<{ offset: number; count: number } | undefined> {
	const { deadline = Infinity, guess } = options;
	if (guess !== undefined && guess > 0) {
		// where the last search (and what was added on top since) puts it: one read of two tasks
		const [before, at] = (await fetchCompletedPage.call(this, queueId, guess - 1, 2)).tasks;
		if (before && above(before) && !(at && above(at))) {
			const { count } = await fetchCompletedPage.call(this, queueId, 0, 1);
			return { offset: guess, count };
		}
	}
	const first = await fetchCompletedPage.call(this, queueId, 0, 1);
	let [low, high] = [0, first.count];
	while (low < high) {
		if (Date.now() > deadline) return undefined;
		const middle = Math.floor((low + high) / 2);
		const [task] = (await fetchCompletedPage.call(this, queueId, middle, 1)).tasks;
		if (task && above(task)) low = middle + 1;
		else high = middle;
	}
	return { offset: low, count: first.count };
}
