// Scenario 9: two Task Queue Triggers of one n8n on one queue, side by side in one burst. The first
// holds the queue's webhook; the second listens: the holder nudges it after each delivery and it
// reads the queue itself. Goal (issue 46): the listener's p50/p95 from completion to execution start
// within 1.5x of the holder's.
import {
	errorText,
	executionsAfter,
	fmtMs,
	fmtNum,
	lastExecutionId,
	log,
	median,
	percentile,
	PERSON,
	QUEUE_ID,
	sleep,
	table,
} from './lib';
import type { BenchContext, Section } from './scenarios';
import { ensureWorkflow, waitForTarget } from './scenarios';
import * as wf from './workflows';

const BURST = 500;

export interface Side {
	p50: number;
	p95: number;
	max: number;
	executions: number;
	lost: number;
	duplicated: number;
}

/** Latencies of one workflow's executions after `after`: each item from its completion to its execution's start. */
export async function measure(
	ctx: BenchContext,
	id: string,
	after: number,
	ids: number[],
): Promise<Side> {
	const execs = await executionsAfter(ctx.n8n, id, after, { keepJson: [wf.WORK.trigger] });
	const latencies: number[] = [];
	const seen = new Map<number, number>();
	for (const e of execs)
		for (const json of e.nodes[wf.WORK.trigger]?.json ?? []) {
			const task = json as { id?: number; completed_at?: string };
			if (!task.id || !task.completed_at) continue;
			seen.set(task.id, (seen.get(task.id) ?? 0) + 1);
			latencies.push(Date.parse(e.startedAt) - Date.parse(task.completed_at));
		}
	return {
		p50: percentile(latencies, 50),
		p95: percentile(latencies, 95),
		max: Math.max(...latencies),
		executions: execs.length,
		lost: ids.filter((t) => !seen.has(t)).length,
		duplicated: [...seen.values()].reduce((a, n) => a + n - 1, 0),
	};
}

/** Waits until both workflows emitted every id, or nothing new came for 20 s. */
export async function waitForBoth(ctx: BenchContext, wfs: string[], after: number, ids: number[]) {
	let last = -1;
	let quietSince = Date.now();
	const deadline = Date.now() + 240_000;
	while (Date.now() < deadline && Date.now() - quietSince < 20_000) {
		const sides = await Promise.all(wfs.map(async (id) => await measure(ctx, id, after, ids)));
		if (sides.every((s) => s.lost === 0)) return;
		const got = sides.reduce((a, s) => a + ids.length - s.lost, 0);
		if (got !== last) quietSince = Date.now();
		last = got;
		await sleep(2_000);
	}
}

