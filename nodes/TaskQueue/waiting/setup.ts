import type { IExecuteFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import type { CompiledQueue } from '../helpers/blockModel';
import { optionsOf } from '../helpers/blockModel';
import { getWebhookTarget } from '../transport/endpoints';
import { canSignResumeUrls, workflowSettings } from '../runtime/n8nInternals';
import { isTriggerOfThisN8n, maskSecret, WEBHOOK_PATH } from '../helpers/webhookTarget';
import { chooseResumeField } from './resumeField';
import { mappedFields, type WaitSettings } from './settings';

// The checks of a Create and Wait's set-up, all made before the first task is created: a set-up that
// cannot come back fails here, with its fix, never as a run that waits forever.

/** Whether this n8n can sign resume addresses (n8n 1.100 and later; checked before any task is created). */
export function assertCanSign(context: IExecuteFunctions): void {
	if (canSignResumeUrls(context)) return;
	throw new NodeOperationError(
		context.getNode(),
		'This n8n cannot sign the address of a waiting execution',
		{
			description:
				'Create and Wait needs n8n 1.100 or later (it uses signed resume addresses). Update n8n, or use Create and a Task Queue Trigger workflow.',
		},
	);
}

/** Checks the fields of the set-up; returns the Resume Address Field the run writes its address into. */
export function checkFields(
	this: IExecuteFunctions,
	queue: CompiledQueue,
	settings: WaitSettings,
): string {
	const fields = [...queue.blocks.values()].map((c) => c.block);
	const mapped = mappedFields(this.getNodeParameter('taskData', 0, null, { rawExpressions: true }));
	const choice = chooseResumeField(
		fields,
		settings.resumeField,
		mapped,
		`${queue.queueId} (${queue.name})`,
	);
	if ('problem' in choice)
		throw new NodeOperationError(this.getNode(), choice.problem, { description: choice.fix });
	const resumeField = choice.field.id;
	if (settings.responseType !== 'approval') return resumeField;
	const approval = fields.find((b) => b.id === settings.approvalField);
	if (!approval || approval.type !== 'single_selection') {
		throw new NodeOperationError(
			this.getNode(),
			`Queue ${queue.queueId} has no selection field "${settings.approvalField}" for the approval`,
			{
				description:
					'Set Approval Field to a single-selection field of the queue whose options approve or deny.',
			},
		);
	}
	if (!optionsOf(approval).some((option) => option.id === settings.approveOption)) {
		throw new NodeOperationError(
			this.getNode(),
			`"${settings.approveOption}" is not an option of field ${approval.id}`,
			{
				description: `Set Approve Option to one of: ${optionsOf(approval)
					.map((o) => `${o.id} (${o.name})`)
					.join(', ')}.`,
			},
		);
	}
	for (const [label, id] of [
		['Feedback Field', settings.feedbackField],
		['Message Field', settings.messageField],
	] as const) {
		const block = id ? fields.find((b) => b.id === id) : undefined;
		if (id && (!block || block.type !== 'text')) {
			throw new NodeOperationError(
				this.getNode(),
				`Queue ${queue.queueId} has no text field "${id}" for the ${label}`,
				{
					description: `Set ${label} to one of the queue's text fields, or leave it empty.`,
				},
			);
		}
	}
	return resumeField;
}

/**
 * The Message of an AI agent's human review (the parameter n8n adds to the node's review-tool
 * variant). n8n's default, `{{ $tool.parameters }}`, renders the tool's arguments as
 * "[object Object]": they are written as JSON instead, so the person sees what the agent wants.
 */
export function reviewMessage(this: IExecuteFunctions, itemIndex: number): string {
	const raw = this.getNodeParameter('message', itemIndex, '', { rawExpressions: true });
	if (typeof raw !== 'string' || raw === '') return '';
	if (!raw.startsWith('=')) return raw;
	const readable = raw.replace(
		/\{\{\s*\$tool\.parameters\s*\}\}/g,
		'{{ JSON.stringify($tool.parameters, null, 2) }}',
	);
	const message = this.evaluateExpression(readable.slice(1), itemIndex);
	return typeof message === 'string' ? message : JSON.stringify(message);
}

/** What real servers accept in a link field: a host with a dot (an IP address too), never `localhost`. */
function linkAccepts(address: string): boolean {
	const host = new URL(address).hostname;
	return host.includes('.') || host.startsWith('[');
}

/**
 * A link field holds only URLs whose host has a dot: n8n's address on `localhost` (a local n8n's
 * default) would make the service refuse every task.
 */
export function checkResumeFieldTakesAddress(
	this: IExecuteFunctions,
	queue: CompiledQueue,
	settings: WaitSettings,
	waitingBase: string,
): void {
	const field = queue.blocks.get(settings.resumeField)?.block;
	if (field?.type !== 'link' || linkAccepts(waitingBase)) return;
	const host = new URL(waitingBase).hostname;
	throw new NodeOperationError(
		this.getNode(),
		`The link field "${field.id}" cannot hold this n8n's address: the service refuses links to "${host}"`,
		{
			description: `The service accepts a link only when its host has a dot, and n8n's resume address is ${waitingBase}/…. Pick a text field as Resume Address Field, or give n8n an address with a dotted host (WEBHOOK_URL, for example http://127.0.0.1:5678/ or your n8n's domain name).`,
		},
	);
}

/** n8n 2.41's Engine 2.0 (a workflow setting) cannot resume a waiting execution: refused before any task. */
export function checkEngineCanResume(this: IExecuteFunctions): void {
	const settings = workflowSettings(this);
	if (settings.engineType !== 'v2') return;
	throw new NodeOperationError(
		this.getNode(),
		"This workflow runs on n8n's Engine 2.0, which cannot resume a waiting execution",
		{
			description:
				"Open the workflow's settings and switch its execution engine back to the default (v1), then run it again. Create and Wait, like n8n's own Wait and send-and-wait nodes, needs an engine that resumes waiting executions.",
		},
	);
}

/** Where a queue's completions go, told against this n8n's own addresses. */
export type RouteBack = 'routed' | 'none' | 'test' | 'elsewhere';

export function routeBackOf(target: string | null, waitingBase: string): RouteBack {
	if (!target) return 'none';
	if (isTriggerOfThisN8n(target, waitingBase)) return 'routed';
	return target.includes('/webhook-test/') && target.includes(`/${WEBHOOK_PATH}`)
		? 'test'
		: 'elsewhere';
}

/** The route's state: a short line for the editor's field, and the detail, its fix first (n8n's dropdown cuts it at ~100 characters). */
export function describeRouteBack(
	route: RouteBack,
	queueId: number,
	target: string | null,
): { state: string; detail: string } {
	const fix = `Fix: activate a Task Queue Trigger on queue ${queueId} (in any workflow, this one too).`;
	if (route === 'routed') {
		return {
			state: "✓ Routed back by this n8n's Task Queue Trigger",
			detail: `Queue ${queueId}'s webhook is an active Task Queue Trigger of this n8n (checked again at each run).`,
		};
	}
	if (route === 'none')
		return {
			state: '⚠️ Not routed back: the queue has no webhook',
			detail: `${fix} Queue ${queueId} has no webhook.`,
		};
	if (route === 'test') {
		return {
			state: '⚠️ Not routed back: only a test listener',
			detail: `${fix} Only a test listener has queue ${queueId}, until its test event.`,
		};
	}
	return {
		state: '⚠️ Not routed back: the webhook goes elsewhere',
		detail: `${fix} The webhook goes to ${maskSecret(target ?? '')}.`,
	};
}

/**
 * The route back: the queue's webhook must be an active Task Queue Trigger of this n8n. Returns its
 * target (with its secret: never shown, see maskSecret), which the run announces its tasks to.
 */
export async function checkTriggerRoutesBack(
	this: IExecuteFunctions,
	queueId: number,
	waitingBase: string,
): Promise<string> {
	const target = await getWebhookTarget.call(this, queueId, 0);
	if (routeBackOf(target, waitingBase) !== 'routed') {
		throw new NodeOperationError(
			this.getNode(),
			`No Task Queue Trigger of this n8n receives the completions of queue ${queueId}`,
			{
				description: `${target ? `The queue's webhook goes to ${maskSecret(target)}. ` : 'The queue has no webhook. '}Activate a workflow with a Task Queue Trigger on queue ${queueId} (it forwards each completion to the execution waiting for it), then run this again. If the service cannot reach this n8n, activate a Task Queue Poll Trigger on the queue instead and set Options > Route Completions Back Through to it.`,
			},
		);
	}
	return target as string;
}
