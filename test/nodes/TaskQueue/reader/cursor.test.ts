// The cursor's window below its instant (reader/cursor.ts): a completion committed late, below
// completions already handed out, is still handed out, once (issue 59, "late commits").
import fc from 'fast-check';

import {
	advanceCursor,
	sighted,
	type Cursor,
	isAfter,
	LATE_COMMIT_WINDOW_MS,
	laterCursor,
	readCursor,
	readsDeep,
	type Watch,
} from '../../../../nodes/TaskQueue/reader/cursor';
import type { CompletedTask } from '../../../../nodes/TaskQueue/transport/schemas';

const BASE = Date.parse('2026-12-02T10:00:00.000Z');

function task(id: number, ms: number): CompletedTask {
	return {
		id,
		status: 'completed',
		completed_at: new Date(BASE + ms).toISOString(),
		created_at: '2026-12-01T00:00:00Z',
		completed_by: 'alice@example.com',
		queue: 'Refunds',
		queue_id: 101,
		data: {},
		source: 'api',
	};
}

describe('the window below the cursor', () => {
	it('a completion committed late, below one handed out, is after the cursor; once handed out, not', () => {
		const later = task(2, 5_000);
		const cursor = advanceCursor(undefined, [task(1, 1_000), later])!;
		const late = task(3, 4_000);
		expect(isAfter(late, cursor)).toBe(true);
		expect(isAfter(task(1, 1_000), cursor)).toBe(false);
		expect(isAfter(later, cursor)).toBe(false);
		const next = advanceCursor(cursor, [late])!;
		expect(isAfter(late, next)).toBe(false);
		expect(next.at).toBe(cursor.at);
		// a re-completion of a task handed out within the window is a new completion
		expect(isAfter(task(1, 4_500), next)).toBe(true);
	});

	it(`closes only where a read down to its floor, ${LATE_COMMIT_WINDOW_MS / 1000} s after a sighting, proved nothing more can come`, () => {
		const start = advanceCursor(undefined, [task(1, 1_000), task(2, 20_000)])!;
		// nothing closes by itself: a completion of 1.5 s may still commit
		expect(isAfter(task(3, 1_500), start)).toBe(true);
		expect(readsDeep({ cursor: start }, 0)).toBe(false);
		// the first read from the top notes what it saw (the newest completion, never later than now)
		const first = sighted({ cursor: start }, false, BASE + 30_000);
		expect(first).toEqual({ cursor: start, seen: { at: start.at, when: BASE + 30_000 } });
		const later = sighted({ cursor: start }, false, BASE + 10_000);
		expect(later.seen).toEqual({ at: '2026-12-02T10:00:10.000', when: BASE + 10_000 });
		// a read before 10 s have passed is not deep and closes nothing
		expect(readsDeep(first, BASE + 39_999)).toBe(false);
		const moved = advanceCursor(start, [task(4, 25_000)])!;
		expect(sighted({ ...first, cursor: moved }, false, BASE + 39_999)).toEqual({
			...first,
			cursor: moved,
		});
		// one from 10 s after, down to the floor, closes up to the sighting: 3 (1.5 s) counts as
		// handed out; above the sighting nothing closed (19 s may still come; 20 s, handed out, not)
		expect(readsDeep(first, BASE + 40_000)).toBe(true);
		const closed = sighted({ ...first, cursor: moved }, true, BASE + 40_000);
		expect(closed.seen).toEqual({ at: moved.at, when: BASE + 40_000 });
		expect(isAfter(task(3, 1_500), closed.cursor!)).toBe(false);
		expect(isAfter(task(5, 20_000), closed.cursor!)).toBe(false);
		expect(isAfter(task(2, 20_000), closed.cursor!)).toBe(false);
		expect(isAfter(task(6, 20_001), closed.cursor!)).toBe(true);
		expect(isAfter(task(7, 24_999), closed.cursor!)).toBe(true);
		expect(closed.cursor).toEqual({ ...moved, floor: start.at, recent: [] });
	});

	it('a cursor without a window (from "now", or stored before the window) counts everything below it', () => {
		const now: Cursor = { at: '2026-12-02T10:00:05.000', ids: [2] };
		expect(isAfter(task(3, 4_000), now)).toBe(false);
		expect(isAfter(task(4, 5_000), now)).toBe(true);
		// once it moves, its window starts at its old instant: nothing below "now" comes back
		const moved = advanceCursor(now, [task(4, 5_000), task(5, 6_000)])!;
		expect(isAfter(task(3, 4_000), moved)).toBe(false);
		expect(isAfter(task(2, 5_000), moved)).toBe(false);
		expect(isAfter(task(6, 5_500), moved)).toBe(true);
	});

	it('a burst of more than 2,000 in the window: the window shrinks, and never reaches the instant of the cursor', () => {
		// 2,500 completions in one millisecond, then 2,500 in the next: the cap keeps the newest 2,000
		// below the cursor's instant, and every one at that instant stays in its ids
		const first = Array.from({ length: 2500 }, (_, i) => task(i + 1, 1_000));
		const second = Array.from({ length: 2500 }, (_, i) => task(i + 2501, 1_001));
		const third = Array.from({ length: 2500 }, (_, i) => task(i + 5001, 1_002));
		let cursor = advanceCursor(undefined, [...first, ...second.slice(0, 1000)])!;
		expect(cursor.ids).toHaveLength(1000);
		expect(second.slice(1000).every((t) => isAfter(t, cursor))).toBe(true);
		cursor = advanceCursor(cursor, [...second.slice(1000), ...third])!;
		expect(cursor.recent!.length).toBeLessThanOrEqual(2000);
		expect(cursor.floor! < cursor.at).toBe(true);
		expect(cursor.ids).toHaveLength(2500);
		for (const t of [...first, ...second, ...third]) expect(isAfter(t, cursor)).toBe(false);
		expect(isAfter(task(9999, 1_002), cursor)).toBe(true);
	});

	it('two cursors of one consumer merge into every completion either handed out', () => {
		const start = advanceCursor(undefined, [task(1, 1_000)])!;
		const here = advanceCursor(start, [task(2, 3_000), task(3, 2_000)])!; // 3 committed late
		const there = advanceCursor(start, [task(4, 3_000), task(5, 2_500)])!; // another process
		for (const merged of [laterCursor(here, there)!, laterCursor(there, here)!]) {
			for (const id of [1, 2, 3, 4, 5])
				expect(
					isAfter(task(id, { 1: 1_000, 2: 3_000, 3: 2_000, 4: 3_000, 5: 2_500 }[id]!), merged),
				).toBe(false);
			expect(isAfter(task(6, 2_700), merged)).toBe(true);
		}
		const ahead = advanceCursor(there, [task(7, 4_000)])!;
		const merged = laterCursor(here, ahead)!;
		expect(merged.at).toBe(ahead.at);
		expect(isAfter(task(3, 2_000), merged)).toBe(false);
		expect(isAfter(task(2, 3_000), merged)).toBe(false);
	});

	it('is stored and read back whole; a window that does not fit its cursor is dropped', () => {
		const cursor = advanceCursor(undefined, [task(1, 1_000), task(2, 2_000)])!;
		expect(readCursor(JSON.parse(JSON.stringify(cursor)))).toEqual(cursor);
		const broken = readCursor({ ...cursor, floor: '2099-01-01T00:00:00.000' })!;
		expect(broken).toEqual({ at: cursor.at, ids: cursor.ids });
		expect(isAfter(task(1, 1_000), broken)).toBe(false);
	});

	// Completions become visible up to 9 s after their instant, in any order; a reader hands out what
	// it sees after its cursor, oldest first, in pieces cut anywhere (inside one millisecond too),
	// reading from the top down to the cursor's instant only, or down to the floor when readsDeep
	// says so (sighted then closes the window); it sometimes restarts from the stored cursor,
	// sometimes merges a stale copy of it (queue mode), sometimes forgets its sighting (a restart).
	it('property: every completion is handed out exactly once, however shallow the reads between', () => {
		fc.assert(
			fc.property(
				fc.array(fc.record({ at: fc.integer({ min: 0, max: 30_000 }), late: fc.nat(9_000) }), {
					minLength: 1,
					maxLength: 300,
				}),
				fc.array(
					fc.record({
						step: fc.nat(4_000),
						piece: fc.integer({ min: 1, max: 40 }),
						stale: fc.boolean(),
						restart: fc.boolean(),
					}),
					{
						minLength: 1,
						maxLength: 60,
					},
				),
				(made, turns) => {
					// a few instants shared by many
					const all = made.map((m, i) => ({
						t: task(i + 1, m.at - (m.at % 7)),
						visible: m.at - (m.at % 7) + m.late,
					}));
					const handed = new Map<number, number>();
					let watch: Watch = {};
					let stale: Cursor | undefined;
					let now = 0;
					const turn = (piece: number) => {
						const deep = readsDeep(watch, BASE + now);
						const { cursor } = watch;
						const fresh = all
							.filter((c) => c.visible <= now && (!cursor || isAfter(c.t, cursor)))
							.filter((c) => deep || !cursor || timeOf(c.t) >= cursor.at)
							.map((c) => c.t)
							.sort((a, b) =>
								a.completed_at === b.completed_at
									? a.id - b.id
									: a.completed_at < b.completed_at
										? -1
										: 1,
							);
						for (let i = 0; i < fresh.length; i += piece) {
							const page = fresh.slice(i, i + piece);
							for (const t of page) handed.set(t.id, (handed.get(t.id) ?? 0) + 1);
							watch = { ...watch, cursor: advanceCursor(watch.cursor, page) };
						}
						watch = sighted(watch, deep, BASE + now);
					};
					for (const { step, piece, stale: merge, restart } of turns) {
						now += step;
						if (merge && stale) watch = { ...watch, cursor: laterCursor(watch.cursor, stale) };
						if (restart) watch = { cursor: watch.cursor };
						stale = watch.cursor && readCursor(JSON.parse(JSON.stringify(watch.cursor)));
						turn(piece);
					}
					// reads go on after the last completion is visible, 10 s apart
					for (let i = 0; i < 3; i++) {
						now += LATE_COMMIT_WINDOW_MS + 9_000;
						turn(1000);
					}
					return all.every((c) => handed.get(c.t.id) === 1);
				},
			),
			{ numRuns: 300 },
		);
	});
});

const timeOf = (t: CompletedTask) => t.completed_at.slice(0, 23);
