// Writes each example's Create fields (`taskData.schema`) from the sandbox's seed, as the node's
// mapper gives them, so the examples open without n8n's "Fields are outdated" warning:
//   npx tsx tools/refresh-example-fields.ts
// test/examples/fields.test.ts fails when the seed or the mapper changes and this was not run.
import { readdirSync, readFileSync, writeFileSync } from 'fs';
import { join } from 'path';

import { blockToField, orderBlocks } from '../nodes/TaskQueue/helpers/blocks';
import type { Block } from '../nodes/TaskQueue/transport/schemas';
import { loadDefaultSeed } from '../sandbox/index';

const EXAMPLES = join(__dirname, '..', 'examples');
const seed = loadDefaultSeed();

function schemaFor(queueId: number): string {
	const queue = seed.queues.find((q) => q.id === queueId);
	if (!queue) throw new Error(`queue ${queueId} is not in the sandbox's seed`);
	const entries = orderBlocks(queue.blocks as unknown as Block[])
		.map(blockToField)
		.map((field) => JSON.stringify({ ...field, readOnly: false, removed: false }));
	return entries.join(',\n');
}

for (const file of readdirSync(EXAMPLES).filter((f) => f.endsWith('.json'))) {
	const path = join(EXAMPLES, file);
	let text = readFileSync(path, 'utf8');
	const workflow = JSON.parse(text) as {
		nodes: Array<{
			type: string;
			parameters: { queue?: { value: string }; taskData?: { schema: unknown[] } };
		}>;
	};
	let changed = 0;
	for (const node of workflow.nodes) {
		if (!node.type.startsWith('n8n-nodes-task-queue.taskQueue') || !node.parameters.taskData)
			continue;
		const queueId = Number(node.parameters.queue?.value);
		// the schema array of this node, found by its first saved entry (each one line in the file)
		const first = JSON.stringify((node.parameters.taskData.schema[0] as { id: string }).id);
		const start = text.indexOf('"schema": [', text.indexOf(`"id": ${first}`) - 400);
		const end = text.indexOf(']', text.indexOf('\n', start) + 1);
		const indent = /\n(\t*)"schema"/.exec(text.slice(start - 20, start + 10))?.[1] ?? '\t\t\t\t\t';
		const body = schemaFor(queueId)
			.split('\n')
			.map((line) => `${indent}\t${line}`)
			.join('\n');
		text = `${text.slice(0, start)}"schema": [\n${body}\n${indent}${text.slice(end)}`;
		changed++;
	}
	JSON.parse(text); // still JSON
	writeFileSync(path, text);
	console.log(`${file}: ${changed} Create node(s) written`);
}
