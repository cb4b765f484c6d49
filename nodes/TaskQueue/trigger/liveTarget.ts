import type { IHookFunctions, IPollFunctions, IWebhookFunctions } from 'n8n-workflow';

import { getWebhookTarget } from '../transport/endpoints';
import { rememberedMap } from '../runtime/processMemory';

// The queue's live webhook target as a Task Queue Trigger reads it to check what a holder sends it
// (listener.ts): the holder's address and the secret that signs its pass-ons and hand-overs.

export type TriggerContext = IHookFunctions | IWebhookFunctions | IPollFunctions;

const holderTargets = rememberedMap<
	string,
	{ target: string | null; readAt: number; forcedAt: number }
>('holderTargets');
const TARGET_MAX_AGE_MS = 60_000;
const REREAD_GAP_MS = 2_000;

/**
 * The queue's live target; read again when older than a minute, or when `stale` (what was read does
 * not fit a message) at most once every 2 s: a caller cannot make this trigger read the service more.
 */
export async function liveTarget(
	this: TriggerContext,
	queueId: number,
	stale = false,
): Promise<string | null> {
	const node = this.getNode();
	const key = `${this.getWorkflow().id}:${node.id}:${node.webhookId}:${queueId}`;
	const cached = holderTargets.get(key);
	const now = Date.now();
	if (cached && !stale && now - cached.readAt < TARGET_MAX_AGE_MS) return cached.target;
	if (cached && stale && now - cached.forcedAt < REREAD_GAP_MS) return cached.target;
	const target = await getWebhookTarget.call(this, queueId);
	holderTargets.set(key, {
		target,
		readAt: Date.now(),
		forcedAt: stale ? now : (cached?.forcedAt ?? 0),
	});
	return target;
}

/** Reads the live target until `accepts` holds for it (at most one read again); false otherwise. */
export async function liveTargetThat(
	this: TriggerContext,
	queueId: number,
	accepts: (target: string) => boolean,
): Promise<string | undefined> {
	for (const stale of [false, true]) {
		const target = await liveTarget.call(this, queueId, stale);
		if (target && accepts(target)) return target;
	}
	return undefined;
}

/** Forgets what was read (the queue now points at this trigger). */
export function forgetLiveTargets(): void {
	holderTargets.clear();
}
