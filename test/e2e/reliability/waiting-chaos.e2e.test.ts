// The chaos suite of Create and Wait in a real n8n with the packed package, in n8n
// 2.41.1 as one process (`npm run test:long`) and in queue mode (`npm run test:queue-mode`): waiting
// runs of four workflows ("all" and "first", values and approval, 1 to 4 items) on one queue shared
// with other work, while the sandbox drops, duplicates, delays and reorders deliveries and answers
// the confirming reads with 5xx, n8n restarts mid-wait, other work completes hundreds of tasks in the
// queue, people paste and alter addresses and overwrite their tasks' read-only address, and forged
// and replayed calls hit the waiting addresses. Completions come back as a user's would: the
// sandbox -> the active Task Queue Trigger workflow -> n8n's waiting address; what a delivery lost,
// the trigger's Check for Lost Completions (every minute) passes on.
//
// Per run: resumed once, with every item the run's own task for its input item, as n8n resolves
// the pairing downstream ($('Items').item in a Code node), none stuck past two checks after people
// are done. Per completion: the trigger emits none twice, none a run resumed with, and every other
// one it received. Seeded: TQ_E2E_CHAOS_SEED, TQ_E2E_CHAOS_RUNS.
import axios from 'axios';

import { mulberry32 } from '../../../sandbox/faults';
import {
	activate,
	createWorkflow,
	credentialRef,
	deleteWorkflow,
	executions,
	nodeOutput,
	executionsOfTrigger,
	queueLocator,
	saved,
	setupE2E,
	sleep,
	triggerWorkflow,
	TYPES,
	uniq,
	waitFor,
	webhookTarget,
	type E2E,
	type Execution,
} from '../helpers';
import { recordFigures } from '../../reliability/figures';

const SEED = Number(process.env.TQ_E2E_CHAOS_SEED ?? 11);
const RUNS = Number(process.env.TQ_E2E_CHAOS_RUNS ?? 16);
const QUEUE = 104;
const OTHER_WORK = 800;
/** Two of the trigger's checks (every minute), and the time a resumed run takes to finish. */
const BOUND_MS = 150_000;

type Mode = { waitFor: 'all' | 'first'; responseType: 'values' | 'approval' };
const MODES: Mode[] = [
	{ waitFor: 'all', responseType: 'values' },
	{ waitFor: 'all', responseType: 'approval' },
	{ waitFor: 'first', responseType: 'values' },
	{ waitFor: 'first', responseType: 'approval' },
];

interface Run {
	number: number;
	mode: Mode;
	workflowId: string;
	size: number;
	executionId: string;
	tasks: Array<{ id: number; address: string }>;
}

let e: E2E;
let triggerId = '';
const triggerWebhookId = '5c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e04';
const workflows = new Map<Mode, { id: string; path: string }>();

beforeAll(async () => {
	e = await setupE2E();
	// queue mode as the README's Scaling asks: each webhook address routed to one webhook process
	// (round-robin runs the copies of one delivery in two processes: measured there, not here)
	await e.queueMode?.setRouting('by-path');
	await e.client.reset();
	triggerId = await createWorkflow(
		e,
		triggerWorkflow(e, 'e2e chaos: completions of Refund Decisions', {
			type: TYPES.trigger,
			webhookId: triggerWebhookId,
			parameters: { event: 'taskCompleted', queue: queueLocator(QUEUE), options: {} },
		}),
	);
	await activate(e, triggerId);
	await waitFor('the trigger registered', async () =>
		(await webhookTarget(e, QUEUE)).includes(`/webhook/${triggerWebhookId}/`),
	);
	for (const mode of MODES) workflows.set(mode, await waitingWorkflow(mode));
});

afterAll(async () => {
	for (const { id } of workflows.values()) await deleteWorkflow(e, id);
	if (triggerId) await deleteWorkflow(e, triggerId);
	await e?.stop();
});

