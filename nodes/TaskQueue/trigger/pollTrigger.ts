import {
	type IDataObject,
	type INodeExecutionData,
	type IPollFunctions,
	type NodeApiError,
	NodeOperationError,
} from 'n8n-workflow';

import { getTriggerQueueId } from '../helpers/queue';
import type { Cursor } from '../reader/completions';
import { completionKey, newestCursor, toItem } from '../reader/completions';
import type { CompletionReader } from '../reader/reader';
import { inTurn } from '../reader/reader';
import { fetchCompletedPage } from '../reader/pages';
import type { CompletedTask } from '../transport/schemas';
import { readPollState, writePollState } from './state/staticData';
import { pollBudgetMs } from '../runtime/n8nInternals';
import { forwardToWaiting, isOrdinary } from './relay/forward';

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
	const scope = `poll:${this.getWorkflow().id}:${this.getNode().id}:${queueId}`;
	const storedCursor = stored.queueId === queueId ? stored.cursor : undefined;
	const taken = await inTurn(scope, storedCursor, async (reader) => {
		if (!reader.cursor) {
			if (options.includeExisting !== true) {
				// Start from "now": everything completed so far counts as seen.
				reader.startAt(await newestCursor.call(this, queueId));
				writePollState(state, { queueId, cursor: reader.cursor });
				return undefined;
			}
			reader.startAt({ at: '', ids: [] });
		}
		return await readNew.call(this, reader, queueId);
	});
	if (!taken) return null;
	const { unsettled } = stored;
	if (taken.tasks.length === 0 && unsettled.length === 0) {
		writePollState(state, { queueId, cursor: storedCursor ? undefined : taken.cursor });
		return null;
	}
	writePollState(state, { queueId, cursor: taken.cursor });
	// completions an execution could not answer for yet (n8n or the service unreachable) are passed
	// on again at the next poll, before they are emitted or dropped
	const tasks = [...unsettled, ...taken.tasks];
	const outcomes = await forwardToWaiting.call(this, tasks);
	const outcome = (task: CompletedTask) => outcomes.get(completionKey(task));
	const stillUnsettled = tasks
		.filter((task) => outcome(task) === 'unsettled')
		.slice(-MAX_UNSETTLED);
	if (stillUnsettled.length > 0 || unsettled.length > 0)
		writePollState(state, { queueId, unsettled: stillUnsettled });
	const emit = tasks.filter((task) => isOrdinary(outcome(task)));
	return emit.length > 0 ? [emit.map((task) => toItem(task, dataOnly))] : null;
}

/**
 * The completions after the poll's cursor, oldest first, within n8n's poll budget (2.x; 1.x has
 * none): a backlog longer than one poll reads is emitted oldest first, and the next poll goes on.
 */
async function readNew(
	this: IPollFunctions,
	reader: CompletionReader,
	queueId: number,
): Promise<{ tasks: CompletedTask[]; cursor: Cursor | undefined }> {
	const budgetMs = pollBudgetMs(this);
	const deadline =
		budgetMs !== undefined && budgetMs > 0 ? Date.now() + budgetMs * BUDGET_SHARE : Infinity;
	const tasks: CompletedTask[] = [];
	let failure: NodeApiError | NodeOperationError | undefined;
	const reading = await reader
		.read(this, queueId, {
			deadline,
			take: async (page) => {
				for (const task of page) tasks.push(task);
			},
		})
		.catch((error: NodeApiError | NodeOperationError) => {
			failure = error;
			return undefined;
		});
	// what was read is emitted (the cursor moved over it); with nothing read, the poll fails
	if (failure && tasks.length === 0) throw failure;
	if (reading && !reading.top)
		this.logger.info(
			`Task Queue Poll Trigger: queue ${queueId} has more new completions than one poll reads in its time budget; emitting the oldest ${tasks.length}, the next poll goes on from there`,
		);
	return { tasks, cursor: reader.cursor };
}

/** Completions kept for the next poll at most (each is one task). */
const MAX_UNSETTLED = 1000;
