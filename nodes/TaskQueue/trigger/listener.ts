import type { IDataObject, IHookFunctions, IPollFunctions, IWebhookFunctions } from 'n8n-workflow';

import {
	classifyTarget,
	isTriggerOfThisN8n,
	secretOf,
	targetWithSecret,
	withoutQuery,
} from '../helpers/webhookTarget';
import { setWebhookTarget } from '../transport/endpoints';
import { getTaskQueueCredentials, postToThisN8n } from '../transport';
import type { JoinOutcome } from './holder';
import { admitListener, fullListMessage, PROOF_TIMEOUT_MS } from './holder';
import type { PassedOn } from './inbox';
import { hashOf, sign, verify } from '../helpers/signing';
import { listenerCall } from './inbox';
import type { TriggerContext } from './liveTarget';
import { forgetLiveTargets, liveTarget, liveTargetThat } from './liveTarget';
import { keepListeners } from './state/staticData';

// A Task Queue Trigger that listens through the one holding its queue's webhook (holder.ts has why
// and the holder's side): it joins and leaves, proves itself, checks what the holder passes on, and
// takes the queue when the holder hands it over.

/** A join waits for the holder to prove the joiner at its address. */
const JOIN_TIMEOUT_MS = 15_000;

/** The token a listener leaves with: only its credential's key makes it. */
async function leaveToken(this: TriggerContext, ownUrl: string): Promise<string> {
	const { apiKey } = await getTaskQueueCredentials.call(this);
	return sign(apiKey, 'leave', [withoutQuery(ownUrl)]);
}

/** A listener's own registration, as these calls need it. */
interface Own {
	queueId: number;
	url: string;
	secret: string;
}

/** The secret of `holder` as the queue's live target holds it, when it names that holder (not this trigger). */
async function holderSecret(
	this: IWebhookFunctions,
	own: { queueId: number; url: string },
	holder: string,
): Promise<string | undefined> {
	const target = await liveTargetThat.call(
		this,
		own.queueId,
		(t) => withoutQuery(t) === withoutQuery(holder) && classifyTarget(t, own.url) !== 'mine',
	);
	return (target && secretOf(target)) || undefined;
}

/**
 * Answers the holder's `prove`: only while the queue's live target is that holder (and not this
 * trigger), with the holder's secret as the target holds it. Needs nothing of static data, so it
 * works while n8n is still activating this trigger.
 */
export async function answerProof(
	this: IWebhookFunctions,
	own: { queueId: number; url: string },
	prove: { holder: string; nonce: string },
): Promise<{ status: number; body: IDataObject }> {
	const secret = await holderSecret.call(this, own, prove.holder);
	if (!secret) return { status: 409, body: { message: 'Not listening through that trigger' } };
	return {
		status: 200,
		body: {
			proof: sign(secret, 'listener-proof', [prove.nonce, withoutQuery(own.url)]),
			leaveHash: hashOf(await leaveToken.call(this, own.url)),
		},
	};
}

/**
 * Whether a passed-on delivery comes from the queue's holder: addressed to this trigger, from the
 * address the queue's live target names (not this trigger), signed with the secret it holds.
 */
export async function isFromHolder(
	this: IWebhookFunctions,
	own: Own,
	passed: PassedOn,
): Promise<boolean> {
	if (withoutQuery(passed.to) !== withoutQuery(own.url)) return false;
	if (withoutQuery(passed.from) === withoutQuery(own.url)) return false;
	for (const stale of [false, true]) {
		const target = await liveTarget.call(this, own.queueId, stale);
		const secret = target && withoutQuery(target) === withoutQuery(passed.from) && secretOf(target);
		if (
			secret &&
			verify(passed.signature, secret, 'pass-on', [
				withoutQuery(passed.from),
				withoutQuery(passed.to),
				passed.delivery,
			])
		)
			return true;
	}
	return false;
}

/**
 * The holder hands the queue to this listener: signed with the holder's secret, from the address
 * the live target names (read again). This trigger points the queue at itself and admits the other
 * listeners that prove themselves. What it puts back at the end is what its holder said when it
 * joined (its `previousTarget`), never a value of this message.
 */
