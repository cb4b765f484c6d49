// A call to a waiting Create and Wait, as n8n 2.41's waiting webhooks make it: the signature of the
// address checked with the instance's HMAC secret (WaitingWebhooks.validateSignature), then the
// node's webhook() run in a WebhookContext over the waiting execution's data.
import { createHmac, timingSafeEqual } from 'crypto';
import { InstanceSettings, WorkflowExecute } from 'n8n-core';
import type {
	IDataObject,
	INodeExecutionData,
	INodeParameters,
	IRun,
	IWebhookData,
	IWebhookResponseData,
} from 'n8n-workflow';

import { resumeWebhooks } from '../../nodes/TaskQueue/waiting/resume';
import { TaskQueue } from '../../nodes/TaskQueue/TaskQueue.node';
import { runActionNode, webhookContext, type ActionRun, type RecordedResponse } from './n8n';

const taskQueue = new TaskQueue();

/** n8n-core's own DI container (it has its own copy of @n8n/di): where its InstanceSettings live. */
const { Container } = require(
	require.resolve('@n8n/di', { paths: [require.resolve('n8n-core')] }),
) as typeof import('@n8n/di');

/** Whether n8n would accept this address for a node whose saved operation is sendAndWait. */
export function n8nAcceptsSignature(address: string): boolean {
	const url = new URL(address);
	const provided = url.searchParams.get('signature') ?? '';
	url.searchParams.delete('signature');
	const expected = createHmac('sha256', Container.get(InstanceSettings).hmacSignatureSecret)
		.update(`${url.pathname}${url.search}`)
		.digest('hex');
	return (
		provided.length === expected.length &&
		timingSafeEqual(Buffer.from(provided), Buffer.from(expected))
	);
}

export function queryOf(address: string): Record<string, string> {
	return Object.fromEntries(new URL(address).searchParams);
}

export interface WaitingCall {
	response: RecordedResponse;
	result: IWebhookResponseData;
}

/** Runs the waiting node's webhook() for a call with this query (the signature is n8n's to check). */
export async function callWaitingNode(
	run: ActionRun,
	query: Record<string, string>,
	body: unknown = {},
	/** 1: the webhook context as n8n 1.x builds it (no `logHitlResponse`; it allows a second resume). */
	n8nMajor: 1 | 2 = 2,
): Promise<WaitingCall> {
	const webhookData = {
		node: run.node.name,
		httpMethod: 'POST',
		path: run.node.id,
		webhookDescription: resumeWebhooks[0],
		workflowId: run.workflow.id,
		isTest: false,
		workflowExecuteAdditionalData: run.additionalData,
	} as unknown as IWebhookData;
	const { context, response } = webhookContext(
		{ workflow: run.workflow, node: run.node, additionalData: run.additionalData, webhookData },
		{ body, query },
		run.run.data,
	);
	if (n8nMajor === 1) Object.assign(context, { logHitlResponse: undefined });
	const result = await taskQueue.webhook.call(context);
	return { response, result };
}

/**
 * Resumes the waiting execution with what the node's webhook returned, as n8n 2.41 does
 * (WaitingWebhooks + webhook-helpers' prepareExecutionData): the node's input becomes that data, the
 * node is disabled and passes it on, and WorkflowExecute renumbers its items by position.
 */
export async function resumeExecution(
	run: ActionRun,
	workflowData: INodeExecutionData[][],
): Promise<IRun> {
	const data = run.run.data;
	const resuming = data.executionData!.nodeExecutionStack[0];
	resuming.data.main = workflowData;
	resuming.metadata = { ...resuming.metadata, forwardAllOutputs: true };
	return await new WorkflowExecute(run.additionalData, 'manual', data).processRunExecutionData(
		run.workflow,
	);
}

/** What n8n 2.41 renders (text/html) for a call to a send-and-wait execution that no longer waits. */
export const INVALID_FORM_LINK =
	"<!DOCTYPE html><html lang='en'><head><title>Invalid Form Link</title></head><body><h1>Invalid Form Link</h1></body></html>";
export const NO_ACTION_REQUIRED =
	"<html lang='en'><head><title>No action required</title></head><body><h1>No action required</h1></body></html>";

