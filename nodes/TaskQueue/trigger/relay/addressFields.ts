import type { IPollFunctions, IWebhookFunctions } from 'n8n-workflow';

import { rememberedMap } from '../../runtime/processMemory';
import { getTaskQueueCredentials } from '../../transport';
import { getQueue } from '../../transport/endpoints';
import { canCarryAddress } from '../../helpers/blockModel';

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

/** Reads each queue's address fields at most once per call; a failed read is returned, not thrown. */
export function addressFieldsReader(
	context: TriggerContext,
): (queueId: number) => Promise<Set<string> | Error> {
	const reads = new Map<number, Promise<Set<string> | Error>>();
	return async (queueId) => {
		let fields = reads.get(queueId);
		if (!fields) {
			fields = addressFields.call(context, queueId).catch((error: unknown) => error as Error);
			reads.set(queueId, fields);
		}
		return await fields;
	};
}
