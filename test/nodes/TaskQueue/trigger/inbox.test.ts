// The trigger's one inbox: every body its address accepts reads as exactly one kind.
import { readInbox } from '../../../../nodes/TaskQueue/trigger/inbox';

const url = 'http://localhost:5678/webhook/b0000000-0000-4000-8000-00000000000b/task-completed';
const bodies: Record<string, unknown> = {
	delivery: { id: 1, status: 'completed', queue_id: 101 },
	announcement: { taskQueueWaitingRun: { address: url, tasks: [1, 2] } },
	checkRecord: {
		taskQueueCheckedThrough: { queueId: 101, at: '2026-11-26T10:00:00.000', ids: [1] },
	},
	join: { taskQueueListener: { join: url } },
	nudge: { taskQueueNudge: {} },
};

describe('readInbox', () => {
	test('each message reads as its own kind, and only as it', () => {
		const kinds = Object.fromEntries(
			Object.entries(bodies).map(([name, body]) => [name, readInbox(body).kind]),
		);
		expect(kinds).toEqual({
			delivery: 'delivery',
			announcement: 'announcement',
			checkRecord: 'checkRecord',
			join: 'join',
			nudge: 'nudge',
		});
		expect(readInbox(bodies.join)).toEqual({ kind: 'join', url });
		expect(readInbox(bodies.nudge)).toEqual({ kind: 'nudge', look: false, answerOnly: false });
		// a nudge carries nothing but what to do (read, look, answer only): other keys are ignored
		expect(readInbox({ taskQueueNudge: { look: true, tasks: [{ id: 1 }] } })).toEqual({
			kind: 'nudge',
			look: true,
			answerOnly: false,
		});
	});

	test('a body with two messages, or a reserved key that does not parse, is malformed: never a delivery', () => {
		const messages = Object.values(bodies).slice(1) as Array<Record<string, unknown>>;
		for (const first of messages)
			for (const second of messages) {
				if (Object.keys(first)[0] === Object.keys(second)[0]) continue;
				expect(readInbox({ ...first, ...second }).kind).toBe('malformed');
				expect(readInbox({ ...(bodies.delivery as object), ...first }).kind).not.toBe('delivery');
			}
		for (const body of [
			{ taskQueueListener: { join: { url } } },
			{ taskQueueListener: { join: 'ftp://example.com/x' } },
			{ taskQueueListener: { hold: [], previous: 'https://collector.example.com/' } },
			{ taskQueueNudge: 'now' },
			{ taskQueueWaitingRun: { address: url, tasks: ['x'] } },
			{ taskQueueCheckedThrough: { queueId: 101, at: 'now', ids: [] } },
		])
			expect(readInbox(body).kind).toBe('malformed');
	});
});
