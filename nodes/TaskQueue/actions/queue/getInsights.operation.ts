import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { NodeOperationError, updateDisplayOptions } from 'n8n-workflow';

import { parseDateParameter } from '../../helpers/dates';
import { queueLocator } from '../../helpers/descriptions';
import { getQueueId } from '../../helpers/queue';
import { type InsightsWindow, measureQueue, peopleItems, queueItem } from '../../insights/measure';
import { LATE_COMMIT_WINDOW_MS } from '../../reader/cursor';
import { getQueue, listQueues } from '../../transport/endpoints';

const properties: INodeProperties[] = [
	{
		displayName: 'Queues',
		name: 'scope',
		type: 'options',
		options: [
			{
				name: 'Every Queue',
				value: 'all',
				description: 'Every queue of the organization, one item each',
			},
			{
				name: 'One Queue',
				value: 'queue',
				description: 'The queue picked below (for several, one input item per queue)',
			},
		],
		default: 'queue',
	},
	{
		...queueLocator,
		description: 'The queue to measure',
		displayOptions: { show: { scope: ['queue'] } },
	},
	{
		displayName: 'Window',
		name: 'window',
		type: 'options',
		options: [
			{ name: 'Between Two Dates', value: 'between' },
			{ name: 'Last Days', value: 'days' },
			{ name: 'Last Hours', value: 'hours' },
		],
		default: 'days',
		description: 'The completions measured, by when they were completed',
	},
	{
		displayName: 'Days',
		name: 'days',
		type: 'number',
		typeOptions: { minValue: 0, numberPrecision: 2 },
		default: 7,
		displayOptions: { show: { window: ['days'] } },
	},
	{
		displayName: 'Hours',
		name: 'hours',
		type: 'number',
		typeOptions: { minValue: 0, numberPrecision: 2 },
		default: 24,
		displayOptions: { show: { window: ['hours'] } },
	},
	{
		displayName: 'From',
		name: 'from',
		type: 'dateTime',
		default: '',
		required: true,
		displayOptions: { show: { window: ['between'] } },
	},
	{
		displayName: 'To',
		name: 'to',
		type: 'dateTime',
		default: '',
		description: 'Empty: now',
		displayOptions: { show: { window: ['between'] } },
	},
	{
		displayName: 'Target (Hours)',
		name: 'targetHours',
		type: 'number',
		typeOptions: { minValue: 0, numberPrecision: 2 },
		default: 4,
		description:
			'The time from a task\'s creation to its completion the queue aims at: "withinTarget" is the share of completions that met it',
	},
	{
		displayName: 'Output',
		name: 'output',
		type: 'options',
		options: [
			{ name: 'One Item per Person', value: 'person' },
			{ name: 'One Item per Queue', value: 'queue' },
		],
		default: 'queue',
	},
];

export const description = updateDisplayOptions(
	{ show: { resource: ['queue'], operation: ['getInsights'] } },
	properties,
);

/** A parameter that must be a number above 0. */
function positive(this: IExecuteFunctions, name: string, label: string, itemIndex: number): number {
	const value = Number(this.getNodeParameter(name, itemIndex));
	if (Number.isFinite(value) && value > 0) return value;
	throw new NodeOperationError(this.getNode(), `${label} must be a number above 0`, {
		itemIndex,
		description: `Set ${label} to more than 0 (it is ${JSON.stringify(value)}).`,
	});
}

/**
 * The window, up to now less the time a completion may take to become visible (a real server can
 * list one late, below later ones): every completion of the window is listed when it is read.
 */
function readWindow(this: IExecuteFunctions, itemIndex: number): InsightsWindow {
	const settled = Date.now() - LATE_COMMIT_WINDOW_MS;
	const kind = this.getNodeParameter('window', itemIndex) as string;
	const targetMs = positive.call(this, 'targetHours', 'Target (Hours)', itemIndex) * 3_600_000;
	const key = (ms: number) => new Date(ms).toISOString().slice(0, 23);
	if (kind !== 'between') {
		const label = kind === 'hours' ? 'Hours' : 'Days';
		const span = positive.call(this, kind, label, itemIndex) * (kind === 'hours' ? 1 : 24);
		return { from: key(settled - span * 3_600_000), to: key(settled), targetMs };
	}
	const date = (name: string, label: string) =>
		parseDateParameter.call(this, this.getNodeParameter(name, itemIndex, ''), label, itemIndex);
	const [from, to] = [date('from', 'From'), date('to', 'To')];
	const fault = !from
		? 'From is empty'
		: from.toMillis() > settled
			? 'From is in the future (or less than 10 seconds ago): nothing can be measured yet'
			: to && to.toMillis() <= from.toMillis()
				? 'From must be earlier than To'
				: undefined;
	if (fault || !from) {
		throw new NodeOperationError(this.getNode(), fault ?? 'From is empty', {
			itemIndex,
			description: 'Set From to a past date, and To (or nothing, for now) after it.',
		});
	}
	return {
		from: key(from.toMillis()),
		to: key(Math.min(to?.toMillis() ?? settled, settled)),
		targetMs,
	};
}

/** Per queue (or per person): pending tasks, people active, and the window's completions. */
export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject[]> {
	const window = readWindow.call(this, itemIndex);
	const perPerson = this.getNodeParameter('output', itemIndex) === 'person';
	const queues =
		this.getNodeParameter('scope', itemIndex) === 'all'
			? await listQueues.call(this, itemIndex)
			: [await getQueue.call(this, getQueueId.call(this, itemIndex), itemIndex)];
	const results: IDataObject[] = [];
	for (const queue of queues) {
		const figures = await measureQueue.call(this, queue.id, window);
		if (perPerson) results.push(...peopleItems(queue, figures, window));
		else results.push(queueItem(queue, figures, window));
	}
	return results;
}
