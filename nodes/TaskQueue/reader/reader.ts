import { sleep } from 'n8n-workflow';

import { BoundedSet } from '../runtime/bounded';
import { rememberedMap } from '../runtime/processMemory';
import type { CompletedTask } from '../transport/schemas';
import type { TaskQueueContext } from '../transport/types';
import {
	collectAfter,
	collectUpward,
	type Cursor,
	isAfter,
	type Place,
	type ReadLimits,
} from './completions';
import {
	advanceCursor,
	completionKey,
	laterCursor,
	readsDeep,
	sighted,
	type Watch,
} from './cursor';

// The one reader of a queue's completions for everything that emits them: Catch Up, the Poll
// Trigger and Check for Lost Completions. Each of them is a consumer with its own cursor, and:
// - one read at a time per consumer in a process: a read starts where the last one ended, so two
//   reads never hand out one completion (concurrent deliveries each used to start from the cursor
//   their own call loaded, and a busy burst was emitted twice);
// - oldest first, always moving: a read that cannot reach the newest completion in its time hands
//   out the oldest ones it read and the next read goes on from there (the place in the list is
//   kept), however many lie behind;
// - instants compared as instants (timeKey), whatever precision the service writes.

/** `cursor`: where the consumer stands in this process (the later of it and the stored one counts). */
export interface Consumer extends Watch {
	/** Where an unfinished backlog read stopped in the list. */
	place?: Place;
	/** Completions handed out before a read reached them (a delivery ahead of a backlog read), by key. */
	ahead: BoundedSet<string>;
	/** The turn in progress: the next one starts when it ends. */
	turn: Promise<unknown>;
	/** Whether a turn waits for the one in progress (a listener's nudge then adds none). */
	waiting?: boolean;
	/** When its last turn started (n8n's clock), for a paced consumer. */
	startedAt?: number;
}

/** Completions handed out ahead of the cursor kept at most per consumer (one per delivery during a backlog read). */
const AHEAD_LIMIT = 10_000;

const consumers = rememberedMap<string, Consumer>('completionConsumers');

/** A consumer that has read nothing yet. */
export const newConsumer = (): Consumer => ({
	ahead: new BoundedSet(AHEAD_LIMIT),
	turn: Promise.resolve(),
});

/** A consumer's reader during its turn. */
export class CompletionReader {
	constructor(
		private readonly consumer: Consumer,
		/** Whether this is the consumer's first turn in this process (since a restart or a fresh start). */
		readonly firstHere: boolean,
	) {}

	/** Where the consumer stands: every completion not after it has been handed out. */
	get cursor(): Cursor | undefined {
		return this.consumer.cursor;
	}

	/** Places the cursor (a consumer's first turn, or one that starts from "now"). */
	startAt(cursor: Cursor): void {
		this.consumer.cursor = cursor;
		this.consumer.place = undefined;
	}

	/** Whether a completion was handed out already (not after the cursor, or ahead of it). */
	handedOut(task: CompletedTask): boolean {
		if (this.consumer.ahead.has(completionKey(task))) return true;
		return this.consumer.cursor !== undefined && !isAfter(task, this.consumer.cursor);
	}

	/** Hands out a completion a read has not reached (yet): the read that reaches it skips it. */
	handOutAhead(task: CompletedTask): void {
		this.consumer.ahead.add(completionKey(task));
	}

