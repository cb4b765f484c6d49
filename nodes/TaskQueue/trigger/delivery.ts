import { createHash, timingSafeEqual } from 'crypto';
import type { IDataObject } from 'n8n-workflow';

import type { CompletedTask } from '../transport/schemas';
import { completedTaskSchema, isCompletedTask } from '../transport/schemas';
import { completionKey } from './completions';

/**
 * Whether the `secret` query parameter of a delivery is the registered one, in constant time.
 * Both sides are hashed first so the comparison runs on equal-length buffers whatever was sent.
 */
export function secretMatches(provided: unknown, expected: string | undefined): boolean {
	if (typeof expected !== 'string' || expected === '') return false;
	const value = Array.isArray(provided) ? provided[0] : provided;
	if (typeof value !== 'string' || value === '') return false;
	const a = createHash('sha256').update(value).digest();
	const b = createHash('sha256').update(expected).digest();
	return timingSafeEqual(a, b);
}

export type DeliveryCheck =
	| { ok: true; task: CompletedTask }
	| { ok: false; reason: string };

/** A delivery must be a completed Task of this queue; anything else is refused without an execution. */
export function checkDelivery(body: unknown, queueId: number): DeliveryCheck {
	if (typeof body !== 'object' || body === null || Array.isArray(body)) {
		return { ok: false, reason: 'The body is not a task object' };
	}
	const status = (body as IDataObject).status;
	if (status !== undefined && status !== 'completed') {
		return { ok: false, reason: `The task's status is "${String(status)}", not "completed"` };
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
 * Static data is the durable record, but n8n loads it from the database at the start of each
 * webhook call and writes it back when the call ends: two copies of one delivery arriving
 * together both see the old list. The in-memory record below closes that window inside one n8n
 * process (claims happen synchronously, between two awaits); across several webhook processes
 * (queue mode) only the static data record applies.
 */
const memory = new Map<string, string[]>();
const MEMORY_SCOPES = 200;

export class SeenCompletions {
	private readonly keys: Set<string>;

	private readonly ids = new Set<number>();

	constructor(
		private readonly state: IDataObject,
		private readonly scope: string,
	) {
		const stored = Array.isArray(state.seen) ? (state.seen as unknown[]).filter((k): k is string => typeof k === 'string') : [];
		this.keys = new Set([...stored, ...(memory.get(scope) ?? [])]);
		for (const key of this.keys) this.ids.add(Number(key.split(':')[0]));
	}

	has(task: CompletedTask): boolean {
		return this.keys.has(completionKey(task));
	}

	/** Whether an earlier completion of the same task was accepted (a forced re-completion). */
	hasTask(task: CompletedTask): boolean {
		return this.ids.has(task.id);
	}

	/** Records the completions as accepted, in static data and in this process's memory. */
	claim(tasks: CompletedTask[]): void {
		if (tasks.length === 0) return;
		const keys = tasks.map(completionKey);
		for (const key of keys) this.keys.add(key);
		for (const task of tasks) this.ids.add(task.id);
		// Read the stored list again: another call may have claimed keys since this one started.
		const stored = Array.isArray(this.state.seen) ? (this.state.seen as string[]) : [];
		this.state.seen = [...stored.filter((k) => !keys.includes(k)), ...keys].slice(-SEEN_LIMIT);
		const remembered = memory.get(this.scope) ?? [];
		memory.delete(this.scope);
		memory.set(this.scope, [...remembered.filter((k) => !keys.includes(k)), ...keys].slice(-SEEN_LIMIT));
		while (memory.size > MEMORY_SCOPES) memory.delete(memory.keys().next().value as string);
	}

	/** The keys claimed in memory by calls running at the same time, not yet in static data. */
	refresh(): void {
		for (const key of memory.get(this.scope) ?? []) {
			this.keys.add(key);
			this.ids.add(Number(key.split(':')[0]));
		}
	}
}
