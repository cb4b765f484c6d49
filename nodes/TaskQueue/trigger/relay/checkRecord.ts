import type { IDataObject, IPollFunctions } from 'n8n-workflow';

import type { Cursor } from '../../reader/completions';
import { isAfter, readCursor, timeKey } from '../../reader/completions';
import { narrowed } from '../../reader/cursor';
import { type Field, type Keys, sign, verify } from '../../helpers/signing';
import { getTaskQueueCredentials, postToThisN8n } from '../../transport';
import type { CompletedTask } from '../../transport/schemas';
import { rememberedMap } from '../../runtime/processMemory';
import { readCheckRecordValue, writeCheckRecordValue } from '../state/staticData';

// Where Check for Lost Completions stands, kept across restarts, so that the first check after a
// restart reads from there instead of the last 24 hours. The check runs in poll(), whose static data
// n8n saves only when it emits (1.x and 2.x alike); so the check POSTs its record to its own
// trigger's address (with the trigger's secret), and the trigger's webhook() writes it to static
// data, which n8n saves after the call. Only the check sends it (on the main process in queue
// mode), one call at a time; a stale copy of the static data saved by another call only moves it
// back: the check then reads a little more, never less. The message is built and read here only.

/**
 * Every completion after this point (`isAfter`) may still have to reach a waiting run; with its
 * late-commit window: one that becomes visible below what the check read is still new after a
 * restart, and those the window lists are not passed on again (issue 59).
 */
export interface CheckRecord extends Cursor {
	queueId: number;
	/** Runs the check wakes at their deadline (relay/deadlines.ts): known again after a restart. */
	wake?: RunToWake[];
}

export interface RunToWake {
	/** The run's address, as n8n signed it. */
	url: string;
	/** Its deadline (ms). */
	at: number;
	/** The run's signed list of its own further tasks (waiting/people/extraTasks.ts), handed back in each call. */
	own?: string;
}

const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?$/;
const MAX_IDS = 1000;
export const MAX_WAKES = 100;

/**
 * The record signed with the trigger's credential's key: the trigger's secret is readable by others
 * (the queue's target), and a record made up with it could hide a lost completion after a restart.
 */
function recordFields(record: CheckRecord): Field[] {
	const fields: Field[] = [record.queueId, record.at, record.ids.join(',')];
	if (record.floor) fields.push(record.floor, (record.recent ?? []).join(','));
	if (record.wake?.length)
		fields.push(JSON.stringify(record.wake.map(({ url, at, own }) => [url, at, own])));
	return fields;
}

/** The call the check sends to its trigger. */
export function checkRecordCall(
	record: CheckRecord,
	key: string,
): { taskQueueCheckedThrough: CheckRecord & { signature: string } } {
	const { wake, ...point } = record;
	const kept = wake?.slice(0, MAX_WAKES) ?? [];
	const sent: CheckRecord = {
		...point,
		ids: point.ids.slice(0, MAX_IDS),
		...(kept.length > 0 ? { wake: kept } : {}),
	};
	return {
		taskQueueCheckedThrough: { ...sent, signature: sign(key, 'check-record', recordFields(sent)) },
	};
}

export interface CheckRecordCall {
	record: CheckRecord;
	signature?: string;
}

/** The record in a call to the trigger, or undefined when the body is not one. */
export function readCheckRecordCall(body: unknown): CheckRecordCall | undefined {
	const value = (body as { taskQueueCheckedThrough?: unknown } | undefined)
		?.taskQueueCheckedThrough;
	const record = readRecord(value);
	if (!record) return undefined;
	const signature = (value as IDataObject).signature;
	return typeof signature === 'string' && /^[0-9a-f]{64}$/.test(signature)
		? { record, signature }
		: { record };
}

/** Whether the call was signed with one of these keys (the trigger's own check sent it). */
export function isSignedRecord(call: CheckRecordCall, keys: Keys): boolean {
	return verify(call.signature, keys, 'check-record', recordFields(call.record));
}

function readRecord(value: unknown): CheckRecord | undefined {
	if (typeof value !== 'object' || value === null) return undefined;
	const { queueId, at, ids, recent } = value as IDataObject;
	if (!Number.isSafeInteger(queueId) || typeof at !== 'string' || !TIME.test(at)) return undefined;
	if (!Array.isArray(ids) || ids.length > MAX_IDS || !ids.every((id) => Number.isSafeInteger(id)))
		return undefined;
	const wake = readWakes((value as IDataObject).wake);
	if (wake === null || (Array.isArray(recent) && recent.length > MAX_IDS)) return undefined;
	return { queueId: queueId as number, ...readCursor(value)!, ...(wake ? { wake } : {}) };
}