export async function scenarioListeners(ctx: BenchContext): Promise<Section> {
	const { n8n, sandbox } = ctx;
	const holder = await ensureWorkflow(n8n, wf.triggerWithNode(ctx.creds), false);
	const listener = await ensureWorkflow(n8n, wf.triggerListening(ctx.creds), false);
	const runs: Array<{ holder: Side; listener: Side } | { error: string }> = [];
	const runOne = async (burst: number) => {
		try {
			await sandbox.client.reset();
			await sandbox.client.createTasks(QUEUE_ID, burst);
			await n8n.api.post(`/workflows/${holder}/activate`, {});
			await waitForTarget(sandbox, (t) => t.includes('/webhook/'));
			await n8n.api.post(`/workflows/${listener}/activate`, {});
			await sleep(3_000);
			const after = await lastExecutionId(n8n);
			const { ids } = await sandbox.client.completeMany(QUEUE_ID, burst, { by: PERSON });
			await waitForBoth(ctx, [holder, listener], after, ids);
			return {
				holder: await measure(ctx, holder, after, ids),
				listener: await measure(ctx, listener, after, ids),
			};
		} catch (error) {
			return { error: errorText(error) };
		} finally {
			await n8n.api.post(`/workflows/${listener}/deactivate`, {}).catch(() => undefined);
			await n8n.api.post(`/workflows/${holder}/deactivate`, {}).catch(() => undefined);
			await waitForTarget(sandbox, (t) => !t.includes('secret='), 30_000).catch(() => undefined);
			await sleep(300);
		}
	};
	await runOne(20); // warm-up, not counted
	for (let round = 1; round <= ctx.shortRounds; round++) {
		const run = await runOne(BURST);
		runs.push(run);
		log(
			'error' in run
				? `listeners round ${round}: ERROR ${run.error}`
				: `listeners round ${round}: holder p50 ${fmtMs(run.holder.p50)} p95 ${fmtMs(run.holder.p95)}; listener p50 ${fmtMs(run.listener.p50)} p95 ${fmtMs(run.listener.p95)} in ${run.listener.executions} executions; lost ${run.holder.lost}/${run.listener.lost}, duplicated ${run.holder.duplicated}/${run.listener.duplicated}`,
		);
	}
	const ok = runs.filter((r): r is { holder: Side; listener: Side } => !('error' in r));
	const med = (who: 'holder' | 'listener', k: keyof Side) => median(ok.map((r) => r[who][k]));
	const sum = (who: 'holder' | 'listener', k: keyof Side) => ok.reduce((a, r) => a + r[who][k], 0);
	const p50r = med('listener', 'p50') / med('holder', 'p50');
	const p95r = med('listener', 'p95') / med('holder', 'p95');
	const rows = (['holder', 'listener'] as const).map((who) => [
		who === 'holder' ? 'Task Queue Trigger holding the queue' : 'Task Queue Trigger listening',
		fmtMs(med(who, 'p50')),
		fmtMs(med(who, 'p95')),
		fmtMs(med(who, 'max')),
		fmtNum(sum(who, 'executions')),
		fmtNum(sum(who, 'lost')),
		fmtNum(sum(who, 'duplicated')),
		who === 'holder' ? '1.00x' : `${fmtNum(p50r, 2)}x`,
		who === 'holder' ? '1.00x' : `${fmtNum(p95r, 2)}x`,
	]);
	const title = `9. Two triggers on one queue, side by side, ${BURST} completions in a burst`;
	return {
		title,
		body: table(
			[
				'contender',
				'latency p50',
				'p95',
				'max',
				`executions (${ok.length} runs)`,
				'lost',
				'duplicated',
				'p50 vs holder',
				'p95 vs holder',
			],
			rows,
		),
		goals: [
			{
				goal: "A listener's latency within 1.5x of the holder's (p50 / p95), side by side",
				measured: `${fmtNum(p50r, 2)}x / ${fmtNum(p95r, 2)}x`,
				met: ok.length > 0 ? p50r <= 1.5 && p95r <= 1.5 : null,
			},
			{
				goal: 'Both: zero lost, zero duplicated',
				measured: `holder ${sum('holder', 'lost')} lost, ${sum('holder', 'duplicated')} duplicated; listener ${sum('listener', 'lost')} lost, ${sum('listener', 'duplicated')} duplicated`,
				met:
					ok.length > 0
						? ['lost', 'duplicated'].every(
								(k) => sum('holder', k as keyof Side) + sum('listener', k as keyof Side) === 0,
							)
						: null,
			},
		],
		notes: [
			"Latency per completion: its execution's startedAt minus its completed_at. The holder starts one execution per delivery; the listener one per read (a read takes what was completed since the last), so it starts fewer executions.",
			...runs
				.filter((r) => 'error' in r)
				.map((r) => `A run failed: ${(r as { error: string }).error}`),
		],
		summary: [
			`${title}: holder p50 ${fmtMs(med('holder', 'p50'))} p95 ${fmtMs(med('holder', 'p95'))}; listener p50 ${fmtMs(med('listener', 'p50'))} p95 ${fmtMs(med('listener', 'p95'))}`,
		],
	};
}

/** Completes `count` tasks one at a time, `gapMs` apart (a steady trickle, as people answer). */
export async function trickle(ctx: BenchContext, count: number, gapMs: number): Promise<number[]> {
	const { ids } = await ctx.sandbox.client.createTasks(QUEUE_ID, count);
	for (const id of ids) {
		await ctx.sandbox.client.complete(QUEUE_ID, id, { by: PERSON });
		await sleep(gapMs);
	}
	return ids;
}

/**
 * Scenario 13 (issue 59): a trigger listening through the holder, side by side with it, then the
 * same listener once the holder is deactivated and it took the queue (a hand-over). Completions one
 * at a time; latency from each completion to the start of the execution that emitted it.
 */
