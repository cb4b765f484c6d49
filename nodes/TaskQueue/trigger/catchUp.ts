import type { IDataObject, IWebhookFunctions } from 'n8n-workflow';

import { compareCompletions, completionKey, newestCursor } from '../reader/completions';
import { type CompletionReader, inTurn } from '../reader/reader';
import type { CompletedTask } from '../transport/schemas';
import type { SeenCompletions } from './deliveryChecks';
import { readTriggerCursor, writeTriggerCursor } from './state/staticData';

/** How long a delivery's Catch Up reads at most (the service waits for the answer). */
const CATCH_UP_BUDGET_MS = 20_000;

/** A delivery's records: what was accepted, and which completions to leave out. */
export interface DeliveryRecords {
	seen: SeenCompletions;
	skip: (task: CompletedTask) => boolean;
}

/**
 * Catch Up: a delivery is also a prompt to read the queue from the trigger's cursor (reader/reader.ts,
 * one read at a time per trigger), so completions no delivery brought (lost, or still on their way)
 * are emitted with it, oldest first. Returns what to emit, or undefined when the delivered completion
 * was handed out already (a late or repeated delivery, or one an earlier read listed).
 */
export async function catchUp(
	this: IWebhookFunctions,
	state: IDataObject,
	queueId: number,
	delivered: CompletedTask,
	records: DeliveryRecords,
	scope: string,
): Promise<CompletedTask[] | undefined> {
	return await inTurn(`catch-up:${scope}`, readTriggerCursor(state), async (reader) => {
		if (!reader.cursor) {
			// activated before Catch Up kept a cursor from activation: it starts at the newest listed
			reader.startAt(await newestCursor.call(this, queueId));
			writeTriggerCursor(state, reader.cursor);
			records.seen.claim([delivered]);
			return [delivered];
		}
		if (reader.handedOut(delivered) || records.skip(delivered)) return undefined;
		const found = await readMissed.call(this, reader, queueId, records);
		// the cursor moves only over what the service listed: a delivered completion dated in the
		// future (a caller with the secret) cannot carry it past completions still to come
		writeTriggerCursor(state, reader.cursor);
		const key = completionKey(delivered);
		// not listed yet, or past where a backlog read stopped: emitted now, and skipped when read
		if (!found.some((task) => completionKey(task) === key) && !reader.handedOut(delivered)) {
			reader.handOutAhead(delivered);
			found.push(delivered);
		}
		const withDelivered = found.some((task) => completionKey(task) === key);
		// its copies are answered as duplicates also after a restart (the record in static data)
		if (withDelivered) records.seen.claim([delivered]);
		const missed = found.length - (withDelivered ? 1 : 0);
		if (missed > 0)
			this.logger.info(
				`Task Queue Trigger: caught up ${missed} completion(s) of queue ${queueId} that no delivery had brought yet (lost, or still on their way: a late one is then answered as a duplicate)`,
			);
		return found.sort(compareCompletions);
	});
}

/** The completions after the cursor that are not left out, as far as one delivery's read gets. */
async function readMissed(
	this: IWebhookFunctions,
	reader: CompletionReader,
	queueId: number,
	{ seen, skip }: DeliveryRecords,
): Promise<CompletedTask[]> {
	const found: CompletedTask[] = [];
	try {
		const reading = await reader.read(this, queueId, {
			deadline: Date.now() + CATCH_UP_BUDGET_MS,
			take: async (tasks) => {
				const fresh = tasks.filter((task) => !skip(task));
				// covered by the cursor; also recorded, for a stored cursor that a stale save of static
				// data moved back (and for the re-completion rule)
				seen.claim(fresh);
				for (const task of fresh) found.push(task);
			},
		});
		if (!reading.top)
			this.logger.info(
				`Task Queue Trigger: queue ${queueId} has more completions to catch up than one delivery reads in ${CATCH_UP_BUDGET_MS / 1000} s; read oldest first up to ${reader.cursor?.at ?? 'the start'}, the next delivery goes on from there`,
			);
	} catch (error) {
		// what was read is emitted; the cursor stays after it, so the next delivery reads on
		this.logger.warn(
			`Task Queue Trigger: could not look for missed completions of queue ${queueId} (${(error as Error).message}); the next delivery tries again`,
		);
	}
	return found;
}