/** The runs to wake a record lists; null when the list is malformed (the record is not ours). */
export function readWakes(value: unknown): RunToWake[] | undefined | null {
	if (value === undefined) return undefined;
	if (!Array.isArray(value) || value.length === 0 || value.length > MAX_WAKES) return null;
	const wake = value.map((entry) => {
		const { url, at, own } = (entry ?? {}) as IDataObject;
		return typeof url === 'string' && url.length <= 2000 && Number.isSafeInteger(at)
			? { url, at: at as number, ...(typeof own === 'string' ? { own } : {}) }
			: undefined;
	});
	return wake.every((run) => run !== undefined) ? (wake as RunToWake[]) : null;
}

/** The record in the trigger's static data, if it is this queue's. */
export function storedCheckRecord(state: IDataObject, queueId: number): CheckRecord | undefined {
	const record = readRecord(readCheckRecordValue(state));
	return record?.queueId === queueId ? record : undefined;
}

/** Writes the record to static data; false when it is the stored one already (nothing to save). */
export function storeCheckRecord(state: IDataObject, record: CheckRecord): boolean {
	// both read by readRecord: the same record gives the same text
	if (JSON.stringify(storedCheckRecord(state, record.queueId)) === JSON.stringify(record))
		return false;
	writeCheckRecordValue(state, record);
	return true;
}

// With Catch Up (or re-completions dropped) deliveries keep records in static data too, and n8n
// saves each call's copy whole: a record written while such a delivery is under way in this process
// could overwrite what the delivery saves. So the record waits (here, in memory) and the next such
// delivery writes it with its own; when none has run for a while, the record call writes it itself.
// Deliveries of one registration reach one process (one process, or queue mode with each webhook
// address routed to one webhook process, as docs/scaling.md asks), and so does this call.

/** A record that waits for the next delivery that writes static data, by registration. */
const heldRecords = rememberedMap<string, CheckRecord>('heldCheckRecords');
/** Deliveries that write static data under way in this process, and when the last one ended. */
const writingDeliveries = rememberedMap<string, { running: number; endedAt: number }>(
	'writingDeliveries',
);
/** How long after such a delivery its static data may still be on its way to the database. */
const QUIET_MS = 2_000;

export function beginWritingDelivery(scope: string): void {
	const entry = writingDeliveries.get(scope) ?? { running: 0, endedAt: 0 };
	writingDeliveries.set(scope, { running: entry.running + 1, endedAt: entry.endedAt });
}

export function endWritingDelivery(scope: string): void {
	const entry = writingDeliveries.get(scope) ?? { running: 1, endedAt: 0 };
	writingDeliveries.set(scope, { running: Math.max(0, entry.running - 1), endedAt: Date.now() });
}

/** Whether a write to static data now could overwrite what a delivery of the registration saves. */
export function deliveriesWriting(scope: string, deliveriesWrite: boolean): boolean {
	const writing = writingDeliveries.get(scope);
	if (!deliveriesWrite || !writing) return false;
	return writing.running > 0 || Date.now() - writing.endedAt < QUIET_MS;
}

/** What the trigger does with the check's record: writes it, or holds it for the next delivery. */
export function keepCheckRecord(
	state: IDataObject,
	scope: string,
	record: CheckRecord,
	deliveriesWrite: boolean,
): 'stored' | 'held' {
	if (deliveriesWriting(scope, deliveriesWrite)) {
		heldRecords.set(scope, record);
		return 'held';
	}
	heldRecords.delete(scope);
	storeCheckRecord(state, record);
	return 'stored';
}

/** A delivery that writes static data writes the record held for it too. */
export function writeHeldCheckRecord(state: IDataObject, scope: string): void {
	const record = heldRecords.get(scope);
	if (!record) return;
	storeCheckRecord(state, record);
	heldRecords.delete(scope);
}

/**
 * The point a restarted check must read from: the cursor with its window (at most MAX_IDS
 * completions in it), or earlier where a completion before it is not settled yet (it is passed on
 * again after the restart, as it would have been without one).
 */
export function restartPoint(
	queueId: number,
	cursor: Cursor,
	unsettled: CompletedTask[],
): CheckRecord {
	let point: Cursor = (cursor.floor && narrowed(cursor, MAX_IDS)) || cursor;
	for (const task of unsettled) {
		if (!isAfter(task, point)) point = { at: timeKey(task.completed_at), ids: [] };
	}
	return { queueId, ...point };
}

/**
 * Sends the record to the trigger's own address (each round: one not stored is sent again); returns
 * the runs announced to the process that took the call (deadlines.ts).
 */
export async function sendCheckRecord(
	this: IPollFunctions,
	triggerUrl: string,
	record: CheckRecord,
): Promise<RunToWake[]> {
	const { apiKey } = await getTaskQueueCredentials.call(this);
	const answer = await postToThisN8n.call(
		this,
		triggerUrl,
		checkRecordCall(record, apiKey),
		10_000,
	);
	if ('status' in answer && answer.status === 200)
		return readWakes(((answer.body ?? {}) as IDataObject).wake) ?? [];
	this.logger.debug(
		`Task Queue Trigger: the trigger of queue ${record.queueId} did not take where its check for lost completions stands (${'status' in answer ? `HTTP ${answer.status}` : answer.error}); after a restart the first check reads the last 24 hours`,
	);
	return [];
}
