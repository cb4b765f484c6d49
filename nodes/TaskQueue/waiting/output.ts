import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { timeKey } from '../reader/cursor';
import type { CompletedTask } from '../transport/schemas';
import type { ResumeAddress } from './messages';
import { itemOfThisWait } from './messages';
import type { RunMemory } from './memory';
import type { WaitSettings } from './settings';

// What a resumed Create and Wait outputs: one item per input item, in input order, each the
// completed task with the person's values (never the node's resume address), their labels, and
// for Approval whether they approved and their feedback.

type Wait = Omit<ResumeAddress, 'url'>;

/** The label of each option chosen in the answer, by field: what the person clicked ("Approve"). */
export function labelsOf(
	data: IDataObject,
	labels: Record<string, Record<string, string>> | undefined,
): IDataObject | undefined {
	if (!labels) return undefined;
	const chosen: IDataObject = {};
	for (const [field, options] of Object.entries(labels)) {
		const value = data[field];
		const label = (id: unknown) => (typeof id === 'string' ? options[id] : undefined);
		if (Array.isArray(value)) chosen[field] = value.map((id) => label(id) ?? id) as string[];
		else if (label(value) !== undefined) chosen[field] = label(value);
	}
	return Object.keys(chosen).length > 0 ? chosen : undefined;
}

/** A task's values without the resume address: the node's own plumbing, not the person's answer. */
export function valuesOf(task: CompletedTask, settings: WaitSettings, wait: Wait): IDataObject {
	const data: IDataObject = { ...((task.data ?? {}) as IDataObject) };
	if (settings.resumeField) delete data[settings.resumeField];
	else
		for (const [key, value] of Object.entries(data))
			if (itemOfThisWait(value, wait) !== undefined) delete data[key];
	return data;
}

/** Seconds from one service time to another (the item's first task's creation to an answer). */
export const secondsBetween = (from: string | undefined, to: string) =>
	from ? (Date.parse(`${timeKey(to)}Z`) - Date.parse(`${timeKey(from)}Z`)) / 1000 : undefined;

export function outputItem(
	task: CompletedTask,
	item: number,
	settings: WaitSettings,
	meta: IDataObject,
	wait: Wait,
	labels?: Record<string, Record<string, string>>,
	since = task.created_at, // the item's first task's creation (Several People per Item)
): INodeExecutionData {
	const data = valuesOf(task, settings, wait);
	const json: IDataObject = { ...(task as unknown as IDataObject), ...(task.data ? { data } : {}) };
	const chosen = labelsOf(data, labels);
	if (chosen) json.labels = chosen;
	if (settings.responseType === 'approval') {
		const data = (task.data ?? {}) as IDataObject;
		json.approved = data[settings.approvalField] === settings.approveOption;
		const feedback = settings.feedbackField ? data[settings.feedbackField] : undefined;
		json.chatInput = typeof feedback === 'string' ? feedback : '';
	}
	json.wait = { ...meta, secondsToDecision: secondsBetween(since, task.completed_at) };
	return { json, pairedItem: { item } };
}

/**
 * One output item per input item, in input order: n8n pairs a resumed node's items with its input
 * by position (2.41 renumbers them), so the answer to item i must be item i.
 */
export function resumedItems(
	wait: Wait,
	memory: RunMemory | undefined,
	found: Map<number, CompletedTask>,
	settings: WaitSettings,
	meta: IDataObject,
): INodeExecutionData[] {
	const items: INodeExecutionData[] = [];
	for (let item = 0; item < wait.inputs; item++) {
		const task = found.get(item);
		const taskId = memory?.tasks[item]?.taskId;
		if (task) items.push(outputItem(task, item, settings, meta, wait, memory?.labels));
		else if (memory ? taskId !== undefined : settings.waitFor === 'first') {
			items.push({
				json: {
					...(taskId !== undefined ? { id: taskId } : {}),
					status: 'pending',
					wait: { ...meta, outcome: 'pending' },
				},
				pairedItem: { item },
			});
		} else {
			items.push({
				json: {
					error: 'No task was created for this item: its task data was refused before the wait',
					wait: { ...meta, outcome: 'refused' },
				},
				pairedItem: { item },
			});
		}
	}
	return items;
}

/**
 * The node's output while it waits: one item per input item with its task's id and queue (what the
 * editor shows while the execution waits), or the reason no task was sent.
 */
export function waitingItems(
	results: INodeExecutionData[][],
	meta: { node: string; queueId: number; queueName: string; of: number },
): INodeExecutionData[] {
	return results.map((created, item) => {
		const task = created.find((entry) => typeof entry.json.id === 'number');
		const wait = { outcome: task ? 'waiting' : 'refused', node: meta.node, item, of: meta.of };
		if (!task)
			return {
				json: { error: created[0]?.json.error ?? 'No task was sent', wait },
				pairedItem: { item },
			};
		const { id, status, queue, queue_id: queueId, created_at: createdAt } = task.json;
		return {
			json: {
				id,
				status,
				queue: queue ?? meta.queueName,
				queue_id: queueId ?? meta.queueId,
				created_at: createdAt,
				wait,
			},
			pairedItem: { item },
		};
	});
}
