import type { IHookFunctions, IPollFunctions, IWebhookFunctions } from 'n8n-workflow';

import { getCompletedPage } from '../transport/endpoints';
import type { CompletedPage, CompletedTask } from '../transport/schemas';
import type { Cursor } from './completions';
import { compareCompletions, completionKey, isAfter, timeKey } from './completions';

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
