import type { IHookFunctions, IPollFunctions, IWebhookFunctions } from 'n8n-workflow';

import { getWebhookTarget } from '../transport/endpoints';
import { rememberedMap } from '../runtime/processMemory';

// The queue's live webhook target as a Task Queue Trigger reads it when nudged to look (listener.ts).

export type TriggerContext = IHookFunctions | IWebhookFunctions | IPollFunctions;

const liveTargets = rememberedMap<string, { target: Promise<string | null>; readAt: number }>(
	'liveTargets',
);
/** A caller cannot make a trigger read its queue's webhook more often than this. */
const REREAD_GAP_MS = 2_000;
/** A look after this long reads the queue's webhook again. */
export const LOOK_GAP_MS = REREAD_GAP_MS + 100;

/** The queue's live target, read again when the last read is more than 2 s old. */
export async function liveTarget(this: TriggerContext, queueId: number): Promise<string | null> {
	const node = this.getNode();
	const key = `${this.getWorkflow().id}:${node.id}:${node.webhookId}:${queueId}`;
	const cached = liveTargets.get(key);
	if (cached && Date.now() - cached.readAt < REREAD_GAP_MS) return await cached.target;
	// calls at once share one read
	const target = getWebhookTarget.call(this, queueId);
	liveTargets.set(key, { target, readAt: Date.now() });
	// a failed read is not kept: the next call reads again
	target.catch(() => liveTargets.delete(key));
	return await target;
}

/** Forgets what was read (the queue now points at this trigger). */
export function forgetLiveTargets(): void {
	liveTargets.clear();
}
