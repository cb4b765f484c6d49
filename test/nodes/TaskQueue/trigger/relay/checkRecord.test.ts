import type { IDataObject } from 'n8n-workflow';

import {
	beginWritingDelivery,
	checkRecordCall,
	type CheckRecordCall,
	endWritingDelivery,
	isSignedRecord,
	keepCheckRecord,
	writeHeldCheckRecord,
	readCheckRecordCall,
	restartPoint,
	storeCheckRecord,
	storedCheckRecord,
} from '../../../../../nodes/TaskQueue/trigger/relay/checkRecord';
import type { CompletedTask } from '../../../../../nodes/TaskQueue/transport/schemas';

const task = (id: number, completedAt: string) =>
	({ id, queue_id: 7, completed_at: completedAt, data: {} }) as unknown as CompletedTask;

describe('where Check for Lost Completions stands, kept across restarts', () => {
	test('the call round-trips, and anything else is not a record', () => {
		const record = { queueId: 7, at: '2026-11-26T10:00:00.123', ids: [3, 4] };
		const call = readCheckRecordCall(checkRecordCall(record, 'key'));
		expect(call).toEqual({ record, signature: expect.stringMatching(/^[0-9a-f]{64}$/) });
		expect(isSignedRecord(call as CheckRecordCall, 'key')).toBe(true);
		expect(isSignedRecord(call as CheckRecordCall, 'another key')).toBe(false);
		expect(
			isSignedRecord(
				{ ...(call as CheckRecordCall), record: { ...record, at: '2099-01-01T00:00:00.000' } },
				'key',
			),
		).toBe(false);
		expect(readCheckRecordCall({ taskQueueCheckedThrough: record })).toEqual({ record });
		for (const body of [
			undefined,
			{},
			{ taskQueueCheckedThrough: { ...record, queueId: '7' } },
			{ taskQueueCheckedThrough: { ...record, at: 'yesterday' } },
			{ taskQueueCheckedThrough: { ...record, ids: ['3'] } },
			{ taskQueueCheckedThrough: { ...record, ids: Array.from({ length: 1001 }, (_, i) => i) } },
		])
			expect(readCheckRecordCall(body)).toBeUndefined();
	});

	test('the runs to wake at their deadline travel signed with the record, are stored with it, and a malformed list is no record', () => {
		const wake = [
			{ url: 'http://localhost:5678/webhook-waiting/81/node?tq=0-1-1', at: 1_800_000_000_000 },
		];
		const record = { queueId: 7, at: '2026-11-26T10:00:00.123', ids: [3], wake };
		const call = readCheckRecordCall(checkRecordCall(record, 'key')) as CheckRecordCall;
		expect(call.record).toEqual(record);
		expect(isSignedRecord(call, 'key')).toBe(true);
		// a deadline moved, or a run added, by anyone holding the trigger's secret: not the check's record
		const moved = { ...call, record: { ...record, wake: [{ ...wake[0], at: 1 }] } };
		expect(isSignedRecord(moved, 'key')).toBe(false);
		const without = { queueId: record.queueId, at: record.at, ids: record.ids };
		expect(isSignedRecord({ ...call, record: without }, 'key')).toBe(false);
		// an empty list is sent as none (records of earlier versions keep their signatures)
		expect(checkRecordCall({ ...without, wake: [] }, 'key')).toEqual(
			checkRecordCall(without, 'key'),
		);
		const state: IDataObject = {};
		expect(storeCheckRecord(state, without)).toBe(true);
		expect(storeCheckRecord(state, record)).toBe(true);
		expect(storeCheckRecord(state, { ...record })).toBe(false);
		expect(storedCheckRecord(state, 7)).toEqual(record);
		for (const bad of [
			[],
			[{ url: 5, at: 1 }],
			[{ url: 'x', at: 'soon' }],
			Array.from({ length: 101 }, () => wake[0]),
		])
			expect(
				readCheckRecordCall({ taskQueueCheckedThrough: { ...record, wake: bad } }),
			).toBeUndefined();
	});

	test("static data holds one queue's record; another queue's is not used", () => {
		const state: IDataObject = {};
		const record = { queueId: 7, at: '2026-11-26T10:00:00.123', ids: [3] };
		expect(storeCheckRecord(state, record)).toBe(true);
		expect(storeCheckRecord(state, { ...record })).toBe(false);
		expect(storedCheckRecord(state, 7)).toEqual(record);
		expect(storedCheckRecord(state, 8)).toBeUndefined();
	});

	test('the restart point stays before every completion not settled yet', () => {
		const cursor = { at: '2026-11-26T10:00:05.000', ids: [9] };
		expect(restartPoint(7, cursor, [])).toEqual({ queueId: 7, ...cursor });
		expect(restartPoint(7, cursor, [task(5, '2026-11-26T10:00:01.500Z')])).toEqual({
			queueId: 7,
			at: '2026-11-26T10:00:01.500',
			ids: [],
		});
		// the cursor's own last completion, not settled: read again
		expect(restartPoint(7, cursor, [task(9, '2026-11-26T10:00:05.000Z')])).toEqual({
			queueId: 7,
			at: '2026-11-26T10:00:05.000',
			ids: [],
		});
	});

	test('with deliveries that write static data, the record waits for the next one while one is under way or just ended, so neither save overwrites the other', () => {
		const now = jest.spyOn(Date, 'now').mockReturnValue(1_000_000);
		try {
			const record = { queueId: 7, at: '2026-11-26T10:00:00.123', ids: [3] };
			const scope = 'wf:node:secret';
			beginWritingDelivery(scope);
			const state: IDataObject = {};
			expect(keepCheckRecord(state, scope, record, true)).toBe('held');
			expect(storedCheckRecord(state, 7)).toBeUndefined();
			// the delivery under way writes it with its own records
			const deliveryState: IDataObject = {};
			writeHeldCheckRecord(deliveryState, scope);
			expect(storedCheckRecord(deliveryState, 7)).toEqual(record);
			endWritingDelivery(scope);
			now.mockReturnValue(1_001_000);
			expect(keepCheckRecord(state, scope, record, true)).toBe('held');
			now.mockReturnValue(1_002_500);
			expect(keepCheckRecord(state, scope, record, true)).toBe('stored');
			expect(storedCheckRecord(state, 7)).toEqual(record);
			// deliveries that write nothing: stored at once
			beginWritingDelivery('other');
			expect(keepCheckRecord({}, 'other', record, false)).toBe('stored');
		} finally {
			now.mockRestore();
		}
	});
});