	/**
	 * The completions after the cursor, handed to `take` oldest first, page by page, until the newest
	 * or the deadline; the cursor moves over each page once `take` has it. Half the time reads from
	 * the top (one request when little is new); a backlog longer than that is read from the cursor
	 * upward, and the next read goes on from where this one stopped. `top`: whether it reached the
	 * newest completion (when false, more follow).
	 */
	async read(
		context: TaskQueueContext,
		queueId: number,
		options: {
			deadline: number;
			take: (tasks: CompletedTask[]) => Promise<void>;
			/**
			 * For a consumer that may see a completion twice (the check, whose runs resume once): the
			 * newest completions a read from the top found before it gave way to a backlog read, at once.
			 * The cursor does not move over them: `take` gets them again in their turn.
			 */
			newestFirst?: (tasks: CompletedTask[]) => Promise<void>;
			// with maxPages: past them, one page from the cursor upward
		} & ReadLimits,
	): Promise<{ top: boolean }> {
		const cursor = this.consumer.cursor ?? { at: '', ids: [] };
		const take = async (tasks: CompletedTask[]) => {
			await options.take(tasks.filter((task) => !this.consumer.ahead.delete(completionKey(task))));
			this.consumer.cursor = advanceCursor(this.consumer.cursor ?? cursor, tasks) ?? cursor;
		};
		const { place } = this.consumer;
		// a consumer bounded in pages (the waiting runs' index), and the check, read the newest page at
		// every read, a backlog read going on or not: a call's completion, or a run's lost answer, is
		// there (CI35; a check crawling a day's backlog left an answer 166-227 s late, issue 59)
		if (!place || options.maxPages || options.newestFirst) {
			const deep = readsDeep(this.consumer, Date.now());
			const halfway = Date.now() + (options.deadline - Date.now()) / 2;
			// a consumer that sizes its pages (the index) reads down to its window's floor at every read,
			// with a full page when the window closes: its calls may come from any process (CI38)
			const firstLimit = deep && options.firstLimit ? options.nextLimit : options.firstLimit;
			const collected = await collectAfter.call(context, queueId, cursor, {
				...options,
				firstLimit,
				deadline: halfway,
				deep: deep || options.firstLimit !== undefined,
				maxPages: place ? 1 : options.maxPages,
			});
			if (collected.complete) {
				this.consumer.place = undefined;
				await take(collected.tasks);
				Object.assign(this.consumer, sighted(this.consumer, deep, Date.now()));
				return { top: true };
			}
			if (collected.tasks.length > 0) await options.newestFirst?.(collected.tasks);
		}
		const reached = await collectUpward.call(context, queueId, cursor, {
			deadline: options.maxPages ? 0 : options.deadline,
			take,
			from: this.consumer.place,
		});
		this.consumer.place = reached.top ? undefined : reached.place;
		return { top: reached.top };
	}
}

/**
 * Runs `turn` with the consumer's reader once every earlier turn of the same consumer in this
 * process has ended. `stored` is the cursor the consumer's static data holds, which another process
 * may have moved: the later of it and this process's one counts; none means a fresh start.
 */
export async function inTurn<T>(
	scope: string,
	stored: Cursor | undefined,
	turn: (reader: CompletionReader) => Promise<T>,
): Promise<T> {
	return (await inTurnUnlessWaiting(scope, stored, turn, false)) as T;
}

/**
 * As inTurn; with `unlessWaiting`, undefined at once when a turn of the consumer waits already (it
 * covers this one). With `gapMs`, a turn starts at least that long after the last one started, and
 * calls meanwhile share it: however many calls arrive, at most one turn per gap.
 */
export async function inTurnUnlessWaiting<T>(
	scope: string,
	stored: Cursor | undefined,
	turn: (reader: CompletionReader) => Promise<T>,
	unlessWaiting = true,
	gapMs = 0,
): Promise<T | undefined> {
	let consumer = consumers.get(scope);
	if (!consumer) {
		consumer = newConsumer();
		consumers.set(scope, consumer);
	}
	const own = consumer;
	if (unlessWaiting && own.waiting) return undefined;
	own.waiting = true;
	const mine = own.turn.then(async () => {
		const wait = (own.startedAt ?? 0) + gapMs - Date.now();
		if (gapMs > 0 && wait > 0) await sleep(wait);
		[own.waiting, own.startedAt] = [false, Date.now()];
		const firstHere = own.cursor === undefined;
		// no stored cursor: the consumer starts afresh (a new activation), whatever this process kept
		own.cursor = stored ? laterCursor(own.cursor, stored) : undefined;
		if (!stored) {
			own.place = undefined;
			own.ahead.clear();
		}
		return await turn(new CompletionReader(own, firstHere));
	});
	own.turn = mine.catch(() => undefined);
	return await mine;
}