/** Start (webhook) -> Items -> Ask a person (Create and Wait) -> Paired (what a downstream node sees). */
async function waitingWorkflow(mode: Mode): Promise<{ id: string; path: string }> {
	const path = uniq(`chaos-${mode.waitFor}-${mode.responseType}`);
	const approval =
		mode.responseType === 'approval'
			? { approvalField: 'decision', approveOption: 'approve', feedbackField: 'note' }
			: {};
	const id = await createWorkflow(e, {
		name: `e2e chaos ${path}`,
		nodes: [
			{
				name: 'Start',
				type: 'n8n-nodes-base.webhook',
				typeVersion: 2,
				position: [0, 0],
				webhookId: path,
				parameters: { httpMethod: 'POST', path, responseMode: 'onReceived', options: {} },
			},
			// built-in nodes that need no task runner (n8n stops its runner first when it shuts down)
			{
				name: 'Items',
				type: 'n8n-nodes-base.splitOut',
				typeVersion: 1,
				position: [200, 0],
				parameters: { fieldToSplitOut: 'body.items', options: {} },
			},
			{
				name: 'Ask a person',
				type: TYPES.action,
				typeVersion: 1,
				position: [400, 0],
				parameters: {
					resource: 'task',
					operation: 'sendAndWait',
					queue: queueLocator(QUEUE),
					taskData: {
						mappingMode: 'defineBelow',
						value: { customer_message: '={{ $json.message }}' },
						matchingColumns: [],
						schema: [],
					},
					resumeField: 'resume_url',
					waitFor: mode.waitFor,
					responseType: mode.responseType,
					...approval,
					options: {},
				},
				credentials: credentialRef(e),
			},
			{
				name: 'Paired',
				type: 'n8n-nodes-base.set',
				typeVersion: 3.4,
				position: [600, 0],
				parameters: {
					mode: 'raw',
					jsonOutput:
						"={{ JSON.stringify({ input: $('Items').item.json.message, task: $json.id ?? null, outcome: $json.wait?.outcome ?? null, answer: $json.data?.customer_message ?? null, decision: $json.data?.decision ?? null, approved: $json.approved ?? null }) }}",
					options: {},
				},
			},
		],
		connections: {
			Start: { main: [[{ node: 'Items', type: 'main', index: 0 }]] },
			Items: { main: [[{ node: 'Ask a person', type: 'main', index: 0 }]] },
			'Ask a person': { main: [[{ node: 'Paired', type: 'main', index: 0 }]] },
		},
	});
	await activate(e, id);
	return { id, path };
}

async function byId(executionId: string): Promise<Execution> {
	return (await e.n8n.api.get(`/executions/${executionId}`, { params: { includeData: true } }))
		.data as Execution;
}

/** Whether n8n is running an execution of the waiting workflows now (one resumed, going on). */
async function runningNow(): Promise<boolean> {
	const res = await e.n8n.api.get('/executions', { params: { status: 'running', limit: 10 } });
	return (res.data.data as unknown[]).length > 0;
}

/** n8n's log lines about one execution, and what its recovery found after a restart. */
function n8nSaid(executionId: string): string {
	return e.n8n.logs
		.text()
		.split('\n')
		.filter(
			(line) =>
				line.includes(`execution ${executionId}`) ||
				line.includes(`/webhook-waiting/${executionId}/`) ||
				line.includes('Found unfinished executions') ||
				line.includes('Waiting for'),
		)
		.join(' | ')
		.slice(0, 1500);
}

const alter = (address: string) =>
	address.replace(/signature=(.)/, (_, c: string) => `signature=${c === 'a' ? 'b' : 'a'}`);

/** What is wrong with a finished run, as the Paired node saw each item. */
function problemsOf(
	run: Run,
	x: Execution,
	completed: Map<number, { data: Record<string, unknown>; status: string }>,
): string[] {
	const problems: string[] = [];
	const runData = x.data?.resultData.runData ?? {};
	if ((runData.Paired?.length ?? 0) !== 1)
		problems.push(`Paired ran ${runData.Paired?.length ?? 0} times`);
	const paired = nodeOutput(x, 'Paired');
	if (paired.length !== run.size) problems.push(`${paired.length} items for ${run.size} inputs`);
	paired.forEach((item, i) => {
		const message = `chaos run ${run.number} item ${i}`;
		if (item.input !== message) problems.push(`item ${i} pairs with input ${String(item.input)}`);
		if (item.task !== run.tasks[i].id)
			problems.push(`item ${i} is task ${String(item.task)}, not ${run.tasks[i].id}`);
		if (item.outcome === 'completed') {
			if (item.answer !== message) problems.push(`item ${i} answers ${String(item.answer)}`);
			if (completed.get(run.tasks[i].id)?.status !== 'completed')
				problems.push(`item ${i} resumed before its task was completed`);
			if (run.mode.responseType === 'approval' && item.approved !== (item.decision === 'approve'))
				problems.push(`item ${i} approved ${String(item.approved)} for ${String(item.decision)}`);
		} else if (run.mode.waitFor === 'all' || item.outcome !== 'pending')
			problems.push(`item ${i} ${String(item.outcome)}`);
	});
	if (!paired.some((item) => item.outcome === 'completed')) problems.push('no completed item');
	return problems;
}

