import type { IDataObject } from 'n8n-workflow';

import type { CompletedTask } from '../transport/schemas';

/**
 * A completion is one (task, completion instant) pair: a forced re-completion keeps the id and gets
 * a new `completed_at`, so it is a different completion with a different key. The instant is taken
 * at millisecond precision, the one both sides share: the completed-tasks list writes microseconds
 * (`…31.928498Z`), a webhook delivery the same instant truncated (`…31.928Z`). So two
 * re-completions of one task within the same millisecond count as one (a person cannot force two
 * that fast; two different tasks completed in the same millisecond stay two).
 */
export function completionKey(task: Pick<CompletedTask, 'id' | 'completed_at'>): string {
	return `${task.id}:${timeKey(task.completed_at)}`;
}

const ISO = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}:\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:?\d{2})?$/i;

/**
 * A sortable form of a timestamp at millisecond precision: `YYYY-MM-DDTHH:MM:SS.mmm` in UTC. The
 * service writes timestamps with microseconds, milliseconds or no fraction at all, so string order
 * of the raw values is not time order ("…:00Z" sorts after "…:00.5Z"), and the same instant has
 * several spellings. Unparseable values give ''.
 */
export function timeKey(timestamp: string): string {
	const match = ISO.exec(timestamp.trim());
	if (!match) {
		const ms = Date.parse(timestamp);
		return Number.isNaN(ms) ? '' : new Date(ms).toISOString().slice(0, 23);
	}
	const [, day, time, fraction = '', zone] = match;
	const milli = fraction.padEnd(3, '0').slice(0, 3);
	if (!zone || zone.toUpperCase() === 'Z') return `${day}T${time}.${milli}`;
	const ms = Date.parse(
		`${day}T${time}${zone.length === 5 ? `${zone.slice(0, 3)}:${zone.slice(3)}` : zone}`,
	);
	if (Number.isNaN(ms)) return '';
	return `${new Date(ms).toISOString().slice(0, 19)}.${milli}`;
}

/**
 * How long after its instant a completion may still become visible, below later ones: a real
 * server sets `completed_at` before its transaction commits, and several containers commit in any
 * order.
 */
export const LATE_COMMIT_WINDOW_MS = 10_000;
/** Completions remembered below the cursor's instant at most (a burst's window holds more: it shrinks). */
const MAX_RECENT = 2_000;

/**
 * Where a consumer stands: the newest completion it has handed out (`at`, a timeKey), the ids of
 * the tasks completed at exactly that instant (several can share a timestamp), and the window
 * below it: every completion at or below `floor` counts as handed out, and between `floor` and
 * `at` only those in `recent` (completion keys), so one committed late, below completions already
 * handed out, is still new. The floor rises only where a read proved nothing more can come
 * (sighted), or when the window holds too many. Without `floor`, everything below `at` counts
 * (a cursor from "now"). `at: ''` means "before the first completion".
 */
export interface Cursor {
	at: string;
	ids: number[];
	recent?: string[];
	floor?: string;
}

export function readCursor(value: unknown): Cursor | undefined {
	const { at, ids, recent, floor } = (value ?? {}) as IDataObject;
	if (typeof at !== 'string' || !Array.isArray(ids)) return undefined;
	const cursor = { at, ids: ids.filter((id): id is number => typeof id === 'number') };
	if (typeof floor !== 'string' || floor >= at || !Array.isArray(recent)) return cursor;
	return { ...cursor, floor, recent: recent.filter((k): k is string => typeof k === 'string') };
}

/** The instant `ms` away from a timeKey ('' stays ''). */
export function shifted(key: string, ms: number): string {
	return key && new Date(Date.parse(`${key}Z`) + ms).toISOString().slice(0, 23);
}

/** Every completion at or below this instant has been handed out. */
export const floorOf = (cursor: Cursor): string => cursor.floor ?? shifted(cursor.at, -1);

const instantOf = (key: string) => key.slice(key.indexOf(':') + 1);

