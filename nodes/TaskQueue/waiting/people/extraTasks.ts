import type { IDataObject, IWebhookFunctions } from 'n8n-workflow';

import { rememberedMap } from '../../runtime/processMemory';
import { type Keys, sign, verify } from '../../helpers/signing';
import { createTask } from '../../transport/endpoints';
import type { CompletedTask } from '../../transport/schemas';
import type { ResumeAddress, TaggedParts } from '../messages';
import { addressFields, itemOfThisWait, readExtraMark } from '../messages';

// Asking again (Several People per Item): a waiting run creates a further task for an item while it
// waits, when it can no longer sign addresses or keep the task's id. The task carries the item's
// address with a mark after `#` (the trigger calls the address without it): the slot (the item's
// nth task) and an HMAC of the run, the item and the slot under the run's own secret (memory.ts),
// kept with the execution by n8n: whoever holds the API key cannot make a mark, and a key change
// leaves marks as they were. Anyone who sees the task can copy it: so a marked task counts only when
// it shows the content the run sent for the item (furtherTasks), and only the first such task of its
// slot (a copy is made after the task it copies). Any other is an ordinary completion.

function extraMarkOf(key: string, parts: TaggedParts, slot: number): string {
	return sign(key, 'extra', [...addressFields(parts), slot], 32);
}

/** The item's address, marked for its further task number `slot`. */
export function markedAddress(
	address: string,
	key: string,
	parts: TaggedParts,
	slot: number,
): string {
	return `${address.replace(/#.*$/, '')}#x=${slot}.${extraMarkOf(key, parts, slot)}`;
}

type Wait = Omit<ResumeAddress, 'url' | 'item'>;

/** A listed task carrying a mark this run made: the item and the slot it was made for. */
export interface MarkedTask {
	item: number;
	slot: number;
}

