import type { IDataObject, INodeExecutionData, IPollFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { getTriggerQueueId } from '../helpers/queue';
import type { Cursor } from '../helpers/completions';
import {
	advanceCursor,
	collectAfter,
	completionKey,
	cursorAtNewest,
	toItem,
} from '../helpers/completions';
import { fetchCompletedPage, FIRST_PAGE_LIMIT } from '../transport/completedPages';
import type { CompletedTask } from '../transport/schemas';
import { readPollState, writePollState } from './state/staticData';
import { pollBudgetMs } from '../runtime/n8nInternals';
import { forwardToWaiting } from './relay/forward';

/** Share of n8n's poll budget spent paging before giving the tick back (2.x only). */
const BUDGET_SHARE = 0.8;

/**
 * One poll: the completions after the cursor, oldest first, or null when there are none.
 * The first poll after activation only places the cursor at the newest completion (unless the
 * option Include Existing is on); a manual test returns the latest completed task.
 */
/** A manual run: the newest completion of the queue, or an error that says there is none yet. */
async function latestCompletion(
	this: IPollFunctions,
	queueId: number,
	dataOnly: boolean,
): Promise<INodeExecutionData[][]> {
	const page = await fetchCompletedPage.call(this, queueId, 0, 1);
	const latest = page.tasks[0];
	if (!latest) {
		throw new NodeOperationError(
			this.getNode(),
			`No task of queue ${queueId} has been completed yet`,
			{
				description:
					'Complete a task in the queue, then test again. Once the workflow is active, it starts for each task completed after activation.',
			},
		);
	}
	return [[toItem(latest, dataOnly)]];
}

export async function pollCompletions(
	this: IPollFunctions,
): Promise<INodeExecutionData[][] | null> {
	const queueId = getTriggerQueueId.call(this);
	const options = this.getNodeParameter('options', {}) as IDataObject;
	const dataOnly = options.dataOnly === true;

	if (this.getMode() === 'manual') return await latestCompletion.call(this, queueId, dataOnly);

	const state = this.getWorkflowStaticData('node');
	const stored = readPollState(state);
	let cursor: Cursor | undefined = stored.queueId === queueId ? stored.cursor : undefined;
	if (!cursor) {
		if (options.includeExisting !== true) {
			// Start from "now": everything completed so far counts as seen.
			const page = await fetchCompletedPage.call(this, queueId, 0, FIRST_PAGE_LIMIT);
			writePollState(state, { queueId, cursor: cursorAtNewest(page.tasks) });
			return null;
		}
		cursor = { at: '', ids: [] };
	}

	// n8n 2.x tells a poll how long it may take; 1.x has no budget.
	const budgetMs = pollBudgetMs(this);
	const deadline =
		budgetMs !== undefined && budgetMs > 0 ? Date.now() + budgetMs * BUDGET_SHARE : undefined;
	const collected = await collectAfter.call(this, queueId, cursor, { deadline });
	if (!collected.complete) {
		this.logger.warn(
			`Task Queue Poll Trigger: queue ${queueId} has more new completions than one poll can read in its time budget (${collected.requests} pages read); nothing emitted, the cursor stays, the next poll tries again`,
		);
		return null;
	}
	const { unsettled } = stored;
	if (collected.tasks.length === 0 && unsettled.length === 0) {
		writePollState(state, { queueId, cursor: stored.cursor ? undefined : cursor });
		return null;
	}
	writePollState(state, { queueId, cursor: advanceCursor(cursor, collected.tasks) });
	// completions an execution could not answer for yet (n8n or the service unreachable) are passed
	// on again at the next poll, before they are emitted or dropped
	const tasks = [...unsettled, ...collected.tasks];
	const outcomes = await forwardToWaiting.call(this, tasks);
	const outcome = (task: CompletedTask) => outcomes.get(completionKey(task));
	const stillUnsettled = tasks
		.filter((task) => outcome(task) === 'unsettled')
		.slice(-MAX_UNSETTLED);
	if (stillUnsettled.length > 0 || unsettled.length > 0)
		writePollState(state, { queueId, unsettled: stillUnsettled });
	const emit = tasks.filter((task) => outcome(task) === undefined || outcome(task) === 'other');
	return emit.length > 0 ? [emit.map((task) => toItem(task, dataOnly))] : null;
}

/** Completions kept for the next poll at most (each is one task). */
const MAX_UNSETTLED = 1000;
