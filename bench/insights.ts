// Scenario 15 (issue 61): Queue > Get Insights over 100,000 completions in the window, in a real
// n8n, against what a team does without it (Get Completed, Return All, then a Code node computing the
// same figures). Per contender: the node's time, the execution's, n8n's peak RSS growth during the
// call, and the service reads. Named only (`--only 15`): it completes 100,000 tasks first.
import {
	errorText,
	fmtMs,
	fmtNum,
	lastExecutionId,
	log,
	median,
	n8nPid,
	PERSON,
	ratio,
	sampleMemory,
	sleep,
	table,
} from './lib';
import type { BenchContext, Section } from './scenarios';
import { callWebhook, ensureWorkflow, nodeError, theExecution } from './scenarios';
import * as wf from './workflows';

const COMPLETIONS = Number(process.env.TQ_BENCH_INSIGHTS ?? 100_000);
const QUEUE = 101;

interface Run {
	contender: string;
	workMs: number;
	execMs: number;
	rssGrowthMb: number;
	requests: number;
	completed?: number;
	p50?: number;
	error?: string;
}

export async function scenarioInsights(ctx: BenchContext): Promise<Section> {
	const { n8n, sandbox } = ctx;
	const node = 'Task Queue node: Queue > Get Insights';
	const code = 'Get Completed (Return All) + Code node';
	const ids: Record<string, string> = {
		[node]: await ensureWorkflow(n8n, wf.insightsWithNode(ctx.creds), true),
		[code]: await ensureWorkflow(n8n, wf.insightsWithCode(ctx.creds), true),
	};
	const paths: Record<string, string> = {
		[node]: 'bench-insights-node',
		[code]: 'bench-insights-code',
	};
	const t0 = Date.now();
	await sandbox.client.reset();
	await sandbox.client.createTasks(QUEUE, COMPLETIONS);
	await sandbox.client.completeMany(QUEUE, COMPLETIONS, { by: PERSON });
	await sleep(11_000); // the operation measures completions once they are 10 s old
	log(`insights: ${COMPLETIONS} completions on queue ${QUEUE} (set up in ${Date.now() - t0} ms)`);

	const runOne = async (contender: string): Promise<Run> => {
		await sandbox.client.clearRequests();
		const run: Run = { contender, workMs: NaN, execMs: NaN, rssGrowthMb: NaN, requests: NaN };
		try {
			const after = await lastExecutionId(n8n);
			const mem = sampleMemory(n8nPid(n8n));
			await callWebhook(n8n, paths[contender], {});
			run.rssGrowthMb = mem.stop().growthMb;
			const keep = contender === node ? wf.WORK.node : wf.WORK.code;
			const exec = await theExecution(n8n, ids[contender], after, [keep]);
			run.error = nodeError(exec);
			run.execMs = exec.durationMs ?? NaN;
			run.workMs =
				(exec.nodes[wf.WORK.node]?.executionTime ?? NaN) +
				(contender === code ? (exec.nodes[wf.WORK.code]?.executionTime ?? NaN) : 0);
			const [out] = (exec.nodes[keep]?.json ?? []) as Array<Record<string, unknown>>;
			run.completed = Number(out?.completed);
			run.p50 = Number(
				contender === node ? (out?.secondsToComplete as { p50?: number })?.p50 : out?.p50,
			);
		} catch (error) {
			run.error = errorText(error);
		}
		run.requests = (await sandbox.client.requests()).length;
		if (!run.error && run.completed !== COMPLETIONS)
			run.error = `${run.completed} completions counted, expected ${COMPLETIONS}`;
		return run;
	};

	const runs: Run[] = [];
	for (let round = 1; round <= ctx.shortRounds; round++) {
		for (const contender of [node, code]) {
			const run = await runOne(contender);
			runs.push(run);
			log(
				`insights round ${round} ${contender}: work ${fmtMs(run.workMs)}, execution ${fmtMs(run.execMs)}, RSS +${fmtNum(run.rssGrowthMb)} MB, ${run.requests} requests, p50 ${run.p50} s${run.error ? `, ERROR ${run.error}` : ''}`,
			);
		}
	}
	const med = (c: string, key: keyof Run) =>
		median(runs.filter((r) => r.contender === c && !r.error).map((r) => Number(r[key])));
	const rows = [node, code].map((c) => [
		c,
		fmtMs(med(c, 'workMs')),
		fmtMs(med(c, 'execMs')),
		`+${fmtNum(med(c, 'rssGrowthMb'))} MB`,
		fmtNum(med(c, 'requests')),
		String(med(c, 'p50')),
		ratio(med(c, 'workMs'), med(code, 'workMs')),
		runs.filter((r) => r.contender === c && r.error).map((r) => r.error)[0] ?? '',
	]);
	const title = `15. Queue > Get Insights, ${fmtNum(COMPLETIONS)} completions in the window`;
	return {
		title,
		body: table(
			[
				'contender',
				'work (median)',
				'execution',
				"n8n's peak RSS growth",
				'service requests',
				'p50 (s)',
				'vs Get Completed + Code',
				'errors',
			],
			rows,
		),
		goals: [],
		notes: [
			`${ctx.shortRounds} rounds, the contenders in alternation; all ${fmtNum(COMPLETIONS)} completions by one person, completed at once (times to completion of a few seconds at most: the figures are not the point, the reads and the memory are).`,
			"Get Insights reads oldest first from the window's start (a binary search of one-task reads, then pages of 1,000) and keeps no task: buckets of durations. Get Completed + Code holds every completed task as an n8n item, then the Code node sorts their durations.",
			"Peak RSS growth: n8n's VmRSS sampled every 20 ms during the webhook call, minus VmRSS before (noisy: garbage of earlier runs).",
		],
		summary: [
			`${title}: Get Insights ${fmtMs(med(node, 'workMs'))}, +${fmtNum(med(node, 'rssGrowthMb'))} MB, ${fmtNum(med(node, 'requests'))} reads; Get Completed + Code ${fmtMs(med(code, 'workMs'))}, +${fmtNum(med(code, 'rssGrowthMb'))} MB`,
		],
	};
}