/** Reads a listed task's mark: the item and slot when this run made it, undefined otherwise. */
export function extraReader(
	wait: Wait,
	resumeField: string,
	keys: Keys,
): (task: CompletedTask) => MarkedTask | undefined {
	// a string test per listed task (a read lists up to 20,000): only this run's marked addresses are parsed
	const ofThisRun = `/${wait.executionId}/`;
	return (task) => {
		const value = ((task.data ?? {}) as IDataObject)[resumeField];
		if (typeof value !== 'string' || !value.includes('#x=') || !value.includes(ofThisRun))
			return undefined;
		const item = itemOfThisWait(value.replace(/#.*$/, ''), wait);
		const extra = readExtraMark(value.slice(value.indexOf('#')));
		if (item === undefined || !extra) return undefined;
		const fields = [...addressFields({ ...wait, item }), extra.slot];
		return verify(extra.mark, keys, 'extra', fields, 32) ? { item, slot: extra.slot } : undefined;
	};
}

/** Whether two JSON values are the same (key order aside). */
function sameJson(a: unknown, b: unknown): boolean {
	if (typeof a !== 'object' || typeof b !== 'object' || !a || !b) return a === b;
	const keys = Object.keys(a);
	if (Array.isArray(a) !== Array.isArray(b) || keys.length !== Object.keys(b).length) return false;
	return keys.every((k) => sameJson((a as IDataObject)[k], (b as IDataObject)[k]));
}

/**
 * Whether a task shows what the run sent for its item: every value the run sent, but the address
 * (whose mark is checked apart) and the fields people answer in, stored unchanged.
 */
function showsSentContent(task: CompletedTask, sent: IDataObject, answerFields: string[]): boolean {
	const data = (task.data ?? {}) as IDataObject;
	return Object.entries(sent).every(
		([field, value]) =>
			answerFields.includes(field) ||
			value === null ||
			value === undefined ||
			sameJson(data[field], value),
	);
}

/**
 * The run's further tasks among listed completions it did not create by id: by task id, the item
 * and slot each answers. A marked task counts when it shows the content sent for the item and is the first
 * answered task of its slot (a copy is made after the task it copies).
 */
export function furtherTasks(
	completions: CompletedTask[],
	markOf: (task: CompletedTask) => MarkedTask | undefined,
	sentValues: (item: number) => IDataObject | undefined,
	answerFields: string[],
): Map<number, MarkedTask> {
	const firstOfSlot = new Map<string, { id: number } & MarkedTask>();
	for (const task of completions) {
		const marked = markOf(task);
		const sent = marked && sentValues(marked.item);
		if (!marked || !sent || !showsSentContent(task, sent, answerFields)) continue;
		// in queue mode each process that handled a call may have created a task for the slot: the
		// first answered one counts, whichever process created it
		const slotKey = `${marked.item}/${marked.slot}`;
		const first = firstOfSlot.get(slotKey);
		if (!first || task.id < first.id) firstOfSlot.set(slotKey, { id: task.id, ...marked });
	}
	return new Map([...firstOfSlot.values()].map(({ id, item, slot }) => [id, { item, slot }]));
}

/**
 * Further tasks this process asked for, by run, then by item and slot: the id it created, or CLAIMED
 * while the create is on its way, so that calls at once create one task per slot, whatever calls
 * repeat. Per run: another run's asks never push a run's own slots out (the runs used last stay).
 */
const asked = rememberedMap<string, Map<string, number>>('askedAgain');
const CLAIMED = 0;

/** The further tasks this process asked for in a run: by `item/slot`, the id (CLAIMED while created). */
export function askedInRun(wait: Wait): Map<string, number> {
	const run = `${wait.executionId}/${wait.nodeId}/${wait.createdAt}`;
	const slots = asked.get(run) ?? new Map<string, number>();
	asked.set(run, slots); // the newest: a run in use is the last forgotten
	return slots;
}

/** The further tasks this process created for the run (created, not only claimed): their item and slot. */
export function askedTasks(wait: Wait): Array<[number, MarkedTask]> {
	return [...askedInRun(wait)]
		.filter(([, id]) => id !== CLAIMED)
		.map(([key, id]) => [id, { item: Number(key.split('/')[0]), slot: Number(key.split('/')[1]) }]);
}

/** The further tasks a run's list of its own holds at most (more are known by their mark after a restart). */
const MAX_OWN = 200;

/**
 * The further tasks this process created for the run, as `id.item.slot,...~mark`, signed with the
 * run's secret: its answers carry the list, the queue's trigger keeps it with the run's wake (its
 * check's record: static data) and hands it back in each call, so a restarted process knows the
 * run's open tasks by id again. Facts only: an older list (anyone the run answered can replay it)
 * adds only tasks that are the run's.
 */
export function ownTasksList(wait: Wait, key: string): string | undefined {
	const own = askedTasks(wait).slice(0, MAX_OWN);
	const list = own.map(([id, { item, slot }]) => `${id}.${item}.${slot}`).join(',');
	return list && `${list}~${sign(key, 'own-tasks', [list], 32)}`;
}

/** Takes back a list of the run's own further tasks a call hands in (`ownTasksList`), if the run signed it. */
export function restoreOwnTasks(wait: Wait, key: string, value: unknown): void {
	const [list, mark] = typeof value === 'string' ? value.split('~') : [];
	if (!list || !verify(mark, key, 'own-tasks', [list], 32)) return;
	const slots = askedInRun(wait);
	for (const [id, item, slot] of list.split(',').map((entry) => entry.split('.').map(Number)))
		if (!slots.has(`${item}/${slot}`)) slots.set(`${item}/${slot}`, id);
}

/**
 * Asks another person about an item: one more task with the item's values and its marked address.
 * Returns the task's id, or undefined when this process asked for that slot already. The slot is
 * claimed before the create and freed if the create fails.
 */
export async function askAgain(
	this: IWebhookFunctions,
	wait: Wait,
	ask: { item: number; slot: number; values: IDataObject; resumeField: string; key: string },
): Promise<number | undefined> {
	const slots = askedInRun(wait);
	const slotKey = `${ask.item}/${ask.slot}`;
	if (slots.has(slotKey)) return undefined;
	slots.set(slotKey, CLAIMED);
	const address = String(ask.values[ask.resumeField] ?? '');
	const data = {
		...ask.values,
		[ask.resumeField]: markedAddress(address, ask.key, { ...wait, item: ask.item }, ask.slot),
	};
	let created: Awaited<ReturnType<typeof createTask>> | undefined;
	try {
		created = await createTask.call(this, wait.queueId, data);
	} finally {
		if (!created) slots.delete(slotKey); // the create failed: a later call may ask for the slot
	}
	const id = Number((created.response.body as IDataObject | undefined)?.id);
	if (Number.isSafeInteger(id)) slots.set(slotKey, id);
	return Number.isSafeInteger(id) ? id : undefined;
}
