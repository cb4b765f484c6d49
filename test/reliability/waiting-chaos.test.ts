// The chaos suite of Create and Wait: many waiting runs at once (single items and
// batches, "all" and "first", approval and values) on one queue shared with other work, while the
// sandbox drops, duplicates, delays and reorders deliveries and answers the confirming reads with
// 5xx, n8n is unreachable or "not ready" for a while, other work completes hundreds of tasks in the
// queue, people paste and alter addresses and overwrite their tasks' read-only address, and forged
// and replayed calls hit the waiting addresses. Completions travel as in n8n (sandbox -> Task Queue
// Trigger webhook() -> waiting address -> the node's webhook()), and n8n's poll of the trigger (its
// check for lost completions) runs every few rounds, as n8n runs it every minute.
//
// Per run it asserts: resumed exactly once; every output item the run's own task for its input item,
// checked downstream with n8n's paired-item resolution ($('Start').item); none stuck once people are
// done and two checks have run. Per completion: none emitted twice by the trigger, none emitted that
// a run resumed with, every other completion the trigger received emitted once. Seeded: TQ_CHAOS_SEEDS (comma-separated), TQ_CHAOS_RUNS.
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { mulberry32 } from '../../sandbox/faults';
import { FORWARD_RETRY_DELAYS_MS } from '../../nodes/TaskQueue/trigger/relay/forward';
import type { ActionRun } from '../helpers/n8n';
import { resumeExecution, startWaitingRun, WaitingEndpoint } from '../helpers/waiting';
import {
	locator,
	startTriggerEnv,
	startWebhookServer,
	WebhookTriggerUnderTest,
	type TriggerTestEnv,
} from '../nodes/TaskQueue/trigger/env';
import { recordFigures } from './figures';
import { forgetAsAfterRestart } from '../../nodes/TaskQueue/runtime/processMemory';

const SEEDS = (process.env.TQ_CHAOS_SEEDS ?? '25,1,2').split(',').map(Number);
const RUNS = Number(process.env.TQ_CHAOS_RUNS ?? 40);
const QUEUE = 104;
const OTHER_WORK = 1500;

let env: TriggerTestEnv;
beforeAll(async () => (env = await startTriggerEnv()));
afterAll(async () => await env.close());

interface Run {
	executionId: string;
	action: ActionRun;
	input: IDataObject[];
	waitFor: 'all' | 'first';
	responseType: 'values' | 'approval';
	tasks: Array<{ id: number; address: string }>;
}

const sleep = async (ms: number) => await new Promise((resolve) => setTimeout(resolve, ms));