test(`chaos in n8n${process.env.TQ_QUEUE_MODE ? ' (queue mode)' : ''}: ${RUNS} waiting runs under random faults, seed ${SEED}: each resumes once, with its own tasks, none stuck`, async () => {
	const rng = mulberry32(SEED);
	const pick = <T>(list: T[]): T => list[Math.floor(rng() * list.length)];
	/** Copies of a genuine address: emitted only where the process that passes them on knows the run (README, "Not guaranteed"). */
	const pastedGenuine = new Set<number>();
	/** A run's own tasks whose address a person replaced with another run's. */
	const overwrittenTasks = new Set<number>();
	const counts = {
		dropped: 0,
		duplicated: 0,
		delayed: 0,
		readFaults: 0,
		restarts: 0,
		pasted: 0,
		altered: 0,
		overwritten: 0,
		forged: 0,
		replayed: 0,
		otherCompletions: 0,
	};
	await e.client.createTasks(QUEUE, OTHER_WORK); // older than the runs' tasks: completeMany takes these first

	const runs: Run[] = [];
	for (let number = 0; number < RUNS; number++) {
		const mode = pick(MODES);
		const size = rng() < 0.35 ? 1 : 2 + Math.floor(rng() * 3);
		const { id: workflowId, path } = workflows.get(mode) as { id: string; path: string };
		await waitFor(`webhook ${path}`, async () => {
			const items = Array.from({ length: size }, (_, i) => ({
				message: `chaos run ${number} item ${i}`,
			}));
			const res = await axios.post(
				`${e.n8n.webhookBase}/${path}`,
				{ items },
				{ validateStatus: () => true },
			);
			return res.status === 404 ? undefined : res.status === 200;
		});
		runs.push({ number, mode, workflowId, size, executionId: '', tasks: [] });
	}
	for (const run of runs) {
		const tasks = await waitFor(
			`the tasks of chaos run ${run.number}`,
			async () => {
				const mine = (await e.client.tasks(QUEUE)).filter((t) =>
					String(t.data.customer_message).startsWith(`chaos run ${run.number} item `),
				);
				return mine.length === run.size ? mine : undefined;
			},
			60_000,
			250,
		);
		const item = (t: (typeof tasks)[number]) =>
			Number(/ item (\d+)$/.exec(String(t.data.customer_message))?.[1]);
		tasks.sort((a, b) => item(a) - item(b));
		run.tasks = tasks.map((t) => ({ id: t.id, address: String(t.data.resume_url) }));
		run.executionId = /\/webhook-waiting\/(\d+)\//.exec(run.tasks[0].address)?.[1] ?? '';
	}
	await waitFor(
		'every run waiting',
		async () =>
			(await Promise.all(runs.map(async (r) => (await byId(r.executionId)).status))).every(
				(s) => s === 'waiting',
			),
		60_000,
		500,
	);
	const runTaskIds = new Set(runs.flatMap((run) => run.tasks.map((t) => t.id)));

	await e.client.clearWebhookCalls();
	await e.client.setFaults({
		seed: SEED,
		rules: [
			{ webhook: 'drop', probability: 0.12 },
			{ webhook: 'duplicate', probability: 0.08 },
			{ webhook: 'delay', probability: 0.12, delayMs: 400 },
			{ route: 'completed', kind: '503', probability: 0.08, retryAfter: 0 },
			{ route: 'completed', kind: 'html500', probability: 0.04 },
		],
	});

	const pending = runs.flatMap((run) => run.tasks.map((task) => ({ run, task })));
	const restartAt = Math.floor(pending.length / 2);
	const restartWindow = { from: '', to: '' };
	let lastCompletion = Date.now();
	for (let round = 0; pending.length > 0; round++) {
		for (let k = 0, n = 1 + Math.floor(rng() * 3); k < n && pending.length > 0; k++) {
			const { run, task } = pending.splice(Math.floor(rng() * pending.length), 1)[0];
			const data: Record<string, unknown> = {
				decision: pick(['approve', 'reject', 'escalate']),
				note: `answer ${task.id}`,
			};
			if (rng() < 0.1) {
				// a person overwrites the read-only address with a run's (now and then its own run's)
				const owner = pick(runs);
				data.resume_url = owner.tasks[0].address;
				counts.overwritten++;
				// only another run's address takes the completion away from its run: the limits counted
				// apart below apply to these alone
				if (owner !== run) overwrittenTasks.add(task.id);
			}
			await e.client.complete(QUEUE, task.id, { by: 'alice@example.com', data });
			lastCompletion = Date.now();
		}
		if (rng() < 0.3)
			counts.otherCompletions += (
				await e.client.completeMany(QUEUE, 10 + Math.floor(rng() * 40), { by: 'bob@example.com' })
			).count;
		if (rng() < 0.25) {
			const altered = rng() < 0.5;
			const source = pick(runs).tasks[0].address;
			const { ids } = await e.client.createTasks(QUEUE, [
				{ customer_message: 'pasted', resume_url: altered ? alter(source) : source },
			]);
			if (!altered) pastedGenuine.add(ids[0]);
			await e.client.complete(QUEUE, ids[0], {
				by: 'bob@example.com',
				data: { decision: 'approve' },
			});
			counts[altered ? 'altered' : 'pasted']++;
		}
		if (rng() < 0.2) {
			const target = pick(runs);
			const forged = rng() < 0.5;
			const address = forged ? alter(pick(target.tasks).address) : pick(target.tasks).address;
			await axios
				.post(
					address,
					{ tasks: [{ id: rng() < 0.5 ? pick(target.tasks).id : 424242 }] },
					{ validateStatus: () => true, timeout: 30_000 },
				)
				.catch(() => undefined);
			counts[forged ? 'forged' : 'replayed']++;
		}
		if (round === restartAt) {
			// n8n restarts while runs wait; a completion made while it is down is delivered to nothing.
			// Restarted as an operator would, between executions: one n8n is running when it stops
			// can crash (n8n's own recovery, in queue mode above all), which is not the wait's doing.
			// Nor is one n8n starts while it stops: a delivery still on its way (delayed, or its forward
			// trying again) resumed a run after "no execution running" and n8n exited under it (CI of
			// stop 71: the run "crashed", docs/operating.md). So: no delivery on its way, then no
			// execution running, twice in a row.
			let quiet = 0;
			await waitFor(
				'no delivery on its way and no execution running',
				async () => {
					const { total, finished } = await e.client.webhookCallCount();
					quiet = total === finished && !(await runningNow()) ? quiet + 1 : 0;
					return quiet >= 2;
				},
				180_000, // a forward tries again after 1, 5 and 15 s (trigger/relay/lanes.ts)
				250,
			);
			// In queue mode the webhook processes restart (they take the deliveries and the waiting
			// calls): restarting every process crashed executions resumed meanwhile (n8n marks them
			// "crashed"; README, "Not guaranteed").
			const restart = e.queueMode
				? e.queueMode.restartWebhookProcesses.bind(e.queueMode)
				: e.n8n.restart.bind(e.n8n);
			restartWindow.from = new Date().toISOString();
			await restart(async () => {
				const next = pending.splice(0, 1)[0];
				if (next)
					await e.client.complete(QUEUE, next.task.id, {
						by: 'alice@example.com',
						data: { decision: 'approve', note: 'while n8n was down' },
					});
				lastCompletion = Date.now();
				await sleep(1000); // the outage lasts a second more (the load's pace, not a wait for a result)
			});
			counts.restarts++;
			restartWindow.to = new Date().toISOString();
			await waitFor(
				'the trigger re-activated',
				async () => (await webhookTarget(e, QUEUE)).includes(`/webhook/${triggerWebhookId}/`),
				60_000,
			);
		}
		await sleep(100); // paces the people's rounds
	}

	// people are done: faults stop; every run must end within two checks
	await e.client.clearFaults();
	const finished = new Map<string, Execution>();
	const deadline = lastCompletion + BOUND_MS;
	let lastSeenFinished = lastCompletion;
	while (finished.size < runs.length && Date.now() < deadline) {
		for (const run of runs) {
			if (finished.has(run.executionId)) continue;
			const x = await byId(run.executionId);
			if (x.status !== 'waiting' && saved(x)) {
				finished.set(run.executionId, x);
				lastSeenFinished = Date.now();
			}
		}
		await sleep(2000); // between two reads of every run (the bound is measured from lastCompletion)
	}
	const resumedWithin = Math.round((lastSeenFinished - lastCompletion) / 1000);

	const calls = await e.client.webhookCalls();
	counts.dropped = calls.filter((c) => c.fault === 'dropped').length;
	counts.duplicated = calls.filter((c) => c.fault === 'duplicate').length;
	counts.delayed = calls.filter((c) => c.fault === 'delayed').length;
	counts.readFaults = (await e.client.requests()).filter(
		(r) => r.path.endsWith('/tasks/completed') && (r.status ?? 0) >= 500,
	).length;

	const stored = new Map((await e.client.tasks(QUEUE)).map((t) => [t.id, t]));
	const stuck: string[] = [];
	// README, "Not guaranteed": a run whose every task's address a person replaced comes back only
	// through a process that knows it (the announcement, kept in memory): after a restart, or in
	// another webhook process, it waits until its Limit Wait Time. Counted apart, never asserted away.
	const unreachable = runs.filter(
		(r) => !finished.has(r.executionId) && r.tasks.every((t) => overwrittenTasks.has(t.id)),
	);
	for (const run of runs.filter((r) => !finished.has(r.executionId) && !unreachable.includes(r))) {
		const x = (await byId(run.executionId)) as Execution & {
			finished?: boolean;
			waitTill?: string;
			data?: {
				resultData: { lastNodeExecuted?: string };
				executionData?: { nodeExecutionStack?: Array<{ node: { name: string } }> };
			};
		};
		const status = `${x.status}, finished ${String(x.finished)}, waitTill ${String(x.waitTill)}, last node ${String(x.data?.resultData.lastNodeExecuted)}, stack ${JSON.stringify(x.data?.executionData?.nodeExecutionStack?.map((s) => s.node.name))}, ran ${Object.keys(x.data?.resultData.runData ?? {}).join('/')}`;
		const tasks = run.tasks.map(
			(t) =>
				`${t.id} ${stored.get(t.id)?.status}: ${JSON.stringify(calls.filter((c) => c.taskId === t.id).map((c) => [c.status, c.fault]))}`,
		);
		const call = await axios.post(
			run.tasks[0].address,
			{ tasks: [{ id: run.tasks[0].id }] },
			{ validateStatus: () => true },
		);
		const answered = `${call.status} ${String(call.headers['content-type'])} ${JSON.stringify(call.data).slice(0, 200)}`;
		stuck.push(
			`${run.executionId} (${run.mode.waitFor}, ${run.size} items, ${status}; its address answers ${answered}; tasks ${tasks.join(', ')}; n8n said: ${n8nSaid(run.executionId)})`,
		);
	}
	const wrong: string[] = [];
	const double: string[] = [];
	for (const run of runs) {
		const x = finished.get(run.executionId);
		if (!x) continue;
		if (x.status !== 'success')
			wrong.push(
				`${run.executionId}: ${x.status} ${JSON.stringify(x.data?.resultData.error ?? '').slice(0, 300)} (restart ${restartWindow.from} to ${restartWindow.to}; n8n said: ${n8nSaid(run.executionId)})`,
			);
		const problems = problemsOf(run, x, stored);
		if ((x.data?.resultData.runData.Paired?.length ?? 0) > 1) double.push(run.executionId);
		if (problems.length > 0) wrong.push(`${run.executionId}: ${problems.join('; ')}`);
	}
	// one execution per run
	for (const [mode, { id }] of workflows) {
		const started = runs.filter((run) => run.mode === mode).length;
		const seen = (await executions(e, id)).length;
		if (seen > started)
			double.push(`${mode.waitFor}/${mode.responseType}: ${seen} executions for ${started} runs`);
	}

	// per completion, what the trigger's workflow emitted
	const emitted = (await executionsOfTrigger(e, triggerId))
		.flatMap((x) => nodeOutput(x, 'Trigger'))
		.map((j) => ({ id: j.id as number, at: String(j.completed_at).slice(0, 23) }));
	const keys = emitted.map((t) => `${t.id}:${t.at}`);
	const emittedTwice = keys.filter((key, i) => keys.indexOf(key) !== i);
	const takenIds = new Set(
		[...finished.values()].flatMap((x) =>
			nodeOutput(x, 'Paired')
				.filter((i) => i.outcome === 'completed')
				.map((i) => i.task as number),
		),
	);
	// In queue mode a run's task whose address a person replaced reaches its run by id only through the
	// process that knows the run; another process may take it for a copy when the run it names has
	// ended, and emit it (documented). Counted apart, everything else must hold.
	const takenEmitted = emitted.filter((t) => takenIds.has(t.id)).map((t) => t.id);
	const overwrittenEmitted = process.env.TQ_QUEUE_MODE
		? takenEmitted.filter((id) => overwrittenTasks.has(id))
		: [];
	const runTasksEmitted = takenEmitted.filter((id) => !overwrittenEmitted.includes(id));
	const emittedIds = new Set(emitted.map((t) => t.id));
	const received = new Set(
		calls.filter((c) => c.status === 200 && !runTaskIds.has(c.taskId)).map((c) => c.taskId),
	);
	const notEmitted = [...received].filter((id) => !emittedIds.has(id));
	// In queue mode the check runs on the main process, which does not know a run that finished
	// through a webhook process: a genuine copy reaching it then is logged, not emitted (documented).
	const knownLimit = process.env.TQ_QUEUE_MODE
		? notEmitted.filter((id) => pastedGenuine.has(id))
		: [];
	// n8n answers deliveries while it shuts down, and an execution it started then is crashed if it
	// is stopped before it ends (its own 30 s shutdown timeout): n8n lists it as crashed, and the
	// completion it carried is not emitted (docs/operating.md, "What a restart costs"). Only a
	// completion whose every 200 came while n8n stopped, with crashed executions to show for it.
	const triggerRuns = (
		await e.n8n.api.get('/executions', { params: { workflowId: triggerId, limit: 250 } })
	).data.data as Array<{ id: string; status: string }>;
	const crashed = triggerRuns.filter((x) => x.status === 'crashed');
	const whileStopping = (at: string | null | undefined) =>
		!!at && !!restartWindow.from && at >= restartWindow.from && at <= restartWindow.to;
	const crashedByStop = notEmitted.filter(
		(id) =>
			!knownLimit.includes(id) &&
			crashed.length > 0 &&
			calls
				.filter((c) => c.taskId === id && c.status === 200)
				.every((c) => whileStopping(c.finishedAt)),
	);
	const lost = notEmitted.filter((id) => !knownLimit.includes(id) && !crashedByStop.includes(id));

	const items = runs.reduce((sum, run) => sum + run.size, 0);
	const figures = {
		seed: SEED,
		queueMode: !!process.env.TQ_QUEUE_MODE,
		runs: RUNS,
		items,
		faults: counts,
		resumedWithinSeconds: resumedWithin,
		stuck: stuck.length,
		everyAddressReplacedAndWaiting: unreachable.length,
		wrong: wrong.length,
		double: double.length,
		emittedTwice: emittedTwice.length,
		runTasksEmitted: runTasksEmitted.length,
		lost: lost.length,
		pastedCopiesLoggedNotEmitted: knownLimit.length,
		overwrittenTasksAlsoEmitted: overwrittenEmitted.length,
		// what to look at when one is lost (seen once under a load of 11-13, cause not found): its
		// deliveries, the restart, and the trigger's executions that did not end in success
		restartWindow,
		lostDeliveries: calls
			.filter((c) => lost.includes(c.taskId) || crashedByStop.includes(c.taskId))
			.map(({ taskId, status, fault, queuedAt, sentAt, finishedAt }) => ({
				taskId,
				status,
				fault,
				queuedAt,
				sentAt,
				finishedAt,
			})),
		answeredWhileN8nStoppedThenCrashed: crashedByStop,
		triggerExecutionsNotSucceeded: triggerRuns
			.filter((x) => x.status !== 'success')
			.map(({ id, status }) => ({ id, status })),
	};
	console.log(`waiting chaos in n8n: ${JSON.stringify(figures)}`);
	recordFigures(`waiting-chaos-e2e-seed-${SEED}`, figures);
	expect({ stuck, double, wrong, emittedTwice, runTasksEmitted, lost }).toEqual({
		stuck: [],
		double: [],
		wrong: [],
		emittedTwice: [],
		runTasksEmitted: [],
		lost: [],
	});
	expect(counts.dropped + counts.duplicated + counts.delayed).toBeGreaterThan(0);
}, 900_000);
