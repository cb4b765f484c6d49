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
//   one execution per completion (duplicates answered without one).
// - announcement: a waiting Create and Wait run of this n8n names its tasks. Needs the secret.
//   Changes only the process's memory of runs (trigger/relay/knownRuns.ts), bounded there; only one
//   signed with the trigger's credential's key can keep a completion from being emitted.
// - checkRecord: this trigger's own Check for Lost Completions says where it stands. Needs the
//   secret and a signature with the trigger's credential's key. Moves the stored record
//   (trigger/relay/checkRecord.ts); a record later than now is not followed.
// - join: another Task Queue Trigger of this n8n on the queue asks the holder to nudge it
//   (trigger/holder.ts). Needs the secret; the holder nudges the address once and keeps it only
//   when a trigger on this queue answers there. Keeps an address, never a secret.
// - nudge: carries no data. Anyone may send it: a trigger listening through the holder reads the
//   queue from its own cursor (one read at a time, at most one more waiting), so what it emits is
//   what the service lists; `look` also reads the queue's webhook (at most once every 2 s);
//   `answerOnly` reads nothing and writes nothing (the holder's check of a joining address).

export type InboxMessage =
	| { kind: 'delivery'; body: unknown }
	| { kind: 'announcement'; announcement: Announcement }
	| { kind: 'checkRecord'; call: CheckRecordCall }
	| { kind: 'join'; url: string }
	| { kind: 'nudge'; look: boolean; answerOnly: boolean }
	| { kind: 'malformed'; reason: string };

const JOIN = 'taskQueueListener';
const NUDGE = 'taskQueueNudge';
const RESERVED = ['taskQueueWaitingRun', 'taskQueueCheckedThrough', JOIN, NUDGE];

export function readInbox(body: unknown): InboxMessage {
	const keys =
		typeof body === 'object' && body !== null && !Array.isArray(body)
			? RESERVED.filter((key) => key in body)
			: [];
	if (keys.length === 0) return { kind: 'delivery', body };
	if (keys.length > 1)
		return { kind: 'malformed', reason: `More than one message: ${keys.join(', ')}` };
	const value = (body as IDataObject)[keys[0]] as IDataObject | undefined;
	const message = (() => {
		switch (keys[0]) {
			case JOIN: {
				const url = typeof value === 'object' && value !== null ? value.join : undefined;
				return isAddress(url) ? ({ kind: 'join', url } as const) : undefined;
			}
			case NUDGE:
				return typeof value === 'object' && value !== null
					? ({
							kind: 'nudge',
							look: value.look === true,
							answerOnly: value.answerOnly === true,
						} as const)
					: undefined;
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

export function joinCall(url: string): IDataObject {
	return { [JOIN]: { join: url } };
}

/** A nudge: `look` also reads the queue's webhook; `answerOnly` (the holder's check of a joining address) reads nothing. */
export function nudgeCall(how: 'read' | 'look' | 'answerOnly' = 'read'): IDataObject {
	return { [NUDGE]: how === 'read' ? {} : { [how]: true } };
}
