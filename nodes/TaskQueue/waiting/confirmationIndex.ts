import { shifted, timeKey } from '../reader/cursor';
import { rememberedMap } from '../runtime/processMemory';
import type { CompletedTask } from '../transport/schemas';

// What this process keeps of each queue's completed list for confirming reads (confirmation.ts): an
// index of recent completions shared by every run waiting on the queue, and how far it reaches.

/**
 * The list is ordered by completion time, but a completion can be committed a little after a later
 * one was listed: each read goes this far below where the previous one began. Less than the
 * triggers' window (reader/cursor.ts): each confirming read would list 10 s of a busy queue again
 * (escalation.scale.test.ts: 288 reads where 200 is the bound), issue 59.
 */
export const REREAD_MS = 1_000;
/** Completions kept per queue; the oldest go first, and the index then covers less far back. */
export const MAX_INDEXED = 20_000;

export interface QueueIndex {
	/** Completions listed by this process, newest listed version of each task. */
	tasks: Map<number, CompletedTask>;
	/** The newest completion listed when the last complete read began (timeKey; '' before any). */
	readFrom: string;
	/** Every completion at or after this is in `tasks` (timeKey; meaningless before any read). */
	coveredFrom: string;
	/** Whether the last read needed more than its first page: the next one starts with a full page. */
	deep: boolean;
	running?: Promise<void>;
	/** The next read, shared by every call arriving during the running one, and how deep it must go. */
	queued?: { read: Promise<void>; since: string; count: number };
	lastStart: number;
	/** Changes whenever what the index holds changes (unique across indexes): a run's outcome from it can be kept. */
	generation: number;
}

export const indexes = rememberedMap<string, QueueIndex>('confirmationIndexes');
let generations = 0;

/** A generation no index has had. */
export const nextGeneration = (): number => ++generations;

/** The queue's index, now the most recently used one. */
export function indexOf(key: string): QueueIndex {
	const index = indexes.get(key) ?? {
		tasks: new Map(),
		readFrom: '',
		coveredFrom: '',
		deep: false,
		lastStart: 0,
		generation: ++generations,
	};
	indexes.set(key, index);
	return index;
}

/** Where a read must stop for a run: down to its tasks' creation, unless the index covers that far. */
export function stopBelowFor(index: QueueIndex, since: string): string {
	if (!index.readFrom || since < index.coveredFrom) return since;
	const sinceLastRead = shifted(index.readFrom, -REREAD_MS);
	return sinceLastRead > since ? sinceLastRead : since;
}

/** Whether it forgot any. */
export function forgetOldest(index: QueueIndex): boolean {
	if (index.tasks.size <= MAX_INDEXED) return false;
	const keys = [...index.tasks.values()].map((t) => timeKey(t.completed_at)).sort();
	const cutoff = keys[keys.length - Math.floor(MAX_INDEXED * 0.75) - 1];
	for (const [id, task] of index.tasks)
		if (timeKey(task.completed_at) <= cutoff) index.tasks.delete(id);
	const kept = [...index.tasks.values()].map((t) => timeKey(t.completed_at)).sort()[0];
	if (kept && kept > index.coveredFrom) index.coveredFrom = kept;
	return true;
}
