import type { INodeExecutionData, IPollFunctions, IWebhookFunctions } from 'n8n-workflow';

import { rememberedMap } from '../runtime/processMemory';

// The Task Queue Trigger has a poll() for Check for Lost Completions, and n8n runs a node that has one by
// calling poll() in a manual execution, also one started by a test delivery, instead of passing the
// delivery's items on. So a test delivery's items are handed from webhook() to that poll() here
// (both run in the main n8n process, one after the other).

const waiting = rememberedMap<string, INodeExecutionData[][][]>('testEvents');

const scope = (context: IWebhookFunctions | IPollFunctions) =>
	`${context.getWorkflow().id}:${context.getNode().id}`;

/** Keeps the items a test delivery starts a manual execution with. */
export function handOverTestEvent(context: IWebhookFunctions, items: INodeExecutionData[][]): void {
	const key = scope(context);
	const queue = waiting.get(key) ?? [];
	queue.push(items);
	waiting.set(key, queue.slice(-20));
}

/** The items of the test delivery that started this manual execution, if one did. */
export function takeTestEvent(context: IPollFunctions): INodeExecutionData[][] | undefined {
	const key = scope(context);
	const queue = waiting.get(key);
	const items = queue?.shift();
	if (queue?.length === 0) waiting.delete(key);
	return items;
}
