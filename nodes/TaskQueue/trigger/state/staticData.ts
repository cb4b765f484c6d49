import type { IDataObject } from 'n8n-workflow';

import type { Cursor } from '../../reader/completions';
import { readCursor } from '../../reader/completions';
import type { CompletedTask } from '../../transport/schemas';
import { isCompletedTask } from '../../transport/schemas';

// The one owner of the triggers' static data (the node's object in the workflow's static data): a
// typed reader and writer per key, and no other file touches a key. (Its own folder, so that both
// trigger/ and trigger/relay/ import it without a loop between folders.)
//
// How n8n saves it, the rule everything below follows. n8n loads a workflow's static data when a
// call starts and writes the whole object back when the call ends, if it changed:
// - in a hook (activation, deactivation): saved when the activation (or deactivation) ends;
// - in webhook(): saved when the call answers, but n8n 2.x loses what webhook() wrote when n8n
//   itself answers after starting an execution, so a webhook() that writes answers the caller
//   itself (`noWebhookResponse`) and returns its items (docs/triggers.md, "Static data in webhook()");
// - in poll(): saved only when the poll emits items: the Check for Lost Completions therefore
//   sends its record to its own trigger's address (trigger/relay/checkRecord.ts).
// Copies saved by two calls at once: the last one wins (docs/scaling.md says why each key copes).

// Every key, what it holds, who writes it and in which process: docs/triggers.md, "What the
// triggers keep in static data".

/** What a Task Queue Trigger registered (`registration`). */
export interface Registration {
	queueId: number;
	/** This node's webhook URL, without the secret. */
	url: string;
	secret: string;
	/** The target that was there before (set by someone else) and is put back on deactivation. */
	previousTarget: string | null;
	/** A registration for "listen for test event" (n8n keeps its static data apart). */
	test: boolean;
	/** Another Task Queue Trigger of this n8n holds the queue: this one listens, reading it itself (listener.ts). */
	listening: boolean;
	/** Made up from a signed secret while n8n has not saved the activation yet (never stored). */
	notSaved?: boolean;
}

export function readRegistration(state: IDataObject): Registration | undefined {
	const value = state.registration as Partial<Registration> | undefined;
	if (!value || typeof value !== 'object') return undefined;
	if (
		typeof value.queueId !== 'number' ||
		typeof value.secret !== 'string' ||
		typeof value.url !== 'string'
	) {
		return undefined;
	}
	return {
		queueId: value.queueId,
		url: value.url,
		secret: value.secret,
		previousTarget:
			typeof value.previousTarget === 'string' && value.previousTarget !== ''
				? value.previousTarget
				: null,
		test: value.test === true,
		listening: value.listening === true,
	};
}

export function writeRegistration(state: IDataObject, registration: Registration): Registration {
	const { queueId, url, secret, previousTarget, test, listening } = registration;
	state.registration = { queueId, url, secret, previousTarget, test, listening };
	return registration;
}

/** Deactivated: the registration, Catch Up's cursor and the listeners go (the check's record stays). */
export function forgetRegistration(state: IDataObject): void {
	delete state.registration;
	delete state.cursor;
	delete state.listeners;
}

/** Catch Up's cursor of the Task Queue Trigger. */
export function readTriggerCursor(state: IDataObject): Cursor | undefined {
	return readCursor(state.cursor);
}

export function writeTriggerCursor(state: IDataObject, cursor: Cursor | undefined): void {
	if (cursor) state.cursor = cursor as unknown as IDataObject;
}

/** The addresses a holder nudges (`listeners`); an entry of an older format keeps its address only. */
export function listenersOf(state: IDataObject): string[] {
	if (!Array.isArray(state.listeners)) return [];
	return (state.listeners as unknown[])
		.map((l) => (typeof l === 'object' && l !== null ? (l as IDataObject).url : l))
		.filter((url): url is string => typeof url === 'string');
}

export function keepListeners(state: IDataObject, listeners: string[]): void {
	if (listeners.length > 0) state.listeners = listeners;
	else delete state.listeners;
}

/** The completion keys kept for deduplication (`seen`). */
export function readSeen(state: IDataObject): string[] {
	return Array.isArray(state.seen)
		? (state.seen as unknown[]).filter((k): k is string => typeof k === 'string')
		: [];
}

export function writeSeen(state: IDataObject, keys: string[]): void {
	state.seen = keys;
}

/** Which process handled the last delivery that wrote static data (`lastDelivery`). */
export function readLastDelivery(
	state: IDataObject,
): { process?: unknown; at?: unknown } | undefined {
	return state.lastDelivery as { process?: unknown; at?: unknown } | undefined;
}

export function writeLastDelivery(state: IDataObject, process: string, at: number): void {
	state.lastDelivery = { process, at };
}

/** Where Check for Lost Completions restarts (`lostCompletionCheck`), as stored (relay/checkRecord.ts reads it). */
export function readCheckRecordValue(state: IDataObject): unknown {
	return state.lostCompletionCheck;
}

export function writeCheckRecordValue(
	state: IDataObject,
	record: { queueId: number; at: string; ids: number[]; wake?: Array<{ url: string; at: number }> },
): void {
	const { wake, ...point } = record; // with its late-commit window (floor, recent) when it has one
	state.lostCompletionCheck = { ...point, ...(wake?.length ? { wake } : {}) };
}

/** Runs announced with a time to wake (`announcements`) until a record lists them (relay/deadlines.ts). */
export const readAnnouncedWakesValue = (state: IDataObject): unknown => state.announcements;

export const writeAnnouncedWakesValue = (state: IDataObject, wakes: object[]) =>
	Object.assign(state, { announcements: wakes });

/** The Poll Trigger's state: its queue, cursor, and completions to pass on again. */
export interface PollState {
	queueId: unknown;
	cursor: Cursor | undefined;
	unsettled: CompletedTask[];
}

export function readPollState(state: IDataObject): PollState {
	return {
		queueId: state.queueId,
		cursor: readCursor(state.cursor),
		unsettled: (Array.isArray(state.unsettled) ? state.unsettled : []).filter(isCompletedTask),
	};
}

export function writePollState(
	state: IDataObject,
	poll: { queueId: number; cursor?: Cursor; unsettled?: CompletedTask[] },
): void {
	state.queueId = poll.queueId;
	if (poll.cursor) state.cursor = poll.cursor as unknown as IDataObject;
	if (poll.unsettled) state.unsettled = poll.unsettled as unknown as IDataObject[];
}