test.each(SEEDS)(
	`chaos: ${RUNS} waiting runs under random faults, seed %i: each resumes once, with its own tasks, none stuck`,
	async (SEED) => {
		forgetAsAfterRestart();
		const rng = mulberry32(SEED);
		const pick = <T>(list: T[]): T => list[Math.floor(rng() * list.length)];
		const delays = FORWARD_RETRY_DELAYS_MS.splice(0, FORWARD_RETRY_DELAYS_MS.length, 50, 150, 400);
		const waiting = new WaitingEndpoint();
		const trigger = new WebhookTriggerUnderTest({
			credentials: env.credentials(),
			parameters: { event: 'taskCompleted', queue: locator(QUEUE), options: {} },
		});
		const server = await startWebhookServer(trigger, waiting);
		const counts = {
			dropped: 0,
			duplicated: 0,
			delayed: 0,
			readFaults: 0,
			downPeriods: 0,
			pasted: 0,
			altered: 0,
			overwritten: 0,
			forged: 0,
			otherCompletions: 0,
			checks: 0,
		};
		try {
			await env.client.reset();
			await trigger.activate();
			await env.client.createTasks(QUEUE, OTHER_WORK); // older than the runs' tasks: completeMany takes these first

			const runs: Run[] = [];
			for (let r = 0; r < RUNS; r++) {
				const size = rng() < 0.35 ? 1 : 2 + Math.floor(rng() * 4);
				const input = Array.from({ length: size }, (_, i) => ({ message: `run ${r} item ${i}` }));
				const waitFor = rng() < 0.3 ? 'first' : 'all';
				const responseType = rng() < 0.3 ? 'approval' : 'values';
				const executionId = String(1000 + r);
				const action = await startWaitingRun({
					credentials: env.credentials(),
					executionId,
					input,
					waitingBaseUrl: server.waitingBaseUrl,
					parameters: {
						waitFor,
						responseType,
						...(responseType === 'approval'
							? { approvalField: 'decision', approveOption: 'approve', feedbackField: 'note' }
							: {}),
					},
					probe: true,
				});
				expect(action.run.status).toBe('waiting');
				waiting.add(executionId, action);
				const tasks = action.items.map((item) => ({ id: item.json.id as number, address: '' }));
				runs.push({ executionId, action, input, waitFor, responseType, tasks });
			}
			const stored = new Map((await env.client.tasks(QUEUE)).map((t) => [t.id, t]));
			for (const run of runs)
				for (const task of run.tasks) task.address = String(stored.get(task.id)?.data.resume_url);
			const runTaskIds = new Set(runs.flatMap((run) => run.tasks.map((t) => t.id)));

			await env.client.setFaults({
				seed: SEED,
				rules: [
					{ webhook: 'drop', probability: 0.12 },
					{ webhook: 'duplicate', probability: 0.08 },
					{ webhook: 'delay', probability: 0.12, delayMs: 300 },
					{ route: 'completed', kind: '503', probability: 0.08, retryAfter: 0 },
					{ route: 'completed', kind: 'html500', probability: 0.04 },
				],
			});

			// people at work, other work, pasted and altered addresses, forged calls, n8n unreachable
			const pending = runs.flatMap((run) => run.tasks.map((task) => ({ run, task })));
			for (let round = 0; pending.length > 0; round++) {
				for (let k = 0, n = 2 + Math.floor(rng() * 4); k < n && pending.length > 0; k++) {
					const { run, task } = pending.splice(Math.floor(rng() * pending.length), 1)[0];
					const data: IDataObject = {
						decision: pick(['approve', 'reject', 'escalate']),
						note: `answer ${task.id}`,
					};
					if (rng() < 0.1) {
						// a person overwrites the read-only address with another run's
						data.resume_url = pick(runs).tasks[0].address;
						counts.overwritten++;
					}
					void run;
					await env.client.complete(QUEUE, task.id, { by: 'alice@example.com', data });
				}
				if (rng() < 0.3) {
					const done = await env.client.completeMany(QUEUE, 20 + Math.floor(rng() * 60), {
						by: 'bob@example.com',
					});
					counts.otherCompletions += done.count;
				}
				if (rng() < 0.25) {
					const source = pick(runs).tasks[0].address;
					const alter = rng() < 0.5;
					const address = alter
						? source.replace(
								/signature=(.)/,
								(_, c: string) => `signature=${c === 'a' ? 'b' : 'a'}`,
							)
						: source;
					const { ids } = await env.client.createTasks(QUEUE, [
						{ customer_message: 'pasted', resume_url: address },
					]);
					await env.client.complete(QUEUE, ids[0], {
						by: 'bob@example.com',
						data: { decision: 'approve' },
					});
					counts[alter ? 'altered' : 'pasted']++;
				}
				if (rng() < 0.2) {
					const target = pick(runs);
					const address =
						rng() < 0.5
							? pick(target.tasks).address
							: pick(target.tasks).address.replace(
									/signature=(.)/,
									(_, c: string) => `signature=${c === 'f' ? 'e' : 'f'}`,
								);
					await fetch(address, {
						method: 'POST',
						headers: { 'content-type': 'application/json' },
						body: JSON.stringify({ tasks: [{ id: rng() < 0.5 ? pick(target.tasks).id : 424242 }] }),
					}).catch(() => undefined);
					counts.forged++;
				}
				if (rng() < 0.08) {
					server.setDown(
						pick(['503', 'reset', 'proxy'] as const),
						rng() < 0.3 ? 'waiting' : undefined,
					);
					counts.downPeriods++;
					await sleep(150);
					server.setDown(false);
				}
				if (round % 4 === 3) {
					await trigger.reconcile();
					counts.checks++;
				}
				await sleep(25);
			}

			// people are done: faults stop, deliveries and forwards settle, then n8n's checks run
			await env.client.clearFaults();
			await env.client.waitForWebhookCalls(0);
			await sleep(1500);
			for (let check = 0; check < 2; check++) {
				await trigger.reconcile();
				counts.checks++;
				await sleep(300);
			}

			const calls = await env.client.webhookCalls();
			counts.dropped = calls.filter((c) => c.fault === 'dropped').length;
			counts.duplicated = calls.filter((c) => c.fault === 'duplicate').length;
			counts.delayed = calls.filter((c) => c.fault === 'delayed').length;
			counts.readFaults = (await env.client.requests()).filter(
				(r) => r.path.endsWith('/tasks/completed') && (r.status ?? 0) >= 500,
			).length;

			const statusOf = new Map((await env.client.tasks(QUEUE)).map((t) => [t.id, t.status]));
			const finalStatus = (id: number) => statusOf.get(id);
			// per run: once, its own tasks, paired with its own inputs downstream
			const stuck = runs
				.filter((run) => !waiting.resumed.has(run.executionId))
				.map((r) => r.executionId);
			for (const id of stuck) {
				const run = runs.find((r) => r.executionId === id) as Run;
				const states = run.tasks.map((t) => `${t.id}:${finalStatus(t.id)}`);
				console.log(
					`stuck run ${id} (${run.waitFor}, ${run.input.length} items): tasks ${states.join(' ')}; calls ${JSON.stringify(waiting.calls.filter((c) => c.executionId === id).map((c) => [c.status, c.body]))}; deliveries ${JSON.stringify(calls.filter((c) => run.tasks.some((t) => t.id === c.taskId)).map((c) => [c.taskId, c.status, c.fault, c.error]))}`,
				);
			}
			const double = runs
				.filter((run) => (waiting.resumes.get(run.executionId) ?? 0) > 1)
				.map((r) => r.executionId);
			const wrong: string[] = [];
			const finalTasks = new Map((await env.client.tasks(QUEUE)).map((t) => [t.id, t]));
			for (const run of runs) {
				const resumed = waiting.resumed.get(run.executionId)?.[0];
				if (!resumed) continue;
				const problems = checkOutput(run, resumed, finalTasks);
				const downstream = await resumeExecution(run.action, [resumed]);
				const probe = downstream.data.resultData.runData.Probe?.[0]?.data?.main[0] ?? [];
				probe.forEach((item, i) => {
					if (JSON.stringify(item.json.start) !== JSON.stringify(run.input[i]))
						problems.push(`downstream item ${i} pairs with ${JSON.stringify(item.json.start)}`);
				});
				if (problems.length > 0) wrong.push(`${run.executionId}: ${problems.join('; ')}`);
			}

			// per completion: the trigger emitted none twice, never a run's task, and every other one it received
			const emittedKeys = trigger.emitted.map(
				(t) => `${t.id}:${String(t.completed_at).slice(0, 23)}`,
			);
			const emittedTwice = emittedKeys.filter((key, i) => emittedKeys.indexOf(key) !== i);
			// a run's task the run resumed with is never emitted (the tasks a "first" run left pending are: no run takes them)
			const taken = new Set(
				runs.flatMap((run) =>
					(waiting.resumed.get(run.executionId)?.[0] ?? [])
						.filter((i) => (i.json.wait as IDataObject).outcome === 'completed')
						.map((i) => i.json.id as number),
				),
			);
			const runTasksEmitted = trigger.emitted
				.filter((t) => taken.has(t.id as number))
				.map((t) => t.id);
			const received = new Set(
				calls.filter((c) => c.status === 200 && !runTaskIds.has(c.taskId)).map((c) => c.taskId),
			);
			const emittedIds = new Set(trigger.emitted.map((t) => t.id as number));
			const lost = [...received].filter((id) => !emittedIds.has(id));

			const items = runs.reduce((sum, run) => sum + run.input.length, 0);
			const figures = {
				seed: SEED,
				runs: RUNS,
				items,
				faults: counts,
				stuck: stuck.length,
				wrong: wrong.length,
				double: double.length,
				emittedTwice: emittedTwice.length,
				runTasksEmitted: runTasksEmitted.length,
				lost: lost.length,
			};
			console.log(`waiting chaos: ${JSON.stringify(figures)}`);
			recordFigures(`waiting-chaos-seed-${SEED}`, figures);
			expect({ stuck, double, wrong, emittedTwice, runTasksEmitted, lost }).toEqual({
				stuck: [],
				double: [],
				wrong: [],
				emittedTwice: [],
				runTasksEmitted: [],
				lost: [],
			});
			expect(counts.dropped + counts.duplicated + counts.delayed).toBeGreaterThan(0);
		} finally {
			FORWARD_RETRY_DELAYS_MS.splice(0, FORWARD_RETRY_DELAYS_MS.length, ...delays);
			await server.close();
		}
	},
	600_000,
);

