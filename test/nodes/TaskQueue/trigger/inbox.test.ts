// The trigger's one inbox: every body its address accepts reads as exactly one kind.
import { readInbox } from '../../../../nodes/TaskQueue/trigger/inbox';

const url = 'http://localhost:5678/webhook/b0000000-0000-4000-8000-00000000000b/task-completed';
const token = 'a'.repeat(64);
const bodies: Record<string, unknown> = {
	delivery: { id: 1, status: 'completed', queue_id: 101 },
	passedOn: { taskQueuePassedOn: { from: url, to: url, delivery: '{}', signature: token } },
	announcement: { taskQueueWaitingRun: { address: url, tasks: [1, 2] } },
	checkRecord: {
		taskQueueCheckedThrough: { queueId: 101, at: '2026-11-26T10:00:00.000', ids: [1] },
	},
	join: { taskQueueListener: { join: { url } } },
	leave: { taskQueueListener: { leave: { url, token } } },
	prove: { taskQueueListener: { prove: { holder: url, nonce: token } } },
	hold: { taskQueueListener: { hold: { from: url, others: [url], signature: token } } },
};

describe('readInbox', () => {
	test('each message reads as its own kind, and only as it', () => {
		const kinds = Object.fromEntries(
			Object.entries(bodies).map(([name, body]) => [name, readInbox(body).kind]),
		);
		expect(kinds).toEqual({
			delivery: 'delivery',
			passedOn: 'passedOn',
			announcement: 'announcement',
			checkRecord: 'checkRecord',
			join: 'listener',
			leave: 'listener',
			prove: 'listener',
			hold: 'listener',
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
			{ taskQueueListener: { join: `${url}?secret=s` } },
			{ taskQueueListener: { hold: [], previous: 'https://collector.example.com/' } },
			{ taskQueueListener: { join: { url }, leave: { url, token } } },
			{ taskQueuePassedOn: { from: url, to: url, delivery: {}, signature: token } },
			{ taskQueueWaitingRun: { address: url, tasks: ['x'] } },
			{ taskQueueCheckedThrough: { queueId: 101, at: 'now', ids: [] } },
		])
			expect(readInbox(body).kind).toBe('malformed');
	});
});
