import fc from 'fast-check';

import {
	advanceCursor,
	compareCompletions,
	completionKey,
	isDue,
	isAfter,
	readCursor,
	timeKey,
} from '../../../../nodes/TaskQueue/reader/completions';
import type { CompletedTask } from '../../../../nodes/TaskQueue/transport/schemas';

function task(id: number, completed_at: string): CompletedTask {
	return {
		id,
		status: 'completed',
		completed_at,
		created_at: '2021-06-01T00:00:00Z',
		completed_by: 'alice@example.com',
		queue: 'Refunds',
		queue_id: 101,
		data: {},
		source: 'api',
	};
}

describe('timeKey', () => {
	it.each([
		['2021-06-01T10:30:00Z', '2021-06-01T10:30:00.000'],
		['2021-06-01T10:30:00.5Z', '2021-06-01T10:30:00.500'],
		['2021-06-01T10:30:00.123Z', '2021-06-01T10:30:00.123'],
		['2021-06-01T10:30:00.123456Z', '2021-06-01T10:30:00.123'],
		['2021-06-01T10:30:00.123999Z', '2021-06-01T10:30:00.123'],
		['2021-06-01T12:30:00.25+02:00', '2021-06-01T10:30:00.250'],
		['2021-06-01T10:30:00', '2021-06-01T10:30:00.000'],
		['not a date', ''],
	])('%s -> %s', (input, expected) => {
		expect(timeKey(input)).toBe(expected);
	});

	it('orders like time, whatever the precision (string order of the raw values does not)', () => {
		expect('2021-06-01T10:30:00Z' > '2021-06-01T10:30:00.5Z').toBe(true);
		expect(timeKey('2021-06-01T10:30:00Z') < timeKey('2021-06-01T10:30:00.5Z')).toBe(true);
		fc.assert(
			fc.property(
				fc.date({ min: new Date('2000-01-01'), max: new Date('2099-12-31') }),
				fc.date({ min: new Date('2000-01-01'), max: new Date('2099-12-31') }),
				(a, b) => {
					const ka = timeKey(a.toISOString());
					const kb = timeKey(b.toISOString().replace('.000Z', 'Z'));
					return Math.sign(a.getTime() - b.getTime()) === (ka === kb ? 0 : ka < kb ? -1 : 1);
				},
			),
		);
	});
});

describe('cursor', () => {
	const t1 = task(1, '2021-06-01T10:00:00.100Z');
	const t2 = task(2, '2021-06-01T10:00:00.200Z');
	const t3 = task(3, '2021-06-01T10:00:00.200Z');

	it('keys a completion by id and completion time, at millisecond precision', () => {
		expect(completionKey(t1)).toBe('1:2021-06-01T10:00:00.100');
	});

	it('one completion is one key whether delivered (milliseconds) or listed (microseconds)', () => {
		// real deployments: the webhook truncates the instant the completed-tasks list writes in full
		const delivered = task(7, '2026-11-21T09:51:31.928Z');
		const listed = task(7, '2026-11-21T09:51:31.928498Z');
		expect(completionKey(listed)).toBe(completionKey(delivered));
		expect(completionKey(task(7, '2026-11-21T09:51:31Z'))).toBe(
			completionKey(task(7, '2026-11-21T09:51:31.000400Z')),
		);
		const cursor = advanceCursor(undefined, [delivered])!;
		expect(isAfter(listed, cursor)).toBe(false);
		// another task completed in the same millisecond is still new; a later re-completion too
		expect(isAfter(task(8, '2026-11-21T09:51:31.928700Z'), cursor)).toBe(true);
		expect(isAfter(task(7, '2026-11-21T09:51:31.929001Z'), cursor)).toBe(true);
	});

	it('advances to the newest completion and keeps every id sharing its timestamp', () => {
		const cursor = advanceCursor(undefined, [t1, t2]);
		// and the window below it (reader/cursor.ts): t1 was handed out; no read closed it yet, so
		// its floor is where the cursor started (before the first completion)
		const window = { recent: ['1:2021-06-01T10:00:00.100'], floor: '' };
		expect(cursor).toEqual({ at: '2021-06-01T10:00:00.200', ids: [2], ...window });
		expect(isAfter(t1, cursor!)).toBe(false);
		expect(isAfter(t2, cursor!)).toBe(false);
		// Same instant, another task: completed after the cursor was taken.
		expect(isAfter(t3, cursor!)).toBe(true);
		expect(advanceCursor(cursor, [t3])).toEqual({
			at: '2021-06-01T10:00:00.200',
			ids: [2, 3],
			...window,
		});
		// Never moves back.
		expect(advanceCursor(cursor, [t1])).toEqual(cursor);
	});

	it('a re-completion (same id, later time) is after the cursor', () => {
		const cursor = advanceCursor(undefined, [t2])!;
		expect(isAfter(task(2, '2021-06-01T10:05:00Z'), cursor)).toBe(true);
	});

	it('the empty cursor is before everything', () => {
		expect(isAfter(t1, { at: '', ids: [] })).toBe(true);
	});

	it('a completion dated more than 5 minutes past this clock is not due yet (security review L4)', () => {
		const at = (ms: number) => task(1, new Date(Date.now() + ms).toISOString());
		expect(isDue(at(0))).toBe(true);
		expect(isDue(at(4 * 60_000))).toBe(true);
		expect(isDue(at(6 * 60_000))).toBe(false);
		expect(isDue(task(1, '2099-01-01T00:00:00Z'))).toBe(false);
	});

	it('reads back only well-formed cursors', () => {
		expect(readCursor({ at: 'x', ids: [1, 'a'] })).toEqual({ at: 'x', ids: [1] });
		expect(readCursor({ at: 1 })).toBeUndefined();
		expect(readCursor(null)).toBeUndefined();
	});

	it('sorts oldest first, ids breaking ties', () => {
		expect([t3, t1, t2].sort(compareCompletions).map((t) => t.id)).toEqual([1, 2, 3]);
	});
});
