// The examples open clean in the editor: no node sits on the sticky note that explains it.
import { readdirSync, readFileSync } from 'fs';
import { join } from 'path';

const DIR = join(__dirname, '..', '..', 'examples');
/** A node's box on n8n's canvas from its position (top left); wide enough for an agent's label. */
const NODE = { width: 100, height: 100 };

interface Node {
	name: string;
	type: string;
	position: [number, number];
	parameters: { width?: number; height?: number };
}

const examples = readdirSync(DIR)
	.filter((file) => file.endsWith('.json'))
	.map(
		(file) =>
			[file, JSON.parse(readFileSync(join(DIR, file), 'utf8')) as { nodes: Node[] }] as const,
	);

test.each(examples)('%s: no node covers a sticky note', (_file, workflow) => {
	const stickies = workflow.nodes.filter((n) => n.type === 'n8n-nodes-base.stickyNote');
	const covering: string[] = [];
	for (const sticky of stickies) {
		const [sx, sy] = sticky.position;
		const width = sticky.parameters.width ?? 240;
		const height = sticky.parameters.height ?? 160;
		for (const node of workflow.nodes.filter((n) => n.type !== 'n8n-nodes-base.stickyNote')) {
			const [x, y] = node.position;
			if (x + NODE.width > sx && x < sx + width && y + NODE.height > sy && y < sy + height)
				covering.push(`${node.name} on ${sticky.name}`);
		}
	}
	expect(covering).toEqual([]);
});

test.each(examples)(
	'%s: every node has its own id, every webhook its own webhookId',
	(_file, workflow) => {
		const nodes = workflow.nodes as Array<Node & { id: string; webhookId?: string }>;
		const ids = nodes.map((n) => n.id);
		expect(new Set(ids).size).toBe(ids.length);
		const webhookIds = nodes.flatMap((n) => (n.webhookId ? [n.webhookId] : []));
		expect(new Set(webhookIds).size).toBe(webhookIds.length);
	},
);