/** What is wrong with a resumed run's output: each item i must be the run's own task for input i. */
function checkOutput(
	run: Run,
	items: INodeExecutionData[],
	stored: Map<number, { data: Record<string, unknown>; status: string }>,
): string[] {
	const problems: string[] = [];
	if (items.length !== run.input.length)
		problems.push(`${items.length} items for ${run.input.length} inputs`);
	items.forEach((item, i) => {
		const json = item.json;
		const wait = json.wait as IDataObject;
		if ((item.pairedItem as unknown as IDataObject)?.item !== i)
			problems.push(`item ${i} paired with ${JSON.stringify(item.pairedItem)}`);
		if (json.id !== run.tasks[i].id)
			problems.push(`item ${i} is task ${String(json.id)}, not ${run.tasks[i].id}`);
		if (wait.outcome === 'completed') {
			const data = json.data as IDataObject;
			if (data.customer_message !== run.input[i].message)
				problems.push(`item ${i} carries ${String(data.customer_message)}`);
			if (stored.get(run.tasks[i].id)?.status !== 'completed')
				problems.push(`item ${i} resumed as completed before its task was`);
			if (run.responseType === 'approval' && json.approved !== (data.decision === 'approve'))
				problems.push(`item ${i} approved ${String(json.approved)} for ${String(data.decision)}`);
		} else if (run.waitFor === 'all' || wait.outcome !== 'pending')
			problems.push(`item ${i} ${String(wait.outcome)}`);
	});
	if (!items.some((item) => (item.json.wait as IDataObject).outcome === 'completed'))
		problems.push('no completed item');
	return problems;
}
