import type { IDataObject, IHookFunctions } from 'n8n-workflow';
import { runsWaitingOn } from './relay/knownRuns';
import { NodeOperationError } from 'n8n-workflow';

import { getTriggerQueueId } from '../helpers/queue';
import { classifyTarget, isTriggerOfThisN8n, withoutQuery } from '../helpers/webhookTarget';
import { getWebhookTarget, setWebhookTarget } from '../transport/endpoints';
import { handOver } from './holder';
import { joinsRetrying, STOPPED } from './listener';
import type { Registration } from './state/staticData';
import { forgetRegistration, listenersOf, readRegistration } from './state/staticData';

/**
 * Removes this node's registration if the queue's target is still this node's URL, putting back
 * the target it replaced (option "Restore Previous Webhook"), or hands the queue to a trigger
 * listening through it. A target changed by someone else since is left alone. Safe to call twice;
 * failures of the service are thrown, not hidden.
 */
export async function deleteWebhook(this: IHookFunctions): Promise<boolean> {
	const state = this.getWorkflowStaticData('node');
	const registration = readRegistration(state);
	const queueId = registration?.queueId ?? queueToClean.call(this);
	if (queueId === undefined) return true;
	const url = this.getNodeWebhookUrl('default') as string;
	joinsRetrying.set(url, STOPPED);
	const live = await readLive.call(this, queueId, registration);
	if (live === undefined) return true;
	if (registration && isTriggerOfThisN8n(live, url) && classifyTarget(live, url) !== 'mine') {
		// this trigger listens through another one: once n8n no longer knows its address (404), the
		// holder's next nudge drops it
		this.logger.info(`Task Queue Trigger: stopped listening to queue ${queueId}`);
	} else if (classifyTarget(live, url) === 'mine') {
		await letGo.call(this, state, queueId, registration);
	} else if (registration) {
		this.logger.info(
			`Task Queue Trigger: the webhook of queue ${queueId} no longer points at this workflow (changed since); left as it is`,
		);
	}
	forgetRegistration(state);
	return true;
}

/** The queue chosen, when nothing is registered; undefined (logged) when none is valid. */
function queueToClean(this: IHookFunctions): number | undefined {
	try {
		return getTriggerQueueId.call(this);
	} catch (error) {
		this.logger.warn(
			`Task Queue Trigger: nothing registered and no valid queue chosen, so no webhook to remove (${(error as Error).message})`,
		);
		return undefined;
	}
}

/** The queue's target now; undefined when nothing was registered and it cannot be read. */
async function readLive(
	this: IHookFunctions,
	queueId: number,
	registration: Registration | undefined,
): Promise<string | null | undefined> {
	try {
		return await getWebhookTarget.call(this, queueId);
	} catch (error) {
		if (!registration) {
			// nothing was registered (the activation was refused, or never ran): nothing to undo, and
			// n8n would retry a failed removal, logging each time
			this.logger.info(
				`Task Queue Trigger: nothing registered on queue ${queueId} to remove (its webhook could not be read: ${(error as Error).message})`,
			);
			return undefined;
		}
		const message = `Could not check the webhook of queue ${queueId} to remove this workflow's address`;
		this.logger.error(`Task Queue Trigger: ${message}: ${(error as Error).message}`);
		throw new NodeOperationError(this.getNode(), error as Error, {
			message,
			description: `${(error as Error).message}. This workflow's address may still be registered: n8n retries the removal; otherwise remove it on the queue's Connections screen in the service.`,
		});
	}
}

/**
 * The queue points at this trigger: the previous target is put back (or the webhook removed), then
 * its listeners are asked to look (holder.ts): the first takes the queue and puts the same back at
 * the end. Nothing is lost meanwhile: the listeners read the queue from their own cursors.
 */
async function letGo(
	this: IHookFunctions,
	state: IDataObject,
	queueId: number,
	registration: Registration | undefined,
): Promise<void> {
	const options = this.getNodeParameter('options', {}) as IDataObject;
	const back =
		options.restorePreviousWebhook !== false && registration?.previousTarget
			? registration.previousTarget
			: '';
	await setWebhookTarget.call(this, queueId, back);
	if (
		registration &&
		listenersOf(state).length > 0 &&
		(await handOver.call(this, state, queueId))
	) {
		this.logger.info(
			`Task Queue Trigger: handed queue ${queueId} to another Task Queue Trigger of this n8n that listened to it`,
		);
		return;
	}
	this.logger.info(
		back
			? `Task Queue Trigger: restored the previous webhook of queue ${queueId} (${withoutQuery(back)})`
			: `Task Queue Trigger: removed this workflow's webhook from queue ${queueId}`,
	);
	const waiting = runsWaitingOn(queueId);
	if (waiting.length > 0)
		this.logger.warn(
			`Task Queue Trigger: queue ${queueId} has no Task Queue Trigger of this n8n now, and Create and Wait execution(s) ${waiting.slice(0, 20).join(', ')}${waiting.length > 20 ? ` and ${waiting.length - 20} more` : ''} were waiting for its answers when last heard from: they stay Waiting until a Task Queue Trigger on the queue is published again (its first check passes on their answers) or their Limit Wait Time ends`,
		);
}
