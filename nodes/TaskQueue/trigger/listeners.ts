import type { IDataObject, IHookFunctions, IPollFunctions, IWebhookFunctions } from 'n8n-workflow';
import { sleep } from 'n8n-workflow';

import {
	classifyTarget,
	isTriggerOfThisN8n,
	targetWithSecret,
	WEBHOOK_PATH,
	withoutQuery,
} from '../helpers/webhookTarget';
import { getWebhookTarget } from '../transport/endpoints';
import { postToThisN8n } from '../transport';

// Several Task Queue Triggers of one n8n on one queue. The service gives a queue one webhook: the
// trigger activated first holds it (the holder); a trigger of the same n8n activated on the queue
// after it joins the holder (a listener) instead of failing. The holder passes each delivery of the
// service on to every listener, which handles it as its own (secret, duplicates, waiting runs,
// emit). A listener that is deactivated leaves; a holder that is deactivated hands the queue to its
// first listener that answers, with the other listeners. What each holder keeps is in its static
// data (`listeners`), written by these calls, which n8n saves: it outlives restarts, and in queue
// mode every webhook process reads it. The messages are built and read here only.

/** The most listeners a holder keeps (each delivery is passed to every one). */
const MAX_LISTENERS = 20;

export type ListenerMessage =
	| { join: string }
	| { leave: string }
	/** The holder is deactivated: the receiver holds the queue now, with these listeners (and the target to put back at the end). */
	| { hold: string[]; previous?: string };

export function listenerCall(message: ListenerMessage): { taskQueueListener: ListenerMessage } {
	return { taskQueueListener: message };
}

const isAddress = (value: unknown): value is string =>
	typeof value === 'string' && value.length <= 2000 && /^https?:\/\//.test(value);

export function readListenerCall(body: unknown): ListenerMessage | undefined {
	const message = (body as { taskQueueListener?: unknown } | undefined)?.taskQueueListener;
	if (typeof message !== 'object' || message === null) return undefined;
	const { join, leave, hold } = message as IDataObject;
	if (isAddress(join)) return { join };
	if (isAddress(leave)) return { leave };
	const previous = (message as IDataObject).previous;
	if (Array.isArray(hold) && hold.length <= MAX_LISTENERS && hold.every(isAddress))
		return { hold: hold as string[], ...(isAddress(previous) ? { previous } : {}) };
	return undefined;
}

/**
 * Whether every address the message names is a Task Queue Trigger address of this n8n (the
 * holder's own origin, the trigger's path, production or test): a holder passes deliveries only
 * there, never to an address a caller made up.
 */
export function namesTriggersOfThisN8n(message: ListenerMessage, ownUrl: string): boolean {
	const addresses =
		'join' in message ? [message.join] : 'leave' in message ? [message.leave] : message.hold;
	return addresses.every((address) => {
		try {
			const url = new URL(address);
			return url.origin === new URL(ownUrl).origin && url.pathname.endsWith(`/${WEBHOOK_PATH}`);
		} catch {
			return false;
		}
	});
}

/** The listeners a holder keeps in its static data (their addresses, with their secrets). */
export function listenersOf(state: IDataObject): string[] {
	return Array.isArray(state.listeners) ? (state.listeners as unknown[]).filter(isAddress) : [];
}

function keepListeners(state: IDataObject, listeners: string[]): void {
	if (listeners.length > 0) state.listeners = listeners.slice(0, MAX_LISTENERS);
	else delete state.listeners;
}

/**
 * What the holder does with a listener's message. A listener that joins again (a restart, a new
 * secret) replaces its old address: one entry per trigger address.
 */
export function applyListenerMessage(
	state: IDataObject,
	message: ListenerMessage,
): 'joined' | 'left' | 'holding' {
	const others = (address: string) =>
		listenersOf(state).filter((l) => withoutQuery(l) !== withoutQuery(address));
	if ('join' in message) {
		keepListeners(state, [...others(message.join), message.join]);
		return 'joined';
	}
	if ('leave' in message) {
		keepListeners(state, others(message.leave));
		return 'left';
	}
	keepListeners(state, message.hold);
	return 'holding';
}

