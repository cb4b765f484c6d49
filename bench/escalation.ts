// Scenario 12, Escalate (issue 49): (a) from a level's time to its task created on the level's
// queue, against n8n's own floor for acting at a time (the Wait node, After Time Interval, resumed
// by n8n's wait tracker); (b) from the supervisor's answer to the end of the execution, against n8n's
// floor of routing a completion back (bench/floor, as in scenario 6). Runs only with `--only 12`.
import type { WorkflowJson } from '../tools/n8n/provision';
import {
	executionsAfter,
	fmtMs,
	fmtNum,
	lastExecutionId,
	log,
	median,
	percentile,
	sleep,
	table,
} from './lib';
import type { BenchContext, Section } from './scenarios';
import {
	approval,
	askingWorkflow,
	chain,
	done,
	executionIn,
	floorRound,
	floorRouteWorkflow,
	floorWaitWorkflow,
	hook,
	post,
	routeBackWorkflow,
	until,
} from './waiting';

const REFUNDS = 104;
const SUPERVISORS = 107;
const SUPERVISOR = 'erin@example.com';
/** n8n's Wait node waits in its own process below 65 s; from 65 s its wait tracker resumes it. */
const LEVEL_MINUTES = 2;
/** Between the runs of one scenario: their level times fall at different points of the check's minute. */
const STAGGER_MS = 13_000;

function escalatingWorkflow(ctx: BenchContext): WorkflowJson {
	const level = { after: LEVEL_MINUTES, unit: 'minutes', people: 1, queue: String(SUPERVISORS) };
	return askingWorkflow(
		ctx,
		'bench: Create and Wait, escalating to Supervisors',
		'bench-escalate',
		approval({ escalate: { levels: [level] } }),
	);
}

/** n8n's floor for acting at a time: the Wait node, After Time Interval, the same time as the level. */
function timerWorkflow(): WorkflowJson {
	return {
		name: "bench: n8n's Wait node, after a time",
		nodes: [
			hook('bench-wait-timer'),
			{
				name: 'Started',
				type: 'n8n-nodes-base.set',
				typeVersion: 3.4,
				position: [220, 0],
				parameters: {
					assignments: {
						assignments: [
							{ id: 's', name: 'at', value: '={{ $now.toMillis() }}', type: 'number' },
						],
					},
					options: {},
				},
			},
			{
				name: 'Wait',
				type: 'n8n-nodes-base.wait',
				typeVersion: 1.1,
				position: [440, 0],
				parameters: { resume: 'timeInterval', amount: LEVEL_MINUTES, unit: 'minutes' },
			},
			done,
		],
		connections: chain(['Start', 'Started', 'Wait', 'Done']),
		settings: { executionOrder: 'v1' },
	};
}

export async function scenarioEscalation(ctx: BenchContext, runs: number): Promise<Section> {
	const created: string[] = [];
	try {
		return await measureEscalation(ctx, created, runs);
	} finally {
		for (const id of created)
			await ctx.n8n.api.post(`/workflows/${id}/deactivate`, {}).catch(() => undefined);
	}
}