export async function takeOverQueue(
	this: IWebhookFunctions,
	state: IDataObject,
	own: Own,
	hold: { from: string; others: string[]; signature: string },
): Promise<{ status: number; body: IDataObject }> {
	const secret = await holderSecret.call(this, own, hold.from);
	if (
		!secret ||
		!verify(hold.signature, secret, 'hold', [withoutQuery(hold.from), withoutQuery(own.url)])
	)
		return { status: 401, body: { message: "Not signed by the queue's holder" } };
	await setWebhookTarget.call(this, own.queueId, targetWithSecret(own.url, own.secret));
	forgetLiveTargets();
	// the old holder is a candidate too: when the hold was not its own (a caller with its secret),
	// it proves itself and listens on; when it was, it leaves as it is deactivated
	const others = [...new Set([...hold.others, hold.from])].filter(
		(url) => withoutQuery(url) !== withoutQuery(own.url),
	);
	keepListeners(state, []);
	const outcomes = await Promise.all(
		others.map(async (url) => await admitListener.call(this, state, own, url)),
	);
	const admitted = outcomes.filter((o) => o === 'joined').length;
	this.logger.info(
		`Task Queue Trigger: holds queue ${own.queueId} now (handed over by ${withoutQuery(hold.from)}), with ${admitted} of ${others.length} other listener(s)`,
	);
	return { status: 200, body: { holding: true, listeners: admitted } };
}

export interface JoinAnswer {
	outcome: JoinOutcome | 'no answer';
	/** What the holder puts back at the end (its previous target), from its own answer. */
	previous: string | null;
}

/** Asks the holder (`holderTarget`, with its secret) to pass this trigger its deliveries. */
export async function joinHolder(
	this: TriggerContext,
	holderTarget: string,
	ownUrl: string,
): Promise<JoinAnswer> {
	const answer = await postToThisN8n.call(
		this,
		holderTarget,
		listenerCall({ join: { url: ownUrl } }),
		JOIN_TIMEOUT_MS,
	);
	const body = ('body' in answer ? answer.body : undefined) as IDataObject | undefined;
	if (!('status' in answer)) return { outcome: 'no answer', previous: null };
	if (answer.status === 200 && body?.joined === true) {
		const previous = typeof body.previous === 'string' && body.previous ? body.previous : null;
		return { outcome: 'joined', previous };
	}
	if (answer.status === 409 && body?.full === true) return { outcome: 'full', previous: null };
	return { outcome: answer.status === 403 ? 'not a listener' : 'no answer', previous: null };
}

/** The listener is deactivated: it leaves the holder with its token. */
export async function leaveHolder(
	this: IHookFunctions,
	holderTarget: string,
	ownUrl: string,
): Promise<void> {
	const token = await leaveToken.call(this, ownUrl);
	await postToThisN8n.call(
		this,
		holderTarget,
		listenerCall({ leave: { url: ownUrl, token } }),
		PROOF_TIMEOUT_MS,
	);
}

/**
 * Check for Lost Completions joins the queue's holder again (once a minute by default) whenever the
 * queue is held by another Task Queue Trigger of this n8n: a holder that dropped this trigger, a
 * new holder (the old one was deactivated), or one that took the queue from this trigger. Nothing
 * when this trigger holds the queue; a warning when no trigger of this n8n holds it any more.
 */
export async function joinHolderAgain(this: IPollFunctions, own: Own): Promise<void> {
	let live: string | null;
	try {
		live = await liveTarget.call(this, own.queueId, true);
	} catch {
		return;
	}
	if (classifyTarget(live, own.url) === 'mine') return;
	if (!isTriggerOfThisN8n(live, own.url)) {
		this.logger.warn(
			`Task Queue Trigger: queue ${own.queueId} is no longer held by a Task Queue Trigger of this n8n, and this one only listened through it: deactivate and activate this workflow to register it`,
		);
		return;
	}
	const joined = await joinHolder.call(this, live as string, own.url);
	if (joined.outcome === 'full')
		this.logger.warn(`Task Queue Trigger: ${fullListMessage(own.queueId)}`);
	else if (joined.outcome !== 'joined')
		this.logger.warn(
			`Task Queue Trigger: could not join the trigger that holds queue ${own.queueId} (${joined.outcome}); the next check tries again`,
		);
}
