import type { IWebhookFunctions } from 'n8n-workflow';

import { timeKey } from '../reader/completions';
import { fetchCompletedPage, findPlace, MAX_PAGE } from '../reader/pages';
import type { CompletedTask } from '../transport/schemas';

/** At most this many of a call's claims are looked up below what the index covers (about 17 reads each). */
const MAX_LOOKUPS = 5;

/**
 * A claimed completion the confirming index does not hold: further down than it covers (more
 * completions above it than a read lists), or committed late, below completions its reads had gone
 * past (issue 59). Found by its place in the list, a binary search of one-task pages, then the
 * completions of its millisecond read from there, and added to `listed`. The service's own listing
 * is what counts; the claim only says where to look (a claim of a task not listed costs its lookup,
 * at most 5 a call). All of a call's lookups share one deadline; one the deadline cuts short throws.
 * Returns whether it added any.
 */
export async function lookUpClaims(
	this: IWebhookFunctions,
	listed: Map<number, CompletedTask>,
	run: { queueId: number; since: string; claimed?: Array<{ id: number; at: string }> },
	budgetMs: number,
): Promise<boolean> {
	const deadline = Date.now() + budgetMs;
	const missing = (run.claimed ?? [])
		.filter(({ id, at }) => {
			const known = listed.get(id);
			const older = !known || timeKey(known.completed_at) < at;
			return at >= run.since && older;
		})
		.slice(0, MAX_LOOKUPS);
	let added = false;
	for (const claim of missing) {
		const place = await findPlace.call(
			this,
			run.queueId,
			(task) => timeKey(task.completed_at) > claim.at,
			{ deadline },
		);
		// a claim of the run's own task left unread would settle it for the caller (a lost answer):
		// the call is answered "could not confirm", and the caller calls again
		if (!place) throw new Error(tooSlow(claim.id));
		const task = await findInItsMillisecond.call(this, run.queueId, place.offset, claim, deadline);
		if (task) {
			listed.set(task.id, task);
			added = true;
		}
	}
	return added;
}

/**
 * The claimed task among those completed in its millisecond, read down from the first of them: the
 * service lists by the microsecond, a claim says the millisecond, and a burst completes dozens of
 * tasks in one.
 */
async function findInItsMillisecond(
	this: IWebhookFunctions,
	queueId: number,
	offset: number,
	claim: { id: number; at: string },
	deadline: number,
): Promise<CompletedTask | undefined> {
	for (let limit = 20, first = true; first || Date.now() <= deadline; first = false) {
		const { tasks } = await fetchCompletedPage.call(this, queueId, offset, limit);
		const found = tasks.find(
			(task) => task.id === claim.id && (task.queue_id === undefined || task.queue_id === queueId),
		);
		const last = tasks[tasks.length - 1];
		if (found || tasks.length < limit || !last || timeKey(last.completed_at) < claim.at)
			return found;
		// completions added on top meanwhile move the list down: the next page overlaps, skips nothing
		offset += tasks.length;
		limit = Math.min(MAX_PAGE, limit * 5);
	}
	throw new Error(tooSlow(claim.id));
}

const tooSlow = (taskId: number) =>
	`the service's list of completions was too slow to find task ${taskId} in time`;
