import type {
	IExecuteFunctions,
	IHookFunctions,
	INode,
	INodeParameterResourceLocator,
	IPollFunctions,
	IWebhookFunctions,
} from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import type { TaskQueueContext } from '../transport/types';
import { QUEUE_URL_REGEX } from './descriptions';

/** The same pattern as the locator's By URL mode, so that both read a pasted URL alike. */
const URL_ID = new RegExp(QUEUE_URL_REGEX);

/**
 * The one parser of a queue locator's value: a number, its digits, the URL of the queue's page
 * (…/queues/101), or a resource locator holding one of these. Undefined when it names no queue.
 * `extractValue` already turns a URL into its ID when n8n reads the parameter; an expression that
 * yields a URL is parsed here.
 */
export function parseQueueId(raw: unknown): number | undefined {
	const value =
		typeof raw === 'object' && raw !== null ? (raw as INodeParameterResourceLocator).value : raw;
	const text = String(value ?? '').trim();
	const id = /^\d+$/.test(text) ? Number(text) : Number(URL_ID.exec(text)?.[1]);
	return Number.isSafeInteger(id) && id > 0 ? id : undefined;
}

function checkedQueueId(node: INode, raw: unknown, itemIndex?: number): number {
	const id = parseQueueId(raw);
	if (id !== undefined) return id;
	const value =
		typeof raw === 'object' && raw !== null ? (raw as INodeParameterResourceLocator).value : raw;
	const text = String(value ?? '').trim();
	throw new NodeOperationError(
		node,
		text === '' ? 'No queue chosen' : `"${text}" is not a queue ID or a queue URL`,
		{
			itemIndex,
			description:
				'Set the Queue parameter: pick the queue from the list, enter its ID (a whole number such as 101), or paste the URL of its page (…/queues/101).',
		},
	);
}

/** The queue an item works on, checked before any request is sent. */
export function getQueueId(
	this: Pick<IExecuteFunctions, 'getNodeParameter' | 'getNode'>,
	itemIndex: number,
	parameterName = 'queue',
): number {
	const raw = this.getNodeParameter(parameterName, itemIndex, '', { extractValue: true });
	return checkedQueueId(this.getNode(), raw, itemIndex);
}

/** The queue of a context without items: a trigger's hooks, its webhook, a poll. */
export function getTriggerQueueId(
	this: Pick<IHookFunctions | IPollFunctions | IWebhookFunctions, 'getNodeParameter' | 'getNode'>,
): number {
	const raw = (this.getNodeParameter as IHookFunctions['getNodeParameter'])('queue', '', {
		extractValue: true,
	});
	return checkedQueueId(this.getNode(), raw);
}

/** How many results the Return All / Limit pair asks for (Infinity for all), checked before any request. */
export function getLimit(
	this: Pick<TaskQueueContext, 'getNodeParameter' | 'getNode'>,
	itemIndex: number,
	what: string,
): number {
	if (this.getNodeParameter('returnAll', itemIndex, false) as boolean) return Infinity;
	const limit = this.getNodeParameter('limit', itemIndex, 50) as number;
	if (Number.isInteger(limit) && limit >= 1) return limit;
	throw new NodeOperationError(
		this.getNode(),
		`Limit must be a whole number of at least 1, not ${limit}`,
		{
			itemIndex,
			description: `Set Limit to how many ${what} to return, or turn on Return All.`,
		},
	);
}

/** Create and Wait's one queue: every item of the run must name the same. */
export function oneQueueOfRun(this: IExecuteFunctions, itemCount: number): number {
	const queueId = getQueueId.call(this, 0);
	for (let i = 1; i < itemCount; i++) {
		const other = getQueueId.call(this, i);
		if (other !== queueId) {
			throw new NodeOperationError(
				this.getNode(),
				`Create and Wait sends all items of a run to one queue: item ${i} names queue ${other}, item 0 queue ${queueId}`,
				{
					itemIndex: i,
					description:
						'Set Queue to one queue (not an expression that differs per item), or split the items by queue before this node.',
				},
			);
		}
	}
	return queueId;
}
