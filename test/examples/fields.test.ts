// The examples open clean in the editor: each Create node's saved fields (`taskData.schema`) are the
// fields the mapper gives for its queue in the sandbox shipped with them. n8n 2.41's editor shows
// "Fields are outdated. Refresh to see the changes." when the saved list differs from the fetched
// one in length, or in a field's id, displayName, required, defaultMatch, display,
// canBeUsedToMatch or type (the rule is copied here from its ResourceMapper). Catches a change of
// the seed or of the mapper that the examples do not follow.
import { readdirSync, readFileSync } from 'fs';
import type { ILoadOptionsFunctions, ResourceMapperField } from 'n8n-workflow';
import { join } from 'path';

import { loadOptionsContext } from '../helpers/n8n';
import { node, startEnv, type TestEnv } from '../nodes/TaskQueue/env';

const EXAMPLES = join(__dirname, '..', '..', 'examples');

let env: TestEnv;
beforeAll(async () => (env = await startEnv()));
afterAll(async () => await env.close());

/** n8n 2.41's editor: whether saved resource-mapper fields are stale against the fetched ones. */
function isStale(saved: ResourceMapperField[], fetched: ResourceMapperField[]): boolean {
	if (saved.length !== fetched.length) return true;
	const byId = new Map(fetched.map((f) => [f.id, f]));
	return saved.some((s) => {
		const f = byId.get(s.id);
		return (
			!f ||
			s.displayName !== f.displayName ||
			s.required !== f.required ||
			s.defaultMatch !== f.defaultMatch ||
			s.display !== f.display ||
			s.canBeUsedToMatch !== f.canBeUsedToMatch ||
			s.type !== f.type
		);
	});
}

interface ExampleNode {
	name: string;
	type: string;
	parameters: {
		resource?: string;
		operation?: string;
		resumeField?: string;
		queue?: { value: string };
		taskData?: { schema: ResourceMapperField[] };
	};
}

const creates = readdirSync(EXAMPLES)
	.filter((file) => file.endsWith('.json'))
	.flatMap((file) =>
		(JSON.parse(readFileSync(join(EXAMPLES, file), 'utf8')) as { nodes: ExampleNode[] }).nodes
			.filter((n) => n.type.startsWith('n8n-nodes-task-queue.taskQueue') && n.parameters.taskData)
			.map((n) => [file, n.name, n] as const),
	);

test('there are Create nodes to check', () => expect(creates.length).toBeGreaterThanOrEqual(3));

test.each(creates)(
	'%s, "%s": saved fields are the queue\'s fields (not stale)',
	async (_file, _name, example) => {
		// Create and Wait (and the agent's review tool, which is it) offers the queue's inputs but its Resume Address Field
		const waits =
			example.parameters.operation === 'sendAndWait' || example.type.endsWith('HitlTool');
		const context = loadOptionsContext({
			types: { taskQueue: node },
			node: {
				type: 'taskQueue',
				parameters: {
					resource: 'task',
					operation: waits ? 'sendAndWait' : 'create',
					queue: { __rl: true, mode: 'id', value: example.parameters.queue!.value } as never,
					...(waits ? { resumeField: example.parameters.resumeField } : {}),
				},
			},
			credentials: env.credentials(),
		});
		const mapper = waits
			? node.methods.resourceMapping.getWaitTaskFields
			: node.methods.resourceMapping.getTaskFields;
		const { fields } = await mapper.call(context as unknown as ILoadOptionsFunctions);
		const saved = example.parameters.taskData!.schema;
		expect(isStale(saved, fields)).toBe(false);
		expect(saved.map((f) => f.id)).toEqual(fields.map((f) => f.id));
	},
);
