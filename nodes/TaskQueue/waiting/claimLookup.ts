import type { IWebhookFunctions } from 'n8n-workflow';

import { timeKey } from '../helpers/completions';
import { fetchCompletedPage, findPlace } from '../transport/completedPages';
import type { CompletedTask } from '../transport/schemas';

/** At most this many of a call's claims are looked up below what the index covers (about 17 reads each). */
const MAX_LOOKUPS = 5;

/**
 * A claimed completion further down than the confirming index covers (more completions above it
 * than a read lists): found by its place in the list, a binary search of one-task pages, then one
 * small page there, and added to `listed`. The service's own listing is what counts; the claim only
 * says where to look. All of a call's lookups share one deadline. Returns whether it added any.
 */
export async function lookUpClaims(
	this: IWebhookFunctions,
	listed: Map<number, CompletedTask>,
	coveredFrom: string,
	run: { queueId: number; since: string; claimed?: Array<{ id: number; at: string }> },
	budgetMs: number,
): Promise<boolean> {
	const deadline = Date.now() + budgetMs;
	const missing = (run.claimed ?? [])
		.filter(({ id, at }) => {
			const known = listed.get(id);
			const older = !known || timeKey(known.completed_at) < at;
			return at < coveredFrom && at >= run.since && older;
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
		if (!place) return added;
		const page = await fetchCompletedPage.call(this, run.queueId, place.offset, 20);
		for (const task of page.tasks)
			if (task.id === claim.id && (task.queue_id === undefined || task.queue_id === run.queueId)) {
				listed.set(task.id, task);
				added = true;
			}
	}
	return added;
}
