import { createHmac, timingSafeEqual } from 'crypto';

import type { IDataObject, IWebhookFunctions } from 'n8n-workflow';

import { rememberedMap } from '../../runtime/processMemory';
import { createTask } from '../../transport/endpoints';
import type { CompletedTask } from '../../transport/schemas';
import type { ResumeAddress, TaggedParts } from '../messages';
import { itemOfThisWait, readExtraMark } from '../messages';

// Asking again (Several People per Item): a waiting run creates a further task for an item while it
// waits, when it can no longer sign addresses or keep the task's id. The task carries the item's
// address with a mark after `#` (the trigger calls the address without it): the slot (the item's
// nth task) and an HMAC of the run, the item and the slot under the credential's key. A person
// cannot make a mark; one copied into another task makes that task's answer one more answer to the
// item, counted as anyone's (once per person, never for a Never Count person).

function extraMarkOf(key: string, parts: TaggedParts, slot: number): string {
	const { executionId, nodeId, item, count, inputs, queueId, createdAt } = parts;
	return createHmac('sha256', key)
		.update(
			['task-queue:extra', executionId, nodeId, item, count, inputs, queueId, createdAt, slot].join(
				'\n',
			),
		)
		.digest('hex')
		.slice(0, 32);
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

/** Whether an address carries a mark this run made (with this key) for one of its items' further tasks. */
export function isMarkedByRun(address: ResumeAddress, key: string): boolean {
	if (!address.extra || key === '') return false;
	return timingSafeEqual(
		Buffer.from(address.extra.mark, 'hex'),
		Buffer.from(extraMarkOf(key, address, address.extra.slot), 'hex'),
	);
}

type Wait = Omit<ResumeAddress, 'url' | 'item'>;

/**
 * The item a listed task answers when it is one of the run's further tasks: its address field holds
 * an address of this wait with a mark this run made for that item.
 */
export function extraReader(
	wait: Wait,
	resumeField: string,
	key: string,
): (task: CompletedTask) => number | undefined {
	// a string test per listed task (a read lists up to 20,000): only this run's marked addresses are parsed
	const ofThisRun = `/${wait.executionId}/`;
	return (task) => {
		const value = ((task.data ?? {}) as IDataObject)[resumeField];
		if (typeof value !== 'string' || !value.includes('#x=') || !value.includes(ofThisRun))
			return undefined;
		const item = itemOfThisWait(value.replace(/#.*$/, ''), wait);
		const extra = readExtraMark(value.slice(value.indexOf('#')));
		if (item === undefined || !extra) return undefined;
		return isMarkedByRun({ ...wait, item, extra, url: '' }, key) ? item : undefined;
	};
}

/** Further tasks this process has created, by run, item and slot: one each, whatever calls repeat. */
const asked = rememberedMap<string, number>('askedAgain');

/**
 * Asks another person about an item: one more task with the item's values and its marked address.
 * Returns the task's id, or undefined when this process asked for that slot already.
 */
export async function askAgain(
	this: IWebhookFunctions,
	wait: Wait,
	ask: { item: number; slot: number; values: IDataObject; resumeField: string; key: string },
): Promise<number | undefined> {
	const slotKey = `${wait.executionId}/${wait.nodeId}/${wait.createdAt}/${ask.item}/${ask.slot}`;
	if (asked.has(slotKey)) return undefined;
	const address = String(ask.values[ask.resumeField] ?? '');
	const data = {
		...ask.values,
		[ask.resumeField]: markedAddress(address, ask.key, { ...wait, item: ask.item }, ask.slot),
	};
	const { response } = await createTask.call(this, wait.queueId, data);
	const id = Number((response.body as IDataObject | undefined)?.id);
	asked.set(slotKey, Date.now());
	return Number.isSafeInteger(id) ? id : undefined;
}
