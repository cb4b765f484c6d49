import type { IDataObject } from 'n8n-workflow';

import {
	checkDelivery,
	deliveriesReachSeveralProcesses,
	markDeliveryHandledHere,
	secretMatches,
} from '../../../../nodes/TaskQueue/trigger/deliveryChecks';

const TASK = {
	id: 7,
	status: 'completed',
	completed_at: '2021-06-01T10:00:00.100Z',
	created_at: '2021-06-01T09:00:00Z',
	completed_by: 'alice@example.com',
	queue: 'Refunds',
	queue_id: 101,
	data: { approved: 'yes' },
	source: 'api',
	correct: null,
};

describe('secretMatches', () => {
	const secret = 'a'.repeat(64);
	it.each([
		[secret, true],
		['a'.repeat(63), false],
		['b'.repeat(64), false],
		['', false],
		[undefined, false],
		[[secret], true],
		[{ secret }, false],
	])('%p -> %p', (provided, expected) => {
		expect(secretMatches(provided, secret)).toBe(expected);
	});

	it('refuses everything when no secret is registered', () => {
		expect(secretMatches('', '')).toBe(false);
		expect(secretMatches('x', undefined)).toBe(false);
	});
});

describe('checkDelivery', () => {
	it('accepts a completed task of the queue, unknown fields included, as sent', () => {
		expect(checkDelivery(TASK, 101)).toEqual({ ok: true, task: TASK });
	});

	it.each([
		[null, 'The body is not a task object'],
		['text', 'The body is not a task object'],
		[[TASK], 'The body is not a task object'],
		[{ ...TASK, status: 'in_progress' }, 'The task\'s status is "in_progress", not "completed"'],
		[
			{ ...TASK, completed_at: null },
			'The body is not a completed task (completed_at: Expected string, received null)',
		],
		[
			{ ...TASK, data: 'x' },
			'The body is not a completed task (data: Expected object, received string)',
		],
		[{ ...TASK, queue_id: 102 }, 'The task belongs to queue 102, not 101'],
		// a status made up by a caller with the secret reaches a log line quoted, escaped, cut short
		[
			{ ...TASK, status: `x\n2026-11-26 INFO Task Queue: all good ${'y'.repeat(200)}` },
			'The task\'s status is "x\\n2026-11-26 INFO Task Queue: all good y", not "completed"',
		],
	])('refuses %j', (body, reason) => {
		expect(checkDelivery(body, 101)).toEqual({ ok: false, reason });
	});
});

describe('deliveriesReachSeveralProcesses (queue mode: deliveries of one registration over several webhook processes)', () => {
	const T0 = 1_800_000_000_000;
	let n = 0;
	const newScope = () => `wf:node:secret-${++n}`;

	test('one process handling every delivery: never', () => {
		const state: IDataObject = {};
		const scope = newScope();
		const handled = (t: number) => {
			const several = deliveriesReachSeveralProcesses(state, scope, t);
			markDeliveryHandledHere(state, t);
			return several;
		};
		expect([T0, T0 + 10, T0 + 20].map(handled)).toEqual([false, false, false]);
		expect(state.lastDelivery).toEqual({ process: expect.any(String), at: T0 + 20 });
	});

	test('another process handled one since this one began, within a minute: once per registration', () => {
		const state: IDataObject = {};
		const scope = newScope();
		expect(deliveriesReachSeveralProcesses(state, scope, T0)).toBe(false);
		markDeliveryHandledHere(state, T0);
		// both began at the same moment: the other's record (its clock a little behind) counts
		state.lastDelivery = { process: 'another-process', at: T0 - 500 };
		expect(deliveriesReachSeveralProcesses(state, scope, T0 + 10)).toBe(true);
		state.lastDelivery = { process: 'another-process', at: T0 + 15 };
		expect(deliveriesReachSeveralProcesses(state, scope, T0 + 20)).toBe(false);
	});

	test('checking writes nothing to static data (a dropped delivery saves none)', () => {
		const state: IDataObject = { lastDelivery: { process: 'another-process', at: T0 } };
		deliveriesReachSeveralProcesses(state, newScope(), T0 + 10);
		expect(state).toEqual({ lastDelivery: { process: 'another-process', at: T0 } });
	});

	test("a restart (the record before it is older than this process's first delivery) or a record over a minute old: no", () => {
		// n8n takes seconds to start again: the record before the restart is older than the slack
		const restarted: IDataObject = {
			lastDelivery: { process: 'the-process-before-the-restart', at: T0 },
		};
		expect(deliveriesReachSeveralProcesses(restarted, newScope(), T0 + 5_000)).toBe(false);
		const state: IDataObject = {};
		const scope = newScope();
		deliveriesReachSeveralProcesses(state, scope, T0);
		state.lastDelivery = { process: 'another-process', at: T0 + 30_000 };
		expect(deliveriesReachSeveralProcesses(state, scope, T0 + 91_000)).toBe(false);
	});
});