/**
 * n8n's waiting-webhook endpoint for the runs it is given: refuses a bad signature (401), answers a
 * finished execution as 2.41 does for send-and-wait (200, nothing resumed), otherwise runs the node's
 * webhook() and records the resumed output.
 */
export class WaitingEndpoint {
	readonly runs = new Map<string, ActionRun>();

	readonly resumed = new Map<string, IWebhookResponseData['workflowData']>();

	/** Resumes per execution (n8n refuses a second one: it must stay 1). */
	readonly resumes = new Map<string, number>();

	/** The n8n whose webhook contexts the node gets (1: no `logHitlResponse`, see callWaitingNode). */
	n8nMajor: 1 | 2 = 2;

	/** Executions a call is being handled for: n8n answers another call 409 "running already". */
	private readonly running = new Set<string>();

	/** Every call, in order: the execution it named and the status it got. */
	readonly calls: Array<{
		executionId: string;
		status: number;
		body: unknown;
		authorization?: string;
	}> = [];

	add(executionId: string, run: ActionRun): void {
		this.runs.set(executionId, run);
	}

	async handle(
		address: string,
		authorization?: string,
		body: unknown = {},
	): Promise<{ status: number; body: unknown }> {
		const url = new URL(address);
		const [executionId, nodeId] = url.pathname.split('/').slice(-2);
		const answer = (status: number, body: unknown) => {
			this.calls.push({ executionId, status, body, ...(authorization ? { authorization } : {}) });
			return { status, body };
		};
		const run = this.runs.get(executionId);
		if (!run) return answer(404, { message: `The execution "${executionId}" does not exist.` });
		// n8n 2.41 renders its "Invalid Form Link" page for a send-and-wait node (1.123: JSON)
		if (!n8nAcceptsSignature(address)) return answer(401, INVALID_FORM_LINK);
		if (this.resumed.has(executionId)) return answer(200, NO_ACTION_REQUIRED);
		if (nodeId !== run.node.id)
			return answer(404, { message: 'no waiting webhook with a matching path' });
		if (this.running.has(executionId))
			return answer(409, { message: `The execution "${executionId}" is running already.` });
		this.running.add(executionId);
		let call: WaitingCall;
		try {
			call = await callWaitingNode(run, queryOf(address), body, this.n8nMajor);
		} finally {
			this.running.delete(executionId);
		}
		const { response, result } = call;
		if (result.workflowData) {
			this.resumed.set(executionId, result.workflowData);
			this.resumes.set(executionId, (this.resumes.get(executionId) ?? 0) + 1);
		}
		// the node answers the caller itself; n8n's own answer is for a node that does not
		if (!response.ended) return answer(200, { message: 'Workflow was started' });
		return answer(response.statusCode, response.body);
	}
}

/**
 * A Create and Wait run of the Refund Decisions queue (or another), put to wait through
 * WorkflowExecute as n8n runs it: each input item's `message` goes into the task's message field.
 */
export async function startWaitingRun(options: {
	credentials: ActionRunCredentials;
	executionId: string;
	input: IDataObject[];
	waitingBaseUrl: string;
	queueId?: number;
	parameters?: IDataObject;
	probe?: boolean;
}): Promise<ActionRun> {
	return await runActionNode({
		types: { taskQueue },
		node: {
			type: 'taskQueue',
			parameters: {
				resource: 'task',
				operation: 'sendAndWait',
				queue: { __rl: true, mode: 'id', value: String(options.queueId ?? 104) },
				taskData: {
					mappingMode: 'defineBelow',
					value: { customer_message: '={{ $json.message }}' },
					matchingColumns: [],
					schema: [],
				},
				resumeField: 'resume_url',
				options: {},
				...options.parameters,
			} as INodeParameters,
		},
		input: options.input,
		credentials: options.credentials,
		executionId: options.executionId,
		additionalData: { webhookWaitingBaseUrl: options.waitingBaseUrl },
		probe: options.probe,
	});
}

type ActionRunCredentials = Parameters<typeof runActionNode>[0]['credentials'];
