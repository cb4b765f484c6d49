import { timeKey } from '../reader/cursor';
import { type Consumer, newConsumer } from '../reader/reader';
import { rememberedMap } from '../runtime/processMemory';
import type { CompletedTask } from '../transport/schemas';

// What this process keeps of each queue's completed list for confirming reads (confirmation.ts): an
// index of recent completions shared by every run waiting on the queue, how far it reaches, and
// where the queue's reader stands (a consumer of the one reader, reader/reader.ts).

/** Completions kept per queue; the oldest go first, and the index then covers less far back. */
export const MAX_INDEXED = 20_000;

export interface QueueIndex {
	/** Completions listed by this process, newest listed version of each task. */
	tasks: Map<number, CompletedTask>;
	/** Every completion at or after this is in `tasks`, or still ahead of `reader` (timeKey). */
	coveredFrom: string;
	/** The index's consumer of the one reader: each completion it lists once, late commits included. */
	reader: Consumer;
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
		coveredFrom: '',
		reader: newConsumer(),
		lastStart: 0,
		generation: ++generations,
	};
	indexes.set(key, index);
	return index;
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
