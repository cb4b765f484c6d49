import type { IDataObject, IHookFunctions, IPollFunctions } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import { isValidUrl } from '../helpers/values';
import { asNodeError } from '../helpers/errors';
import { getTriggerQueueId } from '../helpers/queue';
import { getTaskQueueCredentials } from '../transport';
import { fetchCompletedPage } from '../transport/completedPages';
import { cursorAtNewest } from '../helpers/completions';
import { getQueue, getWebhookTarget, setWebhookTarget } from '../transport/endpoints';
import {
	classifyTarget,
	isTriggerOfThisN8n,
	newSecret,
	secretOf,
	targetWithSecret,
	withoutQuery,
} from '../helpers/webhookTarget';
import { fullListMessage, handOver, joinHolder, leaveHolder, listenersOf } from './listeners';
import { reachabilityWarning } from './webhookReachability';
import { rememberedSet } from '../runtime/processMemory';

/**
 * Triggers this process just registered. n8n 2.x runs a poll trigger's poll() while it activates
 * the workflow, and saves the static data (the registration) only after it: until then the
 * trigger's address refuses the service's deliveries (401). A first Check for Lost Completions,
 * which may read a day of completions, would hold that window open for seconds; it is left to the
 * next round instead.
 */
const freshRegistrations = rememberedSet<string>('freshRegistrations');
const registrationKey = (context: IHookFunctions | IPollFunctions) =>
	`${context.getWorkflow().id}:${context.getNode().id}`;

/** Whether this poll is the first since this process registered the trigger (it then does nothing). */
export function isFirstCheckAfterRegistering(context: IPollFunctions): boolean {
	return freshRegistrations.delete(registrationKey(context));
}

/** What this node registered, kept in the workflow's static data (`registration`). */
export interface Registration {
	queueId: number;
	/** This node's webhook URL, without the secret. */
	url: string;
	secret: string;
	/** The target that was there before (set by someone else) and is put back on deactivation. */
	previousTarget: string | null;
	/** A registration for "listen for test event" (n8n keeps its static data apart). */
	test: boolean;
	/** Another Task Queue Trigger of this n8n holds the queue: this one is its listener (listeners.ts). */
	listening: boolean;
	/** Made up from a signed secret while n8n has not saved the activation yet (never stored). */
	notSaved?: boolean;
}

export function readRegistration(state: IDataObject): Registration | undefined {
	const value = state.registration as Partial<Registration> | undefined;
	if (!value || typeof value !== 'object') return undefined;
	if (
		typeof value.queueId !== 'number' ||
		typeof value.secret !== 'string' ||
		typeof value.url !== 'string'
	) {
		return undefined;
	}
	return {
		queueId: value.queueId,
		url: value.url,
		secret: value.secret,
		previousTarget:
			typeof value.previousTarget === 'string' && value.previousTarget !== ''
				? value.previousTarget
				: null,
		test: value.test === true,
		listening: value.listening === true,
	};
}

/**
 * Refuses a webhook URL the service would refuse ("Enter a valid URL.": a host without a dot other
 * than localhost, say), before anything is written: n8n 2.x activates in the background, where a
 * refusal from the service would only reach n8n's log.
 */
function checkWebhookUrl(url: string, node: IHookFunctions['getNode']): void {
	if (isValidUrl(url)) return;
	throw new NodeOperationError(
		node(),
		`The Task Queue Service would refuse this workflow's webhook URL (${url}): set n8n's WEBHOOK_URL to an address whose host has a dot or is localhost, or use the Task Queue Poll Trigger`,
		{
			description:
				"The service accepts only http:// or https:// addresses whose host has a dot (example.com) or is localhost. Set n8n's WEBHOOK_URL to such an address (for example http://localhost:5678/ or your public host name), restart n8n, and activate again; or use the Task Queue Poll Trigger.",
		},
	);
}

function isTestRegistration(this: IHookFunctions): boolean {
	return this.getMode() === 'manual' || this.getActivationMode() === 'manual';
}

/** Whether this node's registration (URL and secret) is live on the service. */
export async function webhookExists(this: IHookFunctions): Promise<boolean> {
	const state = this.getWorkflowStaticData('node');
	const registration = readRegistration(state);
	const queueId = getTriggerQueueId.call(this);
	const url = this.getNodeWebhookUrl('default') as string;
	// registered queues were checked to be the organization's; nothing else is read
	if (!registration || registration.queueId !== queueId) return false;
	// a listener joins its holder again on each activation (the holder may have dropped it meanwhile)
	if (registration.listening) return false;
	const live = await getWebhookTarget.call(this, queueId);
	if (live === null) return false;
	return classifyTarget(live, url) === 'mine' && secretOf(live) === registration.secret;
}

