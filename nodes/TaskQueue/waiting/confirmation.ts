import type { IWebhookFunctions } from 'n8n-workflow';
import { sleep } from 'n8n-workflow';

import { narrowed, shifted, timeKey } from '../reader/cursor';
import { getTaskQueueCredentials } from '../transport';
import { MAX_PAGE } from '../reader/pages';
import { CompletionReader } from '../reader/reader';
import { lookUpClaims } from './claimLookup';
import {
	forgetOldest,
	type QueueIndex,
	indexOf,
	MAX_INDEXED,
	nextGeneration,
} from './confirmationIndex';
import type { CompletedTask } from '../transport/schemas';

// Confirmation: a call to a waiting address proves nothing, so the run asks the service which of its
// tasks are completed. The service can only list a queue's completions, newest first. This process
// keeps what it listed of each queue (an index of recent completions, shared by every run waiting on
// the queue) and reads only what completed since its last read, and further down only for a run
// whose tasks are older than what the index covers. A call costs about a page however busy the
// queue is and however many runs wait on it, and no answer of a run falls out of reach.

/** Reads of one queue start at least this far apart (a call replayed in a loop costs 4 reads a second). */
const MIN_GAP_MS = 250;
/** A read lists at most what the index can hold, for at most this long; the next goes on from there. */
const MAX_READ_PAGES = Math.ceil(MAX_INDEXED / MAX_PAGE) + 1;
const READ_BUDGET_MS = 30_000;

export interface RunToConfirm {
	queueId: number;
	/** The input item a listed task answers, if it is one of the run's. */
	itemOf: (task: CompletedTask) => number | undefined;
	/** The run's task ids, when it keeps them: its completions are then looked up, not searched for. */
	taskIds?: number[];
	/** How many items the run waits for (the first page's size follows it). */
	count: number;
	/** The earliest completion that can be the run's (timeKey). */
	since: string;
	/** The run's tasks the call says are completed, and when (timeKey): looked up where the index does not reach. */
	claimed?: Array<{ id: number; at: string }>;
}

/**
 * Reads what completed since the index's last read into it, through the one reader: oldest first,
 * late commits found as the triggers find them. A run whose tasks are older than the index covers
 * takes the reader back to their creation.
 */
async function read(
	this: IWebhookFunctions,
	index: QueueIndex,
	queueId: number,
	since: string,
	count: number,
): Promise<void> {
	if (!index.reader.cursor || since < index.coveredFrom) {
		Object.assign(index.reader, { cursor: { at: shifted(since, -1), ids: [] }, place: undefined });
		index.coveredFrom = since;
	}
	let changed = false;
	const keep = async (tasks: CompletedTask[]) => {
		// oldest first: a task's newest listed completion is the one kept
		for (const task of tasks.filter((t) => t.queue_id === undefined || t.queue_id === queueId)) {
			if (index.tasks.get(task.id)?.completed_at !== task.completed_at) changed = true;
			index.tasks.set(task.id, task);
		}
	};
	await new CompletionReader(index.reader, false).read(this, queueId, {
		deadline: Date.now() + READ_BUDGET_MS,
		take: keep,
		newestFirst: keep,
		firstLimit: count + 100 + (index.reader.cursor?.recent?.length ?? 0),
		nextLimit: MAX_PAGE,
		maxPages: MAX_READ_PAGES,
	});
	// the window: at most half a page, so a read down to it costs a request like any other; from a
	// first read too (down to the run's tasks' creation), as each n8n process reads from its first
	// call (CI38, queue mode); answers committed later below are found by their claims (claimLookup.ts)
	index.reader.cursor = narrowed(index.reader.cursor, MAX_PAGE / 2);
	if (forgetOldest(index) || changed) index.generation = nextGeneration();
}

