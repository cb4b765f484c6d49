// What a call to a waiting run's address costs when it is repeated (issue 47, item 7): a run of
// N items x K people (Create and Wait, Several People per Item, All Must Approve) on the sandbox, one
// approval per item, then calls of one item's address in a row. CPU of this process per call
// (process.cpuUsage: the node's work and the sandbox's, which runs here), for:
// - a call that finds a new completion (the run decides every item again);
// - a call that finds the list unchanged (the run's last outcome is reused).
// Prints the figures and their ratio; nothing passes or fails.
//
//   npx tsx bench/call-cost.ts [--items 1000] [--people 20] [--calls 10]

import { callWaitingNode, queryOf } from '../test/helpers/waiting';
import { locator, startEnv, TRIGGER_OF_THIS_N8N } from '../test/nodes/TaskQueue/env';

const arg = (name: string, fallback: number) => {
	const at = process.argv.indexOf(`--${name}`);
	return at > 0 ? Number(process.argv[at + 1]) : fallback;
};
const ITEMS = arg('items', 1000);
const PEOPLE = arg('people', 20);
const CALLS = arg('calls', 10);
const QUEUE = 104;

const cpuMs = (since: NodeJS.CpuUsage) => {
	const used = process.cpuUsage(since);
	return (used.user + used.system) / 1000;
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
	const env = await startEnv();
	try {
		await env.client.setWebhook(QUEUE, TRIGGER_OF_THIS_N8N);
		const input = Array.from({ length: ITEMS }, (_, i) => ({ message: `Refund ${i}`, total: i }));
		const started = Date.now();
		const waiting = await env.run(
			{
				resource: 'task',
				operation: 'sendAndWait',
				queue: locator(QUEUE),
				taskData: {
					mappingMode: 'defineBelow',
					value: { customer_message: '={{ $json.message }}', order_total: '={{ $json.total }}' },
					matchingColumns: [],
					schema: [],
				},
				resumeField: 'resume_url',
				responseType: 'approval',
				approvalField: 'decision',
				approveOption: 'approve',
				options: { severalPeople: { values: { people: PEOPLE, decideWhen: 'allApprove' } } },
			},
			input,
		);
		if (waiting.error) throw waiting.error;
		const tasks = (await env.client.tasks(QUEUE)).filter((t) => t.id >= 1000);
		console.log(
			`a run of ${ITEMS} items x ${PEOPLE} people: ${tasks.length} tasks in ${Date.now() - started} ms`,
		);
		// one approval per item: the first task of each
		const firsts = new Map<string, (typeof tasks)[number]>();
		for (const task of tasks) {
			const item = /tq=(\d+)-/.exec(String(task.data.resume_url))?.[1] ?? '';
			if (!firsts.has(item)) firsts.set(item, task);
		}
		for (const task of firsts.values())
			await env.client.complete(QUEUE, task.id, {
				by: 'alice@example.com',
				data: { decision: 'approve' },
			});
		const one = [...firsts.values()][0];
		const listed = (await env.client.tasks(QUEUE)).find((t) => t.id === one.id);
		const call = async () => {
			const before = process.cpuUsage();
			const answer = await callWaitingNode(waiting, queryOf(String(one.data.resume_url)), {
				tasks: [{ id: one.id, completed_at: listed?.completed_at }],
			});
			if (answer.response.statusCode !== 202)
				throw new Error(`answered ${answer.response.statusCode}`);
			return cpuMs(before);
		};
		const changed: number[] = [];
		const unchanged: number[] = [];
		const answered = new Set([...firsts.values()].map((t) => t.id));
		const itemOf = (t: { data: Record<string, unknown> }) =>
			/tq=(\d+)-/.exec(String(t.data.resume_url))?.[1];
		// second tasks of other items than the one called
		const others = tasks.filter((t) => !answered.has(t.id) && itemOf(t) !== itemOf(one));
		for (let i = 0; i < CALLS; i++) {
			// another item gets a second approval: the list changed, the run decides again
			await env.client.complete(QUEUE, others[i].id, {
				by: 'bob@example.com',
				data: { decision: 'approve' },
			});
			changed.push(await call());
			unchanged.push(await call());
		}
		const a = median(changed);
		const b = median(unchanged);
		console.log(
			`CPU per call, median of ${CALLS}: the list changed (a decision) ${a.toFixed(1)} ms; unchanged (the last outcome reused) ${b.toFixed(1)} ms; ratio ${(b / a).toFixed(2)}x`,
		);
	} finally {
		await env.close();
	}
}

void main();
