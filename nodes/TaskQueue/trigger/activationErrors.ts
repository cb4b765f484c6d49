import type { IHookFunctions, INode } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { isValidUrl } from '../helpers/values';
import { withoutQuery } from '../helpers/webhookTarget';

// What an activation of the Task Queue Trigger refuses, each error with what to do
// (webhookRegistration.ts). n8n 2.x shows an activation error's message alone in its toast.

/**
 * Refuses a webhook URL the service would refuse ("Enter a valid URL.": a host without a dot other
 * than localhost, say), before anything is written: n8n 2.x activates in the background, where a
 * refusal from the service would only reach n8n's log.
 */
export function checkWebhookUrl(url: string, node: IHookFunctions['getNode']): void {
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

export function productionHoldsIt(node: INode, label: string): NodeOperationError {
	return new NodeOperationError(
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

export function someoneElseHoldsIt(node: INode, label: string, live: string): NodeOperationError {
	return new NodeOperationError(
		node,
		`Queue ${label} already sends its completed tasks to another address (${withoutQuery(live)}): turn on the trigger's option "Replace Existing Webhook" to take it over, or remove that address in the service, then activate again`,
		{
			description:
				"The service allows one webhook per queue, and this one was set by someone else (on the queue's Connections screen, by another workflow or another tool). " +
				'To let this workflow take it over, turn on the option "Replace Existing Webhook": the other address stops receiving completed tasks, and is put back when this workflow is deactivated (option "Restore Previous Webhook"). ' +
				"Or remove the other address on the queue's Connections screen in the service, then activate again.",
		},
	);
}
