import type { IDataObject } from 'n8n-workflow';

import type { Announcement } from '../waiting/messages';
import { readAnnouncement } from '../waiting/messages';
import type { CheckRecordCall } from './relay/checkRecord';
import { readCheckRecordCall } from './relay/checkRecord';

// The one inbox of a Task Queue Trigger's address: every body it accepts is read here into one
// tagged union, and the webhook handler dispatches on it (receive.ts). A body that carries
// one of the reserved keys is that kind or malformed, never a delivery; one with two is malformed:
// no body reads as two kinds. Beside each kind, who may send it, what it may change and the bound
// on the work it causes (docs/waiting-protocol.md draws them):
//
// - delivery: the service's POST of a completed task. Needs this trigger's secret. Starts at most
//   one execution per completion (duplicates answered without one); the holder passes it on once.
// - passedOn: a delivery the queue's holder passes to a trigger listening through it. Needs no
//   secret of the receiver: it is signed with the holder's secret, which the receiver reads from
//   the queue's live webhook target. Handled as a delivery, never passed on again (loop-free by
//   construction); refused by the holder itself.
// - announcement: a waiting Create and Wait run of this n8n names its tasks. Needs the secret.
//   Changes only the process's memory of runs (trigger/relay/knownRuns.ts), bounded there; only one
//   signed with the trigger's credential's key can keep a completion from being emitted.
// - checkRecord: this trigger's own Check for Lost Completions says where it stands. Needs the
//   secret and a signature with the trigger's credential's key. Moves the stored record
//   (trigger/relay/checkRecord.ts); a record later than now is not followed.
// - listener: another Task Queue Trigger of this n8n on the same queue (trigger/holder.ts, trigger/listener.ts):
//   `join` (the secret, and the joiner proves itself by answering `prove` at its own address),
//   `leave` (the secret, and the token only the listener can make), `prove` (anyone; answers a
//   proof, at most one service read per trigger every 2 s), `hold` (signed with the holder's
//   secret as the live target names it; the receiver points the queue at itself).

export type ListenerMessage =
	/** A trigger asks the holder to pass it deliveries; `url` is its address, without a secret. */
	| { join: { url: string } }
	/** A listener is deactivated; `token` hashes to what its proof gave the holder. */
	| { leave: { url: string; token: string } }
	/** The holder asks a joining address to prove it is a Task Queue Trigger on its queue. */
	| { prove: { holder: string; nonce: string } }
	/** The holder is deactivated: the receiver takes the queue, and admits the `others` it proves. */
	| { hold: { from: string; others: string[]; signature: string } };

export interface PassedOn {
	/** The holder's address (without its secret). */
	from: string;
	/** The listener's address it was sent to. */
	to: string;
	/** The service's body, as the holder received it. */
	delivery: string;
	signature: string;
}

export type InboxMessage =
	| { kind: 'delivery'; body: unknown }
	| { kind: 'passedOn'; passed: PassedOn }
	| { kind: 'announcement'; announcement: Announcement }
	| { kind: 'checkRecord'; call: CheckRecordCall }
	| { kind: 'listener'; message: ListenerMessage }
	| { kind: 'malformed'; reason: string };

const PASSED_ON = 'taskQueuePassedOn';
const LISTENER = 'taskQueueListener';
const RESERVED = [PASSED_ON, 'taskQueueWaitingRun', 'taskQueueCheckedThrough', LISTENER];

/** The most addresses a hold names (a holder keeps at most MAX_LISTENERS). */
export const MAX_LISTENERS = 20;
/** A passed-on delivery is at most what n8n accepts as a body (16 MB). */
const MAX_DELIVERY_CHARS = 16 * 1024 * 1024;

export function readInbox(body: unknown): InboxMessage {
	const keys =
		typeof body === 'object' && body !== null && !Array.isArray(body)
			? RESERVED.filter((key) => key in body)
			: [];
	if (keys.length === 0) return { kind: 'delivery', body };
	if (keys.length > 1)
		return { kind: 'malformed', reason: `More than one message: ${keys.join(', ')}` };
	const message = (() => {
		switch (keys[0]) {
			case PASSED_ON: {
				const passed = readPassedOn((body as IDataObject)[PASSED_ON]);
				return passed && ({ kind: 'passedOn', passed } as const);
			}
			case LISTENER: {
				const listener = readListenerMessage((body as IDataObject)[LISTENER]);
				return listener && ({ kind: 'listener', message: listener } as const);
			}
			case 'taskQueueWaitingRun': {
				const announcement = readAnnouncement(body);
				return announcement && ({ kind: 'announcement', announcement } as const);
			}
			default: {
				const call = readCheckRecordCall(body);
				return call && ({ kind: 'checkRecord', call } as const);
			}
		}
	})();
	return message ?? { kind: 'malformed', reason: `Not a valid ${keys[0]} message` };
}

const isAddress = (value: unknown): value is string =>
	typeof value === 'string' && value.length <= 2000 && /^https?:\/\//.test(value);
const isToken = (value: unknown): value is string =>
	typeof value === 'string' && /^[0-9a-f]{64}$/.test(value);

function readPassedOn(value: unknown): PassedOn | undefined {
	if (typeof value !== 'object' || value === null) return undefined;
	const { from, to, delivery, signature } = value as IDataObject;
	if (!isAddress(from) || !isAddress(to) || !isToken(signature)) return undefined;
	if (typeof delivery !== 'string' || delivery.length > MAX_DELIVERY_CHARS) return undefined;
	return { from, to, delivery, signature };
}

function readListenerMessage(value: unknown): ListenerMessage | undefined {
	if (typeof value !== 'object' || value === null) return undefined;
	const entries = Object.entries(value as IDataObject);
	if (entries.length !== 1) return undefined;
	const [name, fields] = entries[0];
	if (typeof fields !== 'object' || fields === null) return undefined;
	const { url, token, holder, nonce, from, others, signature } = fields as IDataObject;
	if (name === 'join' && isAddress(url)) return { join: { url } };
	if (name === 'leave' && isAddress(url) && isToken(token)) return { leave: { url, token } };
	if (name === 'prove' && isAddress(holder) && isToken(nonce)) return { prove: { holder, nonce } };
	if (
		name === 'hold' &&
		isAddress(from) &&
		isToken(signature) &&
		Array.isArray(others) &&
		others.length <= MAX_LISTENERS &&
		others.every(isAddress)
	)
		return { hold: { from, others: others as string[], signature } };
	return undefined;
}

export function listenerCall(message: ListenerMessage): IDataObject {
	return { [LISTENER]: message } as IDataObject;
}

export function passedOnCall(passed: PassedOn): IDataObject {
	return { [PASSED_ON]: passed } as unknown as IDataObject;
}
