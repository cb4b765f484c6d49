import type { IPollFunctions, IWebhookFunctions } from 'n8n-workflow';

import { rememberedMap } from '../../runtime/processMemory';
import { getTaskQueueCredentials } from '../../transport';
import { getQueue } from '../../transport/endpoints';
import type { CompletedTask } from '../../transport/schemas';
import { canCarryAddress, mayCarryAddress } from '../../waiting/messages';

type TriggerContext = IWebhookFunctions | IPollFunctions;

/** Each queue's fields where Create and Wait can have written an address, read again after a minute. */
const addressFieldsCache = rememberedMap<string, { fields: Set<string>; at: number }>(
	'queueAddressFields',
);
const ADDRESS_FIELDS_TTL_MS = 60_000;

/**
 * The queue's read-only text and link fields: the only places a genuine address can be. Text
 * shaped like an address in a field people fill in is theirs, and diverts nothing.
 */
async function addressFields(this: TriggerContext, queueId: number): Promise<Set<string>> {
	const { baseUrl, organizationId, apiPaths } = await getTaskQueueCredentials.call(this);
	const key = `${baseUrl}|${organizationId}|${apiPaths}|${queueId}`;
	const cached = addressFieldsCache.get(key);
	if (cached && Date.now() - cached.at < ADDRESS_FIELDS_TTL_MS) return cached.fields;
	const queue = await getQueue.call(this, queueId);
	const fields = new Set<string>(
		(queue.data ?? []).filter((block) => canCarryAddress(block)).map((block) => block.id),
	);
	addressFieldsCache.set(key, { fields, at: Date.now() });
	return fields;
}

/** The fields of each queue of these tasks, or the error that kept them from being read. */
export async function addressFieldsByQueue(
	this: TriggerContext,
	tasks: CompletedTask[],
): Promise<Map<number, Set<string> | Error>> {
	const byQueue = new Map<number, Set<string> | Error>();
	for (const task of tasks) {
		if (byQueue.has(task.queue_id) || !mayCarryAddress(task)) continue;
		try {
			byQueue.set(task.queue_id, await addressFields.call(this, task.queue_id));
		} catch (error) {
			byQueue.set(task.queue_id, error as Error);
		}
	}
	return byQueue;
}