/**
 * Registers this node's URL with a new secret, refusing to take over someone else's target. Where
 * an activation (or a test listen) fails, n8n 2.x shows the error's message alone (its toast drops
 * the description), so the next step goes into the message too.
 */
export async function createWebhook(this: IHookFunctions): Promise<boolean> {
	try {
		return await register.call(this);
	} catch (error) {
		const nodeError = asNodeError(this.getNode(), error, 0);
		if (
			nodeError instanceof NodeApiError &&
			nodeError.description &&
			!nodeError.message.includes(nodeError.description)
		) {
			nodeError.message = `${nodeError.message}. ${nodeError.description}`;
		}
		throw nodeError;
	}
}

async function register(this: IHookFunctions): Promise<boolean> {
	const state = this.getWorkflowStaticData('node');
	const previous = readRegistration(state);
	const queueId = getTriggerQueueId.call(this);
	const url = this.getNodeWebhookUrl('default') as string;
	const test = isTestRegistration.call(this);
	const node = this.getNode();
	const options = this.getNodeParameter('options', {}) as IDataObject;
	checkWebhookUrl(url, () => node);
	// a listener activated again (n8n 1.x asks on each start) keeps its secret: the address its
	// holder passes deliveries to stays valid even when the holder cannot be told now
	const credentials = await getTaskQueueCredentials.call(this);
	const secret =
		previous?.listening && previous.queueId === queueId && previous.url === url
			? previous.secret
			: newSecret(url, () => node, { key: credentials.apiKey, queueId });
	// The service reads and writes a webhook by queue id alone, in any organization: the queue is
	// read through the credential's organization first, and one of another organization is "not found".
	const queue = await getQueue.call(this, queueId);
	const label = `"${queue.name}" (${queueId})`;
	const live = await getWebhookTarget.call(this, queueId);
	const kind = classifyTarget(live, url, node.webhookId);

	let previousTarget: string | null =
		previous?.queueId === queueId ? previous.previousTarget : null;
	if (kind === 'ours' && test) {
		throw new NodeOperationError(
			node,
			`Queue ${label} already sends its completed tasks to this workflow's production webhook: while the workflow is active (published), each completed task starts a production execution (see its Executions); to listen for a test event here, deactivate it first`,
			{
				description:
					'The service allows one webhook per queue, and a test must not take it from the active workflow. ' +
					"While the workflow is active, each completed task starts a production execution: open the workflow's Executions list to see them. " +
					"To listen for a test event here, deactivate the workflow first. If the workflow is not active, the production address is left over: remove it on the queue's Connections screen in the service (or with the Task Queue node's Webhook > Remove operation), then test again.",
			},
		);
	}
	if (kind === 'foreign') {
		if (isTriggerOfThisN8n(live, url)) {
			// another Task Queue Trigger of this n8n holds the queue: listen through it (listeners.ts)
			if (options.catchUp === true && (previous?.queueId !== queueId || !state.cursor))
				await startCursor.call(this, state, queueId);
			const joined = await joinHolder.call(this, live as string, url);
			if (joined.outcome === 'full') throw new NodeOperationError(node, fullListMessage(queueId));
			const registration: Registration = {
				queueId,
				url,
				secret,
				// what the holder puts back at the end, as its own answer says: if the queue is handed
				// to this trigger, it puts the same back
				previousTarget: joined.previous,
				test,
				listening: true,
			};
			state.registration = registration as unknown as IDataObject;
			delete state.listeners;
			freshRegistrations.add(registrationKey(this));
			this.logger.info(
				`Task Queue Trigger: queue ${queueId} is held by another Task Queue Trigger of this n8n (${new URL(live as string).pathname}); this one ${joined.outcome === 'joined' ? 'listens through it' : `joins it at its next check (${joined.outcome} now)`}: each receives every completed task`,
			);
			return true;
		}
		if (options.replaceExistingWebhook !== true) {
			throw new NodeOperationError(
				node,
				`Queue ${label} already sends its completed tasks to another address (${withoutQuery(live as string)}): turn on the trigger's option "Replace Existing Webhook" to take it over, or remove that address in the service, then activate again`,
				{
					description:
						"The service allows one webhook per queue, and this one was set by someone else (on the queue's Connections screen, by another workflow or another tool). " +
						'To let this workflow take it over, turn on the option "Replace Existing Webhook": the other address stops receiving completed tasks, and is put back when this workflow is deactivated (option "Restore Previous Webhook"). ' +
						"Or remove the other address on the queue's Connections screen in the service, then activate again.",
				},
			);
		}
		previousTarget = live;
		this.logger.warn(
			`Task Queue Trigger: replacing the webhook of queue ${queueId} (${withoutQuery(live as string)}), as the option "Replace Existing Webhook" asks`,
		);
	}

	if (options.catchUp === true && (!previous || previous.queueId !== queueId || !state.cursor))
		await startCursor.call(this, state, queueId);
	await setWebhookTarget.call(this, queueId, targetWithSecret(url, secret));
	const registration: Registration = {
		queueId,
		url,
		secret,
		previousTarget,
		test,
		listening: false,
	};
	state.registration = registration as unknown as IDataObject;
	freshRegistrations.add(registrationKey(this));

	const warning = reachabilityWarning(url, credentials.baseUrl);
	if (warning) this.logger.warn(`Task Queue Trigger on queue ${queueId}: ${warning}`);
	return true;
}

