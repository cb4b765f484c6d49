import type { IWebhookFunctions } from 'n8n-workflow';
import { sleep } from 'n8n-workflow';

import { timeKey } from '../helpers/completions';
import { getCompletedPage } from '../transport/endpoints';
import type { CompletedTask } from '../transport/schemas';

// Confirmation: a call to a waiting address proves nothing, so the run asks the service which of its
// tasks are completed. The service can only list a queue's completions, newest first; the run reads
// them down to where it has read before in this n8n process (down to its tasks' creation the first
// time), so a call costs a page however busy the queue is, and no answer of the run falls out of
// reach however many completions of other work come after it.

/** The list is ordered by completion time, but a completion can be committed a little after a later
 * one was listed: each read goes this far below where the previous one began. */
const REREAD_MS = 1_000;
const MAX_PAGE = 1000;
/** Reads of one run start at least this far apart (a call replayed in a loop costs 4 reads a second). */
const MIN_GAP_MS = 250;
const REMEMBERED_RUNS = 500;

export interface RunToConfirm {
	/** The run: execution, node, and when it was put to wait (an execution can wait at a node again). */
	key: string;
	queueId: number;
	/** The input item a listed task answers, if it is one of the run's. */
	itemOf: (task: CompletedTask) => number | undefined;
	/** How many items the run waits for (the page size follows it). */
	count: number;
	/** The earliest completion that can be the run's (timeKey). */
	since: string;
	/** Whether what was found is enough to resume (then the read stops early). */
	enough: (found: Map<number, CompletedTask>) => boolean;
}

interface Known {
	/** The newest completion of each item found so far. */
	found: Map<number, CompletedTask>;
	/** The newest completion listed when the last complete read began (timeKey). */
	readFrom: string;
	/** Whether that read needed more than its first page: the next one starts with a full page. */
	deep?: boolean;
}

const known = new Map<string, Known>();
const lanes = new Map<string, { running?: Promise<unknown>; queued?: Promise<unknown>; lastStart: number }>();

function remember<K, V>(map: Map<K, V>, key: K, value: V): V {
	map.delete(key);
	map.set(key, value);
	while (map.size > REMEMBERED_RUNS) map.delete(map.keys().next().value as K);
	return value;
}

const earlier = (key: string, ms: number) => (key ? new Date(Date.parse(`${key}Z`) - ms).toISOString().slice(0, 23) : key);

async function read(this: IWebhookFunctions, run: RunToConfirm): Promise<Map<number, CompletedTask>> {
	const before = known.get(run.key);
	// what is known must still be the run's (an item answered by the run's own task only)
	for (const [item, task] of before?.found ?? []) if (run.itemOf(task) !== item) before?.found.delete(item);
	const stopBelow = before && before.readFrom > run.since ? earlier(before.readFrom, REREAD_MS) : run.since;
	const found = new Map<number, CompletedTask>();
	// a small first page costs little when nothing much happened; deeper pages as large as the service allows
	const firstLimit = before?.deep ? MAX_PAGE : Math.min(MAX_PAGE, run.count + 100);
	let readFrom = '';
	for (let offset = 0; ; ) {
		const limit = offset === 0 ? firstLimit : MAX_PAGE;
		const { tasks, count } = await getCompletedPage.call(this, run.queueId, offset > 0 ? { offset, limit } : { limit });
		if (offset === 0) readFrom = tasks[0] ? timeKey(tasks[0].completed_at) : '';
		for (const task of tasks) {
			if (task.queue_id !== undefined && task.queue_id !== run.queueId) continue;
			const item = run.itemOf(task);
			if (item !== undefined && !found.has(item)) found.set(item, task);
		}
		const merged = new Map([...(before?.found ?? []), ...found]);
		const last = tasks[tasks.length - 1];
		const complete = tasks.length < limit || offset + tasks.length >= count || !last || timeKey(last.completed_at) < stopBelow;
		if (complete || run.enough(merged)) {
			// what was read from the top down to the previous read is now known; an early stop leaves the mark
			remember(known, run.key, { found: merged, readFrom: complete ? readFrom : (before?.readFrom ?? ''), deep: offset > 0 });
			return merged;
		}
		// one item of overlap: completions sharing a timestamp may come back in another order
		offset += tasks.length - 1;
	}
}

/**
 * The run's completed tasks by input item, newest completion of each item. Reads of one run are
 * made one at a time: a call arriving during a read waits for the next one, which every call
 * arriving meanwhile shares.
 */
export async function confirmCompletions(this: IWebhookFunctions, run: RunToConfirm): Promise<Map<number, CompletedTask>> {
	const lane = lanes.get(run.key) ?? remember(lanes, run.key, { lastStart: 0 });
	if (lane.queued) return (await lane.queued) as Map<number, CompletedTask>;
	const start = async () => {
		const gap = lane.lastStart + MIN_GAP_MS - Date.now();
		if (gap > 0) await sleep(gap);
		lane.lastStart = Date.now();
		return await read.call(this, run);
	};
	if (!lane.running) {
		const running = start().finally(() => {
			if (lane.running === running) lane.running = undefined;
		});
		lane.running = running;
		return await running;
	}
	const queued: Promise<Map<number, CompletedTask>> = lane.running
		.catch(() => undefined)
		.then(async () => {
			lane.running = queued;
			lane.queued = undefined;
			return await start();
		})
		.finally(() => {
			if (lane.running === queued) lane.running = undefined;
		});
	lane.queued = queued;
	return await queued;
}

/** What this process knows of a run's completions without reading (none after a restart). */
export function knownCompletions(key: string): Map<number, CompletedTask> {
	return known.get(key)?.found ?? new Map();
}