export async function scenarioHandOver(ctx: BenchContext): Promise<Section> {
	const { n8n, sandbox } = ctx;
	const holder = await ensureWorkflow(n8n, wf.triggerWithNode(ctx.creds), false);
	const listener = await ensureWorkflow(n8n, wf.triggerListening(ctx.creds), false);
	const COUNT = 40;
	const GAP_MS = 500;
	const rounds: Array<{ holder: Side; listener: Side; after: Side; takeOverMs: number }> = [];
	const errors: string[] = [];
	for (let round = 1; round <= ctx.shortRounds; round++) {
		try {
			await sandbox.client.reset();
			await n8n.api.post(`/workflows/${holder}/activate`, {});
			await waitForTarget(sandbox, (t) => t.includes('trigger000001'));
			await n8n.api.post(`/workflows/${listener}/activate`, {});
			await sleep(2_000);
			const before = await lastExecutionId(n8n);
			const side = await trickle(ctx, COUNT, GAP_MS);
			await waitForBoth(ctx, [holder, listener], before, side);
			const sideBySide = {
				holder: await measure(ctx, holder, before, side),
				listener: await measure(ctx, listener, before, side),
			};
			const handedAt = Date.now();
			await n8n.api.post(`/workflows/${holder}/deactivate`, {});
			await waitForTarget(sandbox, (t) => t.includes('listener00001'), 120_000);
			const takeOverMs = Date.now() - handedAt;
			const later = await lastExecutionId(n8n);
			const alone = await trickle(ctx, COUNT, GAP_MS);
			await waitForBoth(ctx, [listener], later, alone);
			const after = await measure(ctx, listener, later, alone);
			rounds.push({ ...sideBySide, after, takeOverMs });
			log(
				`hand-over round ${round}: holder p50 ${fmtMs(sideBySide.holder.p50)} p95 ${fmtMs(sideBySide.holder.p95)}; listener p50 ${fmtMs(sideBySide.listener.p50)} p95 ${fmtMs(sideBySide.listener.p95)}; after the hand-over (${fmtMs(takeOverMs)} to take the queue) p50 ${fmtMs(after.p50)} p95 ${fmtMs(after.p95)}; lost ${sideBySide.holder.lost}/${sideBySide.listener.lost}/${after.lost}, duplicated ${sideBySide.holder.duplicated}/${sideBySide.listener.duplicated}/${after.duplicated}`,
			);
		} catch (error) {
			errors.push(errorText(error));
		} finally {
			await n8n.api.post(`/workflows/${listener}/deactivate`, {}).catch(() => undefined);
			await n8n.api.post(`/workflows/${holder}/deactivate`, {}).catch(() => undefined);
			await waitForTarget(sandbox, (t) => !t.includes('secret='), 30_000).catch(() => undefined);
		}
	}
	const med = (who: 'holder' | 'listener' | 'after', k: keyof Side) =>
		median(rounds.map((r) => r[who][k]));
	const sum = (who: 'holder' | 'listener' | 'after', k: keyof Side) =>
		rounds.reduce((a, r) => a + r[who][k], 0);
	const ratio = (who: 'listener' | 'after', k: 'p50' | 'p95') => med(who, k) / med('holder', k);
	const rows = (
		[
			['holder', 'the trigger holding the queue'],
			['listener', 'the trigger listening through it'],
			['after', 'the same listener after the hand-over (it holds the queue)'],
		] as const
	).map(([who, name]) => [
		name,
		fmtMs(med(who, 'p50')),
		fmtMs(med(who, 'p95')),
		fmtMs(med(who, 'max')),
		fmtNum(sum(who, 'lost')),
		fmtNum(sum(who, 'duplicated')),
		who === 'holder' ? '1.00x' : `${fmtNum(ratio(who, 'p50'), 2)}x`,
		who === 'holder' ? '1.00x' : `${fmtNum(ratio(who, 'p95'), 2)}x`,
	]);
	const title = `13. A listener beside its holder, then after a hand-over, ${COUNT} completions one every ${GAP_MS} ms each`;
	const within = (who: 'listener' | 'after') =>
		ratio(who, 'p50') <= 1.5 && ratio(who, 'p95') <= 1.5;
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
				goal: "A listener's latency, and the same trigger's after a hand-over, within 1.5x of the holder's (p50 / p95)",
				measured: `listening ${fmtNum(ratio('listener', 'p50'), 2)}x / ${fmtNum(ratio('listener', 'p95'), 2)}x; after the hand-over ${fmtNum(ratio('after', 'p50'), 2)}x / ${fmtNum(ratio('after', 'p95'), 2)}x`,
				met: rounds.length > 0 ? within('listener') && within('after') : null,
			},
			{
				goal: 'Zero lost, zero duplicated',
				measured: `${['holder', 'listener', 'after'].map((w) => sum(w as 'holder', 'lost')).join('/')} lost, ${['holder', 'listener', 'after'].map((w) => sum(w as 'holder', 'duplicated')).join('/')} duplicated`,
				met:
					rounds.length > 0
						? (['holder', 'listener', 'after'] as const).every(
								(w) => sum(w, 'lost') + sum(w, 'duplicated') === 0,
							)
						: null,
			},
		],
		notes: [
			`Median time from the holder's deactivation call to the queue's webhook naming the listener: ${fmtMs(median(rounds.map((r) => r.takeOverMs)))}.`,
			...errors.map((e) => `A round failed: ${e}`),
		],
		summary: [
			`${title}: holder p50 ${fmtMs(med('holder', 'p50'))} p95 ${fmtMs(med('holder', 'p95'))}; listener ${fmtMs(med('listener', 'p50'))} / ${fmtMs(med('listener', 'p95'))}; after the hand-over ${fmtMs(med('after', 'p50'))} / ${fmtMs(med('after', 'p95'))}`,
		],
	};
}
