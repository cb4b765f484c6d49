// The node's description as n8n shows it.
import type { INodePropertyOptions } from 'n8n-workflow';

import { TaskQueue } from '../../../nodes/TaskQueue/TaskQueue.node';

const { description } = new TaskQueue();

test("the subtitle names each operation by its action ('Create a task'), for every resource and operation", () => {
	const literal =
		/^=\{\{ (\{.*\})\[\$parameter\["resource"\] \+ ":" \+ \$parameter\["operation"\]\] \}\}$/.exec(
			String(description.subtitle),
		);
	expect(literal).not.toBeNull();
	const actions: Record<string, string> = {};
	for (const property of description.properties.filter((p) => p.name === 'operation')) {
		const resource = property.displayOptions?.show?.resource?.[0] as string;
		for (const option of property.options as INodePropertyOptions[])
			actions[`${resource}:${String(option.value)}`] = String(option.action);
	}
	expect(Object.keys(actions)).toHaveLength(10);
	expect(JSON.parse(literal![1])).toEqual(actions);
});
