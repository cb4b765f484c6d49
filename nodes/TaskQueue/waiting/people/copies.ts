import type { IDataObject, INode, INodeExecutionData } from 'n8n-workflow';

import { asNodeError } from '../../helpers/errors';

import type { WaitingTask } from '../memory';

/**
 * Creates an item's tasks, one per person, one after the other. When one fails after others were
 * created, the error says which exist: no run waits for them, and they would otherwise be lost.
 */
export async function createCopies(
	people: number,
	createOne: () => Promise<IDataObject>,
	at: { node: INode; itemIndex: number },
): Promise<IDataObject[]> {
	const created: IDataObject[] = [];
	for (let copy = 0; copy < people; copy++) {
		try {
			created.push(await createOne());
		} catch (error) {
			if (created.length > 0) {
				const ids = created.map((task) => task.id).join(', ');
				const described = error as { description?: unknown };
				const before = typeof described.description === 'string' ? `${described.description} ` : '';
				described.description = `${before}Tasks ${ids} of this item were created before this one failed; no run waits for them: complete or flush them in the service.`;
			}
			throw asNodeError(at.node, error, at.itemIndex);
		}
	}
	return created;
}

/** Each sent item's other tasks (after the first), from the items' results. */
export function copiesOf(
	results: INodeExecutionData[][],
	items: INodeExecutionData[],
): Array<WaitingTask['copies']> {
	return items.map((item, index) => {
		const tasks = (results[index] ?? []).filter((entry) => typeof entry.json.id === 'number');
		const first = tasks.findIndex((entry) => entry.json.id === item.json.id);
		return tasks
			.filter((_, i) => i !== first)
			.map((entry) => ({
				taskId: entry.json.id as number,
				...(typeof entry.json.created_at === 'string' ? { createdAt: entry.json.created_at } : {}),
			}));
	});
}
