import type { INodeParameterResourceLocator } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import type { TaskQueueContext } from '../transport';

const URL_ID = /(?:queues|workflows)\/(\d+)/;

/**
 * The queue ID chosen in the `queue` locator, checked before any request is sent.
 * `extractValue` already turns a URL into its ID when n8n reads the parameter; the URL is parsed
 * again here so an expression that yields a URL works too.
 */
export function getQueueId(
	this: Pick<TaskQueueContext, 'getNodeParameter' | 'getNode'>,
	itemIndex: number,
	parameterName = 'queue',
): number {
	const raw = (this.getNodeParameter as (name: string, index: number, fallback: unknown, options: object) => unknown)(
		parameterName,
		itemIndex,
		'',
		{ extractValue: true },
	);
	const value =
		typeof raw === 'object' && raw !== null ? (raw as INodeParameterResourceLocator).value : raw;
	const text = String(value ?? '').trim();
	const id = /^\d+$/.test(text) ? Number(text) : Number(URL_ID.exec(text)?.[1]);
	if (!Number.isSafeInteger(id) || id <= 0) {
		throw new NodeOperationError(
			this.getNode(),
			text === '' ? 'No queue chosen' : `"${text}" is not a queue ID or a queue URL`,
			{
				itemIndex,
				description:
					'Set the Queue parameter: pick the queue from the list, enter its ID (a whole number such as 101), or paste the URL of its page (…/queues/101).',
			},
		);
	}
	return id;
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
	throw new NodeOperationError(this.getNode(), `Limit must be a whole number of at least 1, not ${limit}`, {
		itemIndex,
		description: `Set Limit to how many ${what} to return, or turn on Return All.`,
	});
}
