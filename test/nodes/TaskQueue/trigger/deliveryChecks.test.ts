import { checkDelivery, secretMatches } from '../../../../nodes/TaskQueue/trigger/deliveryChecks';

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
		[{ ...TASK, completed_at: null }, 'The body is not a completed task (completed_at: Expected string, received null)'],
		[{ ...TASK, data: 'x' }, 'The body is not a completed task (data: Expected object, received string)'],
		[{ ...TASK, queue_id: 102 }, 'The task belongs to queue 102, not 101'],
	])('refuses %j', (body, reason) => {
		expect(checkDelivery(body, 101)).toEqual({ ok: false, reason });
	});
});
