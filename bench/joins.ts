// Scenario 14 (issue 59): a second Task Queue Trigger published while the first works through a busy
// queue. The real server showed it 1.5-2 minutes late (it joined at its first check): the holder,
// busy with a burst of deliveries, did not answer its join in time. Since stop 69 a refused join is
// tried again every 2 s for a minute (`joinAgainSoon`, trigger/listener.ts). Measured here: a burst of
// completions to the holder, the second trigger published a second later, then completions one at a
// time; from each of those to the start of the execution that emitted it, in both workflows.
import {
	errorText,
	fmtMs,
	fmtNum,
	lastExecutionId,
	log,
	median,
	PERSON,
	QUEUE_ID,
	sleep,
	table,
} from './lib';
import { measure, type Side, trickle, waitForBoth } from './listeners';
import type { BenchContext, Section } from './scenarios';
import { ensureWorkflow, waitForTarget } from './scenarios';
import * as wf from './workflows';

const BUSY = Number(process.env.TQ_BENCH_JOIN_BURST ?? 3_000);
const COUNT = 120;
const GAP_MS = 500;

interface Round {
	holder: Side;
	listener: Side;
	/** From the second trigger's activation call to its first emitted completion. */
	firstEmitMs: number;
}

/** When a workflow's first execution after `after` started (ms), or undefined. */
async function firstStart(ctx: BenchContext, workflowId: string, after: number) {
	const res = await ctx.n8n.api.get('/executions', { params: { workflowId, limit: 250 } });
	const starts = (res.data.data as Array<{ id: string; startedAt: string }>)
		.filter((x) => Number(x.id) > after)
		.map((x) => Date.parse(x.startedAt));
	return starts.length ? Math.min(...starts) : undefined;
}

export async function scenarioJoinWhileBusy(ctx: BenchContext): Promise<Section> {
	const { n8n, sandbox } = ctx;
	const holder = await ensureWorkflow(n8n, wf.triggerWithNode(ctx.creds), false);
	const listener = await ensureWorkflow(n8n, wf.triggerListening(ctx.creds), false);
	const rounds: Round[] = [];
	const errors: string[] = [];
	for (let round = 1; round <= ctx.shortRounds; round++) {
		try {
			await sandbox.client.reset();
			await sandbox.client.createTasks(QUEUE_ID, BUSY);
			await n8n.api.post(`/workflows/${holder}/activate`, {});
			await waitForTarget(sandbox, (t) => t.includes('trigger000001'));
			const before = await lastExecutionId(n8n);
			await sandbox.client.completeMany(QUEUE_ID, BUSY, { by: PERSON });
			await sleep(1_000); // the holder is taking the burst's deliveries
			const activatedAt = Date.now();
			await n8n.api.post(`/workflows/${listener}/activate`, {});
			const ids = await trickle(ctx, COUNT, GAP_MS);
			await waitForBoth(ctx, [holder, listener], before, ids);
			const first = await firstStart(ctx, listener, before);
			const result: Round = {
				holder: await measure(ctx, holder, before, ids),
				listener: await measure(ctx, listener, before, ids),
				firstEmitMs: first === undefined ? NaN : first - activatedAt,
			};
			rounds.push(result);
			log(
				`join while busy round ${round}: holder p50 ${fmtMs(result.holder.p50)} p95 ${fmtMs(result.holder.p95)}; the trigger published meanwhile p50 ${fmtMs(result.listener.p50)} p95 ${fmtMs(result.listener.p95)}, first emission ${fmtMs(result.firstEmitMs)} after its activation; lost ${result.holder.lost}/${result.listener.lost}, duplicated ${result.holder.duplicated}/${result.listener.duplicated}`,
			);
		} catch (error) {
			errors.push(errorText(error));
		} finally {
			await n8n.api.post(`/workflows/${listener}/deactivate`, {}).catch(() => undefined);
			await n8n.api.post(`/workflows/${holder}/deactivate`, {}).catch(() => undefined);
			await waitForTarget(sandbox, (t) => !t.includes('secret='), 60_000).catch(() => undefined);
		}
	}
	const med = (who: 'holder' | 'listener', k: keyof Side) => median(rounds.map((r) => r[who][k]));
	const sum = (who: 'holder' | 'listener', k: keyof Side) =>
		rounds.reduce((a, r) => a + r[who][k], 0);
	const ratio = (k: 'p50' | 'p95') => med('listener', k) / med('holder', k);
	const rows = (
		[
			['holder', 'the trigger holding the queue (taking the burst)'],
			['listener', 'the trigger published a second after the burst'],
		] as const
	).map(([who, name]) => [
		name,
		fmtMs(med(who, 'p50')),
		fmtMs(med(who, 'p95')),
		fmtMs(med(who, 'max')),
		fmtNum(sum(who, 'lost')),
		fmtNum(sum(who, 'duplicated')),
		who === 'holder' ? '1.00x' : `${fmtNum(ratio('p50'), 2)}x`,
		who === 'holder' ? '1.00x' : `${fmtNum(ratio('p95'), 2)}x`,
	]);
	const title = `14. A trigger published while its queue's holder takes a burst of ${fmtNum(BUSY)}, then ${COUNT} completions one every ${GAP_MS} ms`;
	return {
		title,
		body: table(
			[
				'contender',
				'latency p50',
				'p95',
				'max',
				'lost',
				'duplicated',
				'p50 vs holder',
				'p95 vs holder',
			],
			rows,
		),
		goals: [
			{
				goal: "The trigger published meanwhile within 1.5x of the holder's latency (p50 / p95)",
				measured: `${fmtNum(ratio('p50'), 2)}x / ${fmtNum(ratio('p95'), 2)}x`,
				met: rounds.length > 0 ? ratio('p50') <= 1.5 && ratio('p95') <= 1.5 : null,
			},
			{
				goal: 'Zero lost, zero duplicated',
				measured: `${sum('holder', 'lost')}/${sum('listener', 'lost')} lost, ${sum('holder', 'duplicated')}/${sum('listener', 'duplicated')} duplicated`,
				met:
					rounds.length > 0
						? (['holder', 'listener'] as const).every(
								(w) => sum(w, 'lost') + sum(w, 'duplicated') === 0,
							)
						: null,
			},
		],
		notes: [
			`From the second trigger's activation call to the start of its first execution: ${rounds.map((r) => fmtMs(r.firstEmitMs)).join(', ')} (a check round is a minute).`,
			...errors.map((e) => `A round failed: ${e}`),
		],
		summary: [
			`${title}: holder p50 ${fmtMs(med('holder', 'p50'))} p95 ${fmtMs(med('holder', 'p95'))}; the trigger published meanwhile ${fmtMs(med('listener', 'p50'))} / ${fmtMs(med('listener', 'p95'))}`,
		],
	};
}