/**
 * Catch Up starts at activation: at the newest completion the service lists before the queue points
 * at this trigger, so a completion after it whose delivery is lost is caught up with the next
 * delivery, the first included. Without Catch Up no cursor is kept.
 */
async function startCursor(
	this: IHookFunctions,
	state: IDataObject,
	queueId: number,
): Promise<void> {
	const page = await fetchCompletedPage.call(this, queueId, 0, 1);
	state.cursor = cursorAtNewest(page.tasks) as unknown as IDataObject;
}

/**
 * Removes this node's registration if the queue's target is still this node's URL, putting back
 * the target it replaced (option "Restore Previous Webhook"). A target changed by someone else
 * since is left alone. Safe to call twice; failures of the service are thrown, not hidden.
 */
export async function deleteWebhook(this: IHookFunctions): Promise<boolean> {
	const state = this.getWorkflowStaticData('node');
	const registration = readRegistration(state);
	let queueId = registration?.queueId;
	if (queueId === undefined) {
		try {
			queueId = getTriggerQueueId.call(this);
		} catch (error) {
			this.logger.warn(
				`Task Queue Trigger: nothing registered and no valid queue chosen, so no webhook to remove (${(error as Error).message})`,
			);
			return true;
		}
	}
	const url = this.getNodeWebhookUrl('default') as string;
	const options = this.getNodeParameter('options', {}) as IDataObject;
	const restore = options.restorePreviousWebhook !== false;

	let live: string | null;
	try {
		live = await getWebhookTarget.call(this, queueId);
	} catch (error) {
		if (!registration) {
			// nothing was registered (the activation was refused, or never ran): nothing to undo, and
			// n8n would retry a failed removal, logging each time
			this.logger.info(
				`Task Queue Trigger: nothing registered on queue ${queueId} to remove (its webhook could not be read: ${(error as Error).message})`,
			);
			return true;
		}
		const message = `Could not check the webhook of queue ${queueId} to remove this workflow's address`;
		this.logger.error(`Task Queue Trigger: ${message}: ${(error as Error).message}`);
		throw new NodeOperationError(this.getNode(), error as Error, {
			message,
			description: `${(error as Error).message}. This workflow's address may still be registered: n8n retries the removal; otherwise remove it on the queue's Connections screen in the service.`,
		});
	}
	const heldByAnother = isTriggerOfThisN8n(live, url) && classifyTarget(live, url) !== 'mine';
	if (registration && heldByAnother) {
		// this trigger listens through another one (or was handed over from): it leaves
		await leaveHolder.call(this, live as string, url);
		this.logger.info(`Task Queue Trigger: stopped listening to queue ${queueId}`);
	} else if (
		registration &&
		classifyTarget(live, url) === 'mine' &&
		listenersOf(state).length > 0
	) {
		// the listeners on this queue go on: the first that answers takes the queue (it points the
		// queue at itself) and the others; it keeps what this one would have put back
		const next = await handOver.call(this, state, registration);
		if (next) {
			const now = await getWebhookTarget.call(this, queueId);
			if (isTriggerOfThisN8n(now, url) && classifyTarget(now, url) !== 'mine')
				await leaveHolder.call(this, now as string, url);
		} else {
			await setWebhookTarget.call(
				this,
				queueId,
				restore && registration.previousTarget ? registration.previousTarget : '',
			);
		}
		this.logger.info(
			next
				? `Task Queue Trigger: handed queue ${queueId} to another Task Queue Trigger of this n8n that listened to it (${new URL(next).pathname})`
				: `Task Queue Trigger: removed this workflow's webhook from queue ${queueId} (no listener answered)`,
		);
	} else if (classifyTarget(live, url) === 'mine') {
		const back = restore && registration?.previousTarget ? registration.previousTarget : '';
		await setWebhookTarget.call(this, queueId, back);
		this.logger.info(
			back
				? `Task Queue Trigger: restored the previous webhook of queue ${queueId} (${withoutQuery(back)})`
				: `Task Queue Trigger: removed this workflow's webhook from queue ${queueId}`,
		);
	} else if (registration) {
		this.logger.info(
			`Task Queue Trigger: the webhook of queue ${queueId} no longer points at this workflow (changed since); left as it is`,
		);
	}
	delete state.registration;
	delete state.cursor;
	delete state.listeners;
	return true;
}
