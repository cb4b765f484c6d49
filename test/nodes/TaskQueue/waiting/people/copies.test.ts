// An item's tasks are created one per person; a failure after some were created names them.
import { NodeApiError, type INode, type JsonObject } from 'n8n-workflow';

import { createCopies } from '../../../../../nodes/TaskQueue/waiting/people/copies';

const node: INode = {
	id: 'n',
	name: 'Task Queue',
	type: 'taskQueue',
	typeVersion: 1,
	position: [0, 0],
	parameters: {},
};

test('three people: three tasks, in order', async () => {
	let id = 10;
	const created = await createCopies(3, async () => ({ id: id++ }), { node, itemIndex: 0 });
	expect(created).toEqual([{ id: 10 }, { id: 11 }, { id: 12 }]);
});

test('the service fails the third: the error keeps its kind and names the two tasks that exist', async () => {
	let id = 10;
	const failing = new NodeApiError(node, { message: 'busy' } as JsonObject, {
		message: 'The service is busy (HTTP 503)',
		description: 'Try again later.',
		itemIndex: 1,
	});
	const error: unknown = await createCopies(
		3,
		async () => {
			if (id === 12) throw failing;
			return { id: id++ };
		},
		{ node, itemIndex: 1 },
	).catch((e: unknown) => e);
	expect(error).toBe(failing);
	expect(failing.description).toBe(
		'Try again later. Tasks 10, 11 of this item were created before this one failed; no run waits for them: complete or flush them in the service.',
	);
});