type Context = IHookFunctions | IWebhookFunctions | IPollFunctions;

/** A listener's message to the holder; whether the holder took it. */
export async function tellHolder(
	this: Context,
	holder: string,
	message: ListenerMessage,
): Promise<boolean> {
	const answer = await postToThisN8n.call(this, holder, listenerCall(message), 5_000);
	return 'status' in answer && answer.status === 200;
}

/**
 * Passes a delivery of the service on to every listener, once each, in parallel (one more try
 * half a second later when a listener cannot answer now; 5 s each at most, as the service waits
 * for the holder's answer). A listener n8n no longer knows (its workflow
 * was deactivated without leaving: 404) or that refuses the secret (401: it registered again) is
 * dropped from the holder's list.
 */
export async function passToListeners(
	this: IWebhookFunctions,
	state: IDataObject,
	delivery: IDataObject,
): Promise<void> {
	const listeners = listenersOf(state);
	if (listeners.length === 0) return;
	const gone = new Set<string>();
	await Promise.all(
		listeners.map(async (listener) => {
			for (let attempt = 0; attempt < 2; attempt++) {
				const answer = await postToThisN8n.call(this, listener, delivery, 5_000);
				if ('status' in answer && answer.status < 300) return;
				if ('status' in answer && (answer.status === 404 || answer.status === 401)) {
					gone.add(listener);
					return;
				}
				if (attempt === 0) await sleep(500);
				else
					this.logger.warn(
						`Task Queue Trigger: a listener on the same queue (${withoutQuery(listener)}) did not take a delivery (${'status' in answer ? `HTTP ${answer.status}` : answer.error}); its Catch Up, if on, fills the gap at its next delivery`,
					);
			}
		}),
	);
	if (gone.size > 0) {
		keepListeners(
			state,
			listenersOf(state).filter((l) => !gone.has(l)),
		);
		this.logger.info(
			`Task Queue Trigger: ${gone.size} listener(s) on the same queue no longer answer (deactivated); no longer passed deliveries`,
		);
	}
}

/**
 * The holder is deactivated: the first listener that answers holds the queue now, with the others.
 * Returns its address (the queue's new target), or undefined when none answered.
 */
export async function handOver(
	this: IHookFunctions,
	state: IDataObject,
	previous: string | null,
): Promise<string | undefined> {
	const listeners = listenersOf(state);
	for (const [index, listener] of listeners.entries()) {
		const rest = listeners.filter((_, i) => i !== index);
		const message: ListenerMessage = { hold: rest, ...(previous ? { previous } : {}) };
		const answer = await postToThisN8n.call(this, listener, listenerCall(message), 5_000);
		if ('status' in answer && answer.status === 200) {
			delete state.listeners;
			return listener;
		}
	}
	delete state.listeners;
	return undefined;
}

/**
 * A listener's Check for Lost Completions joins the queue's holder again (once a minute by
 * default): a holder that dropped it (it did not answer during a restart) or a new holder (the old
 * one was deactivated) passes it deliveries again within a check. Nothing when the queue is handed
 * to this trigger; a warning when no trigger of this n8n holds it any more.
 */
export async function joinHolderAgain(
	this: IPollFunctions,
	registration: { queueId: number; url: string; secret: string },
): Promise<void> {
	let live: string | null;
	try {
		live = await getWebhookTarget.call(this, registration.queueId);
	} catch {
		return;
	}
	if (classifyTarget(live, registration.url) === 'mine') return;
	if (!isTriggerOfThisN8n(live, registration.url)) {
		this.logger.warn(
			`Task Queue Trigger: queue ${registration.queueId} is no longer held by a Task Queue Trigger of this n8n, and this one only listened through it: deactivate and activate this workflow to register it`,
		);
		return;
	}
	await tellHolder.call(this, live as string, {
		join: targetWithSecret(registration.url, registration.secret),
	});
}
