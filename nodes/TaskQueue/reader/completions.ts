import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import {
	completedPages,
	fetchCompletedPage,
	findPlace,
	FIRST_PAGE_LIMIT,
	MAX_PAGE,
	NEXT_PAGE_LIMIT,
} from './pages';
import type { CompletedTask } from '../transport/schemas';
import type { TaskQueueContext } from '../transport/types';
import { advanceCursor, completionKey, type Cursor, floorOf, isAfter, timeKey } from './cursor';

export { advanceCursor, completionKey, type Cursor, isAfter, readCursor, timeKey } from './cursor';

/** Oldest completion first; the id breaks ties so the order is stable. */
export function compareCompletions(a: CompletedTask, b: CompletedTask): number {
	const ka = timeKey(a.completed_at);
	const kb = timeKey(b.completed_at);
	if (ka !== kb) return ka < kb ? -1 : 1;
	return a.id - b.id;
}

/** How far past this n8n's clock a completion may be dated and still count as done (clocks differ). */
const CLOCK_SLACK_MS = 5 * 60_000;

/**
 * Whether a completion's time has come: one dated further in the future (a hostile or broken
 * service) waits for it, or it would carry a cursor past every completion still to come.
 */
export const isDue = (task: CompletedTask): boolean =>
	timeKey(task.completed_at) <= new Date(Date.now() + CLOCK_SLACK_MS).toISOString().slice(0, 23);

/**
 * "Now": the cursor at the newest completion the service lists, with every id that shares its
 * instant (a service that writes whole seconds lists many at one instant), so none of them counts
 * as new. Reads pages until one goes past that instant (at most 10).
 */
export async function newestCursor(this: TaskQueueContext, queueId: number): Promise<Cursor> {
	let cursor: Cursor | undefined;
	let [offset, limit] = [0, FIRST_PAGE_LIMIT];
	for (let page = 0; page < 10; page++) {
		const tasks = (await fetchCompletedPage.call(this, queueId, offset, limit)).tasks.filter(isDue);
		cursor = advanceCursor(cursor, tasks.slice(0, 1));
		const same = tasks.filter((task) => timeKey(task.completed_at) === cursor?.at);
		cursor = advanceCursor(cursor, same);
		if (same.length < tasks.length || tasks.length < limit) break;
		[offset, limit] = [offset + tasks.length, MAX_PAGE];
	}
	// "now" has no window: what was completed before it is not the consumer's
	return { at: cursor?.at ?? '', ids: cursor?.ids ?? [] };
}

/** A completed task as the item both triggers emit: the whole task, or its data only. */
export function toItem(task: CompletedTask, dataOnly: boolean): INodeExecutionData {
	return { json: dataOnly ? ((task.data ?? {}) as IDataObject) : (task as unknown as IDataObject) };
}

/** Page sizes of a read from the top (the first page, the next ones), and how many pages at most. */
export type ReadLimits = { firstLimit?: number; nextLimit?: number; maxPages?: number };

/**
 * Every completion after `cursor`, read newest first with limit/offset down to the cursor's
 * instant, or with `deep` down to the floor of its window (reader/pages.ts: pages
 * overlap, so a task repeated is dropped by its key). A forced re-completion leaves its old place
 * and enters at the front, which moves nothing below its old place. Completions that arrive after
 * the first page was read, on top or committed late below, are left to the next call: its window
 * still holds them (reader/cursor.ts). `tasks`: oldest first, each once; `complete` is false when
 * the deadline or `maxPages` stopped the paging before the cursor (`tasks` are then the newest only).
 */
export async function collectAfter(
	this: TaskQueueContext,
	queueId: number,
	cursor: Cursor,
	options: ReadLimits & { deadline?: number; deep?: boolean } = {},
): Promise<{ tasks: CompletedTask[]; complete: boolean }> {
	let pages = 0;
	const stop = floorOf(options.deep ? cursor : { at: cursor.at, ids: [] });
	const { firstLimit: first = FIRST_PAGE_LIMIT, nextLimit: next = NEXT_PAGE_LIMIT } = options;
	const found = new Map<string, CompletedTask>();
	for await (const { page, last } of completedPages.call(this, queueId, { first, next })) {
		let reachedOlder = false;
		for (const task of page.tasks) {
			if (isAfter(task, cursor) && isDue(task)) found.set(completionKey(task), task);
			else if (timeKey(task.completed_at) <= stop) reachedOlder = true;
		}
		if (reachedOlder || last) break;
		const late = options.deadline !== undefined && Date.now() > options.deadline;
		if (late || ++pages >= (options.maxPages ?? Infinity)) {
			return { tasks: [...found.values()].sort(compareCompletions), complete: false };
		}
	}
	return { tasks: [...found.values()].sort(compareCompletions), complete: true };
}

/**
 * For more completions after `cursor` than a read from the top reaches in time: the oldest first.
 * Finds the cursor's place in the list (a binary search of one-task pages), then reads upward from
 * there, page by page, handing each page's completions after the cursor to `take` (oldest first)
 * before the next is read, until the top or the deadline; returns the cursor it reached. Each page
 * ends on a completion not after the cursor, which proves nothing between was skipped: when newer
 * completions pushed the list down meanwhile, the page is read again lower. A completion committed
 * late below the place is left to a read from the top once the backlog is read: it reaches down to
 * the window's floor (a backlog older than the window has no late commits left).
 */
export async function collectUpward(
	this: TaskQueueContext,
	queueId: number,
	cursor: Cursor,
	options: {
		deadline: number;
		/** Returns false when the caller has read far enough. */
		take: (tasks: CompletedTask[]) => Promise<void | boolean>;
		/** Where the previous call stopped, and the list's length then: the place is looked for there first. */
		from?: Place;
	},
): Promise<{ cursor: Cursor; top: boolean; place?: Place }> {
	const { from } = options;
	const guess = from
		? (await fetchCompletedPage.call(this, queueId, 0, 1)).count - from.count + from.offset
		: undefined;
	// Each call moves, however slow the service or busy n8n: the place is found whatever the deadline
	// (a binary search: about 17 one-task reads at 25,000 completions, one read from `from`) and one
	// page above it is read; only the pages after that stop at the deadline.
	const place = await findPlace.call(this, queueId, (task) => isAfter(task, cursor), { guess });
	if (!place) return { cursor, top: false };
	let { count } = place;
	let boundary = place.offset;
	let reached = cursor;
	for (let first = true; boundary > 0 && (first || Date.now() <= options.deadline); first = false) {
		const offset = Math.max(0, boundary - (MAX_PAGE - 1));
		const limit = boundary - offset + 1;
		const page = await fetchCompletedPage.call(this, queueId, offset, limit);
		const oldest = page.tasks[page.tasks.length - 1];
		if (page.tasks.length === limit && oldest && isAfter(oldest, reached)) {
			boundary += Math.max(1, page.count - count);
			count = page.count;
			continue;
		}
		count = page.count;
		const fresh = page.tasks
			.filter((t) => isAfter(t, reached) && isDue(t))
			.sort(compareCompletions);
		const more = await options.take(fresh);
		reached = advanceCursor(reached, fresh) ?? reached;
		boundary = offset;
		if (more === false) break;
	}
	return { cursor: reached, top: boundary === 0, place: { offset: boundary, count } };
}

/** A cursor's place in the list: its offset, when the list was `count` long. */
export interface Place {
	offset: number;
	count: number;
}
