import { TaskQueue } from '../../../../nodes/TaskQueue/TaskQueue.node';
import { makeNode, makeWorkflow, nodeTypesOf } from '../../../helpers/n8n';

// The editor evaluates waitingNodeTooltip as n8n's own send-and-wait nodes do: an expression over the
// node's parameters (workflow.expression.getSimpleParameterValue). Evaluated here by n8n-workflow itself.
const node = new TaskQueue();

function tooltip(parameters: Record<string, unknown>): unknown {
	const taskQueue = makeNode({ type: 'taskQueue', parameters: parameters as never });
	const workflow = makeWorkflow([taskQueue], nodeTypesOf({ taskQueue: node }));
	return workflow.expression.getSimpleParameterValue(
		taskQueue,
		node.description.waitingNodeTooltip!,
		'internal',
		{},
	);
}

test('while Create and Wait waits, the editor names the queue where people complete the tasks, and when the run goes on', () => {
	const queue = { __rl: true, mode: 'list', value: '104', cachedResultName: 'Refund Decisions' };
	expect(tooltip({ resource: 'task', operation: 'sendAndWait', queue })).toBe(
		"Waiting for people to complete this run's tasks in queue 104, in the service's own app. The execution goes on when all of them are completed.",
	);
	expect(
		tooltip({
			resource: 'task',
			operation: 'sendAndWait',
			queue: { __rl: true, mode: 'id', value: '7' },
			waitFor: 'first',
		}),
	).toBe(
		"Waiting for people to complete this run's tasks in queue 7, in the service's own app. The execution goes on when the first of them is completed.",
	);
	expect(tooltip({ resource: 'task', operation: 'create', queue })).toBe('');
});

test('one timeout test: both hints of Limit Wait Time and docs/waiting.md give the same expression, and the examples use it', () => {
	const { readFileSync } = require('fs') as typeof import('fs');
	const { join } = require('path') as typeof import('path');
	const { TIMEOUT_TEST, limitWaitTimeOption } =
		require('../../../../nodes/TaskQueue/waiting/descriptions') as typeof import('../../../../nodes/TaskQueue/waiting/descriptions');
	const values = (limitWaitTimeOption.options as Array<{ values: Array<{ hint?: string }> }>)[0]
		.values;
	const hints = values.flatMap((v) => (v.hint ? [v.hint] : []));
	expect(hints).toHaveLength(2);
	for (const hint of hints) expect(hint).toContain(TIMEOUT_TEST);
	const docs = readFileSync(join(__dirname, '../../../../docs/waiting.md'), 'utf8');
	expect(docs).toContain(`\`\`\`\n${TIMEOUT_TEST}\n\`\`\``);
	// no other form of the test anywhere in the docs or the node's texts
	const forms = [...docs.matchAll(/\{\{ \$json\.wait\?\.outcome[^}]*\}\}/g)].map((m) => m[0]);
	expect(new Set(forms)).toEqual(new Set([TIMEOUT_TEST]));
	const example = readFileSync(
		join(__dirname, '../../../../examples/refund-decision-and-wait.json'),
		'utf8',
	);
	expect(example).toContain(TIMEOUT_TEST.slice(3, -3));
});