async function measureEscalation(
	ctx: BenchContext,
	created: string[],
	runs: number,
): Promise<Section> {
	const { n8n } = ctx;
	const client = ctx.sandbox.client;
	const create = async (json: WorkflowJson) => {
		const id = String((await n8n.api.post('/workflows', json)).data.id);
		created.push(id);
		await n8n.api.post(`/workflows/${id}/activate`, {});
		return id;
	};
	for (const queue of [REFUNDS, SUPERVISORS]) {
		const webhookId = `bench-escalation-route-${queue}`;
		await create(routeBackWorkflow(ctx, queue, webhookId));
		await until(
			`the route back of queue ${queue} registered`,
			async () =>
				(await client.getQueue(queue)).webhook?.target?.includes(webhookId) ? true : undefined,
			30_000,
		);
	}
	const escalating = await create(escalatingWorkflow(ctx));
	const timer = await create(timerWorkflow());
	const floor = await create(floorWaitWorkflow(ctx));
	await create(floorRouteWorkflow());
	await sleep(1500); // production webhooks register asynchronously
	const ourTarget = String((await client.getQueue(REFUNDS)).webhook?.target ?? '');
	await client.clearRequests();

	// (a) the runs start apart, each beside a Wait node run of the same time
	const after = await lastExecutionId(n8n);
	for (let i = 0; i < runs; i++) {
		await post(n8n, 'bench-escalate', { count: 1 });
		await post(n8n, 'bench-wait-timer', {});
		if (i < runs - 1) await sleep(STAGGER_MS);
	}
	const waitingRuns = await until(
		`${runs} escalating runs waiting`,
		async () => {
			const found = await executionsAfter(n8n, escalating, after, { includeData: false });
			const waiting = found.filter((x) => x.status === 'waiting').map((x) => x.id);
			return waiting.length === runs ? waiting.sort((a, b) => a - b) : undefined;
		},
		120_000,
		500,
	);
	const levelTasks = new Map<number, { taskId: number; createdAt: number }>();
	await until(
		`the supervisor tasks of ${runs} runs`,
		async () => {
			for (const r of await client.requests()) {
				const url = String((r.body as { data?: { resume_url?: unknown } })?.data?.resume_url);
				const run = waitingRuns.find((id) => url.includes(`/webhook-waiting/${id}/`));
				if (r.route !== 'createTask' || !r.path.includes(`/queues/${SUPERVISORS}/`) || !run)
					continue;
				if (levelTasks.has(run)) continue;
				const task = (await client.tasks(SUPERVISORS)).find((t) => t.data.resume_url === url);
				if (task) levelTasks.set(run, { taskId: task.id, createdAt: Date.parse(r.timestamp) });
			}
			return levelTasks.size === runs ? true : undefined;
		},
		LEVEL_MINUTES * 60_000 + STAGGER_MS * runs + 180_000,
		1000,
	);

	// (b) the supervisor approves each in turn: the answer to the execution's end
	const lateness: number[] = [];
	const answerToEnd: number[] = [];
	for (const run of waitingRuns) {
		const { taskId, createdAt } = levelTasks.get(run)!;
		await sleep(200);
		const t0 = Date.now();
		await client.complete(SUPERVISORS, taskId, { by: SUPERVISOR, data: { decision: 'approve' } });
		const end = await executionIn(n8n, escalating, run - 1, 'stopped', 120_000, ['Ask a person']);
		if (end.id !== run || end.status !== 'success')
			throw new Error(`escalating execution ${end.id} ended ${end.status}`);
		const [out] = end.nodes['Ask a person']?.json ?? [];
		const escalation = out?.escalation as { askedAt?: string; decidedAtLevel?: number } | undefined;
		if (out?.approved !== true || escalation?.decidedAtLevel !== 1)
			throw new Error(`execution ${run} did not go on approved at level 1`);
		lateness.push(createdAt - Date.parse(String(escalation.askedAt)));
		answerToEnd.push(Date.parse(String(end.stoppedAt)) - t0);
	}
	const timers = await until(
		`${runs} Wait node runs ended`,
		async () => {
			const ended = (await executionsAfter(n8n, timer, after, { keepJson: ['Started'] })).filter(
				(x) => x.status === 'success',
			);
			return ended.length === runs ? ended : undefined;
		},
		120_000,
		2000,
	);
	const timerLateness = timers.map(
		(x) =>
			(x.nodes.Done?.startTime ?? NaN) -
			(Number(x.nodes.Started?.json?.[0]?.at) + LEVEL_MINUTES * 60_000),
	);

	const floorAnswerToEnd: number[] = [];
	await floorRound(ctx, floor, ourTarget); // warm-up
	for (let i = 0; i < runs; i++) floorAnswerToEnd.push(await floorRound(ctx, floor, ourTarget));
	log(
		`escalation: level task after its time ${lateness.map((ms) => fmtMs(ms)).join(' ')}; Wait node after its time ${timerLateness.map((ms) => fmtMs(ms)).join(' ')}`,
	);
	log(
		`escalation: supervisor's answer to the end ${answerToEnd.map((ms) => fmtMs(ms)).join(' ')}; floor ${floorAnswerToEnd.map((ms) => fmtMs(ms)).join(' ')}`,
	);
	return report(runs, { lateness, timerLateness, answerToEnd, floorAnswerToEnd });
}

function report(runs: number, m: Record<string, number[]>): Section {
	const p50 = (values: number[]) => median(values);
	const p95 = (values: number[]) => percentile(values, 95);
	const title = '12. Escalate';
	const row = (name: string, values: number[], floor: number[], against: string) => [
		name,
		fmtMs(p50(values)),
		fmtMs(p95(values)),
		String(runs),
		`${fmtNum(p50(values) / p50(floor), 2)}x`,
		`${fmtNum(p95(values) / p95(floor), 2)}x`,
		against,
	];
	return {
		title,
		body: table(
			['what', 'p50', 'p95', 'runs', 'vs its floor p50', 'p95', 'its floor'],
			[
				row(
					`Escalate: the level's time to its task created on Supervisors (level after ${LEVEL_MINUTES} minutes; the trigger's check every minute)`,
					m.lateness,
					m.timerLateness,
					"n8n's Wait node",
				),
				row(
					`n8n's Wait node, After Time Interval (${LEVEL_MINUTES} minutes): its time to the next node's start`,
					m.timerLateness,
					m.timerLateness,
					'itself',
				),
				row(
					"Escalate: the supervisor's answer to the execution's end",
					m.answerToEnd,
					m.floorAnswerToEnd,
					"n8n's floor",
				),
				row(
					"n8n's floor (bench/floor: a do-nothing trigger forwards the delivery to a do-nothing waiting node)",
					m.floorAnswerToEnd,
					m.floorAnswerToEnd,
					'itself',
				),
			],
		),
		goals: [],
		notes: [
			`The runs start ${STAGGER_MS / 1000} s apart, each beside a Wait node run, so their level times fall at different points of the trigger's check minute. A level's task is created by the run when the check wakes it, so its lateness is the wait for the next check round (up to its Poll Times, every minute by default) plus the run's work; n8n's Wait node is resumed by n8n's wait tracker, which schedules the exact time once the execution is due within 70 s.`,
			"The level's time is the output's `escalation.askedAt`; the task's creation is the sandbox's log of the request.",
		],
		summary: [
			`${title}: level task ${fmtMs(p50(m.lateness))} after its time (p50; Wait node ${fmtMs(p50(m.timerLateness))}); supervisor's answer to the end ${fmtMs(p50(m.answerToEnd))} (floor ${fmtMs(p50(m.floorAnswerToEnd))})`,
		],
	};
}
