import { randomUUID } from 'crypto';
import type { IDataObject } from 'n8n-workflow';

import type { CompletedTask } from '../transport/schemas';
import { completedTaskSchema, isCompletedTask } from '../transport/schemas';
import { completionKey } from '../reader/completions';
import { sameSecret } from '../helpers/signing';
import { BoundedSet } from '../runtime/bounded';
import { rememberedMap, rememberedSet } from '../runtime/processMemory';
import { readLastDelivery, readSeen, writeLastDelivery, writeSeen } from './state/staticData';

/**
 * Whether the `secret` query parameter of a delivery is the registered one, in constant time.
 * Both sides are hashed first so the comparison runs on equal-length buffers whatever was sent.
 */
export function secretMatches(provided: unknown, expected: string | undefined): boolean {
	if (typeof expected !== 'string' || expected === '') return false;
	const value = Array.isArray(provided) ? provided[0] : provided;
	if (typeof value !== 'string' || value === '') return false;
	return sameSecret(value, expected);
}

export type DeliveryCheck = { ok: true; task: CompletedTask } | { ok: false; reason: string };

/** A delivery must be a completed Task of this queue; anything else is refused without an execution. */
export function checkDelivery(body: unknown, queueId: number): DeliveryCheck {
	if (typeof body !== 'object' || body === null || Array.isArray(body)) {
		return { ok: false, reason: 'The body is not a task object' };
	}
	const status = (body as IDataObject).status;
	if (status !== undefined && status !== 'completed') {
		// the value is the caller's: quoted, cut short and escaped before it reaches a log line
		const shown = JSON.stringify(String(status).slice(0, 40));
		return { ok: false, reason: `The task's status is ${shown}, not "completed"` };
	}
	if (!isCompletedTask(body)) {
		const issues = completedTaskSchema.safeParse(body).error?.issues ?? [];
		const problem = issues
			.slice(0, 3)
			.map((issue) => `${issue.path.join('.') || '(body)'}: ${issue.message}`)
			.join('; ');
		return { ok: false, reason: `The body is not a completed task (${problem})` };
	}
	if (body.queue_id !== queueId) {
		return { ok: false, reason: `The task belongs to queue ${body.queue_id}, not ${queueId}` };
	}
	return { ok: true, task: body };
}

/** How many completion keys are kept for deduplication (in static data and in memory). */
export const SEEN_LIMIT = 1000;

/**
 * Deliveries already accepted, to answer duplicates without an execution.
 *
 * Each n8n process remembers the keys it accepted (per registration, synchronously, between two
 * awaits): a copy of a delivery arriving while the first is still being handled is a duplicate.
 * When `durable`, the keys also go to static data, which outlives the process; but n8n loads
 * static data from the database at the start of each webhook call and writes it back when the
 * call ends, so two copies arriving together both see the old list: across several webhook
 * processes (queue mode) only that record applies, with that race.
 */
const memory = rememberedMap<string, BoundedSet<string>>('seenDeliveryScopes');

function remembered(scope: string): BoundedSet<string> {
	let keys = memory.get(scope);
	if (!keys) {
		keys = new BoundedSet(SEEN_LIMIT);
		memory.set(scope, keys);
	}
	return keys;
}

export class SeenCompletions {
	private readonly memory: BoundedSet<string>;

	private readonly stored: Set<string>;

	constructor(
		private readonly state: IDataObject,
		scope: string,
		private readonly durable: boolean,
	) {
		this.memory = remembered(scope);
		this.stored = new Set(readSeen(state));
	}

	has(task: CompletedTask): boolean {
		const key = completionKey(task);
		return this.memory.has(key) || this.stored.has(key);
	}

	/** Whether an earlier completion of the same task was accepted (a forced re-completion). */
	hasTask(task: CompletedTask): boolean {
		const prefix = `${task.id}:`;
		for (const keys of [this.memory, this.stored]) {
			for (const key of keys) if (key.startsWith(prefix)) return true;
		}
		return false;
	}

	/** Records the completions as accepted: in this process's memory, and in static data if durable. */
	claim(tasks: CompletedTask[]): void {
		if (tasks.length === 0) return;
		const keys = tasks.map(completionKey);
		for (const key of keys) this.memory.add(key);
		if (!this.durable) return;
		for (const key of keys) this.stored.add(key);
		this.persist();
	}

	/**
	 * Writes the newest keys of static data and of this process's memory. n8n saves a call's static
	 * data whole, so a concurrent call's save drops the keys of another; each save writes them again,
	 * and a late copy after a restart is still known. Called again just before webhook() returns.
	 */
	persist(): void {
		if (!this.durable) return;
		writeSeen(this.state, newestKeys([...readSeen(this.state), ...this.memory]));
	}
}

/** The SEEN_LIMIT newest completion keys (`id:time`), oldest first. */
function newestKeys(keys: string[]): string[] {
	const timeOf = (key: string) => key.slice(key.indexOf(':') + 1);
	const idOf = (key: string) => Number(key.slice(0, key.indexOf(':')));
	return [...new Set(keys)]
		.sort((a, b) => timeOf(a).localeCompare(timeOf(b)) || idOf(a) - idOf(b))
		.slice(-SEEN_LIMIT);
}

/** This n8n process, as static data names it (a new one at each start). */
const PROCESS_ID = randomUUID();
/** When this process first handled a delivery of a registration, by scope. */
const firstHandledHere = rememberedMap<string, number>('firstHandledHere');
const warnedScopes = rememberedSet<string>('warnedScopes');
const SEVERAL_PROCESSES_WINDOW_MS = 60_000;
/** Slack for the clocks of processes on one host; a restarted n8n takes longer than this to come back. */
const CLOCK_SLACK_MS = 2_000;

/**
 * Whether another process has handled a delivery of this registration since this process began to
 * handle them, within the last minute: deliveries then reach several webhook processes (queue mode
 * behind a round-robin proxy), where the records kept in static data can be overwritten by another
 * process's save. A process that ran before a restart wrote its last record before this one began,
 * so a restart alone does not count. Reads `lastDelivery` (written by `markDeliveryHandledHere`)
 * and writes nothing there, so a dropped delivery saves no static data. True once per registration.
 */
export function deliveriesReachSeveralProcesses(
	state: IDataObject,
	scope: string,
	now = Date.now(),
): boolean {
	const previous = readLastDelivery(state);
	let first = firstHandledHere.get(scope);
	if (first === undefined) {
		first = now;
		firstHandledHere.set(scope, now);
	}
	const another =
		typeof previous?.process === 'string' &&
		previous.process !== PROCESS_ID &&
		typeof previous.at === 'number' &&
		previous.at >= first - CLOCK_SLACK_MS &&
		now - previous.at < SEVERAL_PROCESSES_WINDOW_MS;
	if (!another || warnedScopes.has(scope)) return false;
	warnedScopes.add(scope);
	return true;
}

/** Records in static data that this process handled a delivery (only where static data is written anyway). */
export function markDeliveryHandledHere(state: IDataObject, now = Date.now()): void {
	writeLastDelivery(state, PROCESS_ID, now);
}