/** Whether the completion is after the cursor: not handed out yet (newer, or committed late below it). */
export function isAfter(task: CompletedTask, cursor: Cursor): boolean {
	const key = timeKey(task.completed_at);
	if (key >= cursor.at) return key > cursor.at || !cursor.ids.includes(task.id);
	return key > floorOf(cursor) && !cursor.recent?.includes(completionKey(task));
}

/** The cursor once `tasks` have been handed out too. */
export function advanceCursor(
	cursor: Cursor | undefined,
	tasks: CompletedTask[],
): Cursor | undefined {
	if (tasks.length === 0) return cursor;
	let [at, ids] = [cursor?.at ?? '', [...(cursor?.ids ?? [])]];
	const floor = cursor ? floorOf(cursor) : '';
	const recent = new Set(cursor?.recent);
	for (const task of tasks) {
		const key = timeKey(task.completed_at);
		if (key > at) {
			for (const id of ids) recent.add(`${id}:${at}`);
			[at, ids] = [key, [task.id]];
		} else if (key === at) {
			if (!ids.includes(task.id)) ids.push(task.id);
		} else if (key > floor) recent.add(completionKey(task));
	}
	return windowed(at, ids, [...recent], floor);
}

/** The cursor at `at` with its window down to `floor`: at most `most` of `keys` (it shrinks). */
function windowed(at: string, ids: number[], keys: string[], floor: string, most = MAX_RECENT) {
	const recent = [...new Set(keys)].filter((k) => instantOf(k) > floor && instantOf(k) < at);
	if (recent.length <= most) return { at, ids, recent, floor };
	const raised = recent.map(instantOf).sort()[recent.length - most - 1];
	return { at, ids, recent: recent.filter((k) => instantOf(k) > raised), floor: raised };
}

/** The cursor with at most `most` completions in its window (the floor rises over the oldest). */
export const narrowed = (cursor: Cursor | undefined, most: number): Cursor | undefined =>
	cursor && windowed(cursor.at, cursor.ids, cursor.recent ?? [], floorOf(cursor), most);

/**
 * Two cursors of one consumer as one (one kept by this process, one stored, maybe by another
 * process): the later instant, and every completion either of them handed out.
 */
export function laterCursor(a: Cursor | undefined, b: Cursor | undefined): Cursor | undefined {
	if (!a || !b) return a ?? b;
	const [late, early] = a.at >= b.at ? [a, b] : [b, a];
	const ids = early.at === late.at ? [...new Set([...late.ids, ...early.ids])] : late.ids;
	const handed = [a.recent ?? [], b.recent ?? [], early.ids.map((id) => `${id}:${early.at}`)];
	return windowed(late.at, ids, handed.flat(), [floorOf(a), floorOf(b)].sort()[1]);
}

/**
 * A consumer's cursor, and `seen`: the first sighting since its window last closed (the service
 * listed completions up to `at` by the reader's clock `when`).
 */
export interface Watch {
	cursor?: Cursor;
	seen?: { at: string; when: number };
}

/** Whether a read that starts at `now` reads down to the floor, to close the window (sighted). */
export const readsDeep = ({ seen }: Watch, now: number): boolean =>
	seen !== undefined && now - seen.when >= LATE_COMMIT_WINDOW_MS;

/**
 * After a read from the top that ended at `now`. A deep one, started at least
 * LATE_COMMIT_WINDOW_MS after the sighting, closes the window up to it: every completion at or
 * below it was visible then, and the read handed out all it listed. The next sighting is the
 * newest completion handed out, or `now` if that is dated later (a service's date is not trusted).
 * Only the reader's clock is compared with itself.
 */
export function sighted({ cursor, seen }: Watch, deep: boolean, now: number): Watch {
	if (!cursor || (seen && !deep)) return { cursor, seen };
	const { at, ids, recent = [] } = cursor;
	const to = seen ? [seen.at, shifted(at, -1)].sort()[0] : '';
	const closed = seen ? windowed(at, ids, recent, [floorOf(cursor), to].sort()[1]) : cursor;
	const next = [at, new Date(now).toISOString().slice(0, 23)].sort()[0];
	return { cursor: closed, seen: { at: next, when: now } };
}
