import type { IDataObject, INodeExecutionData, IWebhookFunctions } from 'n8n-workflow';

// What a waiting run remembers: the task the service created for each of its input items, by the
// id the service gave it in its answer to the create request. It is the node's own output while the
// execution waits: n8n stores it in the execution (its database), hands it back to the node's
// webhook with the execution's data, and drops it when the execution resumes. Nobody who can only
// create or complete tasks can write there, so a task counts for item i only when it is the task
// this run created for item i, whatever its fields say.

export interface WaitingTask {
	/** The input item the task was made from. */
	item: number;
	/** The service's id of the task; undefined when the item's data was refused before sending. */
	taskId?: number;
	/** When the service created it (its clock): no completion of the task can be older. */
	createdAt?: string;
}

export interface RunMemory {
	/** One entry per input item, in input order. */
	tasks: WaitingTask[];
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
		if (!task) return { json: { error: created[0]?.json.error ?? 'No task was sent', wait }, pairedItem: { item } };
		const { id, status, queue, queue_id: queueId, created_at: createdAt } = task.json;
		return { json: { id, status, queue: queue ?? meta.queueName, queue_id: queueId ?? meta.queueId, created_at: createdAt, wait }, pairedItem: { item } };
	});
}

/** Braces cannot appear in the expression's source: n8n would take them for its own delimiters. */
const quoted = (name: string) => JSON.stringify(name).replace(/[{}]/g, (c) => (c === '{' ? '\\u007b' : '\\u007d'));

/**
 * The run's memory, read back from the execution's data in a call to its waiting address; undefined
 * for an execution put to wait by a version of this node that did not keep it (before 0.3).
 */
export function readRunMemory(context: IWebhookFunctions, inputs: number): RunMemory | undefined {
	let items: unknown;
	try {
		items = context.evaluateExpression(`{{ $(${quoted(context.getNode().name)}).all() }}`, 0);
	} catch {
		return undefined;
	}
	if (!Array.isArray(items) || items.length !== inputs) return undefined;
	const tasks: WaitingTask[] = [];
	for (const [index, entry] of (items as INodeExecutionData[]).entries()) {
		const json = (entry?.json ?? {}) as IDataObject;
		const wait = json.wait as IDataObject | undefined;
		if (!wait || wait.item !== index || (wait.outcome !== 'waiting' && wait.outcome !== 'refused')) return undefined;
		const sent = wait.outcome === 'waiting' && typeof json.id === 'number';
		tasks.push({
			item: index,
			taskId: sent ? (json.id as number) : undefined,
			createdAt: sent && typeof json.created_at === 'string' ? json.created_at : undefined,
		});
	}
	return { tasks };
}