/** The run's completed tasks by input item (the newest completion of each item) among what the index holds. */
function completionsOf(
	index: QueueIndex | undefined,
	run: Pick<RunToConfirm, 'itemOf' | 'since' | 'taskIds'>,
): Map<number, CompletedTask> {
	const found = new Map<number, CompletedTask>();
	// by id when the run keeps its ids (a lookup per item); older runs, matched by address, search the index
	const candidates = run.taskIds
		? run.taskIds.flatMap((id) => index?.tasks.get(id) ?? [])
		: (index?.tasks.values() ?? []);
	for (const task of candidates) {
		const item = run.itemOf(task);
		// a completion from before the run's tasks existed is not theirs (a service reset reuses ids)
		if (item === undefined || timeKey(task.completed_at) < run.since) continue;
		const before = found.get(item);
		if (!before || timeKey(task.completed_at) > timeKey(before.completed_at)) found.set(item, task);
	}
	return found;
}

async function queueKey(this: IWebhookFunctions, queueId: number): Promise<string> {
	const { baseUrl, organizationId, apiPaths } = await getTaskQueueCredentials.call(this);
	return `${baseUrl}|${organizationId}|${apiPaths}|${queueId}`;
}

/**
 * The run's completed tasks by input item, newest completion of each item, read from the service.
 * Reads of one queue are made one at a time: a call arriving during a read waits for the next one,
 * which every call arriving meanwhile shares.
 */
export async function confirmCompletions(
	this: IWebhookFunctions,
	run: RunToConfirm,
): Promise<Map<number, CompletedTask>> {
	return completionsOf(await refreshed.call(this, run), run);
}

/** Every completion of the run's tasks (Several People per Item: each item has several), read as above. */
export async function confirmEveryCompletion(
	this: IWebhookFunctions,
	run: RunToConfirm & {
		taskIds: number[];
		/** Tasks of the run it does not know the ids of (asked for while it waits), found by their data. */
		also?: (task: CompletedTask) => boolean;
		/** The generation of a previous answer: when the index has not changed since, no completions are returned. */
		unchangedSince?: number;
	},
): Promise<{ generation: number; completions?: CompletedTask[] }> {
	const index = await refreshed.call(this, run);
	const { generation } = index;
	if (run.unchangedSince === generation) return { generation };
	const known = run.taskIds.flatMap((id) => {
		const task = index.tasks.get(id);
		return task && run.itemOf(task) !== undefined && timeKey(task.completed_at) >= run.since
			? [task]
			: [];
	});
	if (!run.also) return { generation, completions: known };
	const ids = new Set(run.taskIds);
	const found = [...index.tasks.values()].filter(
		(task) => !ids.has(task.id) && timeKey(task.completed_at) >= run.since && run.also?.(task),
	);
	return { generation, completions: [...known, ...found] };
}

/** The queue's index, with a read that began after this call arrived. */
async function refreshed(this: IWebhookFunctions, run: RunToConfirm): Promise<QueueIndex> {
	const index = indexOf(await queueKey.call(this, run.queueId));
	const start = async (since: () => string, count: () => number) => {
		const gap = index.lastStart + MIN_GAP_MS - Date.now();
		if (gap > 0) await sleep(gap);
		index.lastStart = Date.now();
		await read.call(this, index, run.queueId, since(), count());
	};
	if (index.queued) {
		const queued = index.queued;
		if (run.since < queued.since) queued.since = run.since;
		queued.count = Math.max(queued.count, run.count);
		await queued.read;
	} else if (!index.running) {
		const running = start(
			() => run.since,
			() => run.count,
		).finally(() => {
			if (index.running === running) index.running = undefined;
		});
		index.running = running;
		await running;
	} else {
		const queued = { since: run.since, count: run.count, read: Promise.resolve() };
		queued.read = index.running
			.catch(() => undefined)
			.then(async () => {
				index.running = queued.read;
				index.queued = undefined;
				await start(
					() => queued.since,
					() => queued.count,
				);
			})
			.finally(() => {
				if (index.running === queued.read) index.running = undefined;
			});
		index.queued = queued;
		await queued.read;
	}
	if (await lookUpClaims.call(this, index.tasks, run, READ_BUDGET_MS))
		index.generation = nextGeneration();
	return index;
}
