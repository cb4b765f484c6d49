// Scenario 8, what waiting costs the service: reads of the completed list per completion and per
// run, in a quiet queue and with 10,000 other completions during the waits, and how soon a 2-item run
// among 100,000 completed tasks resumes. Counted at the sandbox by the jest file that also asserts
// them (test/reliability/waiting-reads.test.ts, n8n-core's contexts with the Task Queue Trigger
// forwarding each delivery); this scenario runs it and reports its figures.
import { spawnSync } from 'child_process';
import { existsSync, readFileSync } from 'fs';
import { join } from 'path';

import { REPO_ROOT } from '../tools/n8n/package';
import { fmtNum, table } from './lib';
import type { Section } from './scenarios';

const FIGURES = join(REPO_ROOT, '.tmp', 'reliability');

interface Reads {
	scenario: string;
	completions: number;
	otherCompletions: number;
	reads: number;
	readsPerCompletion: number;
	readsPerRun: number;
}

function figures<T>(name: string): T | undefined {
	const file = join(FIGURES, `${name}.json`);
	return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as T) : undefined;
}

export function scenarioWaitingReads(): Section {
	const started = Date.now();
	const run = spawnSync(
		process.execPath,
		[require.resolve('jest/bin/jest'), 'test/reliability/waiting-reads', '--ci'],
		{ cwd: REPO_ROOT, stdio: 'inherit' },
	);
	const fresh = <T extends { measuredAt?: string }>(value: T | undefined) =>
		value && Date.parse(value.measuredAt ?? '') >= started ? value : undefined;
	const rows = ['20x5-0', '1x100-10000', '20x5-10000'].map((name) =>
		fresh(figures<Reads & { measuredAt?: string }>(`waiting-reads-${name}`)),
	);
	const deep = fresh(
		figures<{ reads: number; resumedAfterMs: number; measuredAt?: string }>(
			'waiting-reads-100000-completed',
		),
	);
	const title = '8. What waiting costs the service';
	if (run.status !== 0 || rows.some((r) => !r) || !deep) {
		return {
			title,
			body: `failed: the jest file exited ${String(run.status)}`,
			goals: [],
			notes: [],
			summary: [`${title}: failed`],
		};
	}
	const measured = rows as Reads[];
	const quiet = measured[0];
	const busy = measured.slice(1);
	return {
		title,
		body: [
			table(
				[
					'scenario',
					'completions',
					'other completions during the waits',
					'reads',
					'per completion',
					'per run',
				],
				measured.map((r) => [
					r.scenario,
					fmtNum(r.completions),
					fmtNum(r.otherCompletions),
					fmtNum(r.reads),
					fmtNum(r.readsPerCompletion, 2),
					fmtNum(r.readsPerRun, 2),
				]),
			),
			'',
			table(
				[
					'a 2-item run among 100,000 completed tasks',
					'reads',
					'resumed after its last completion',
				],
				[['', fmtNum(deep.reads), `${fmtNum(deep.resumedAfterMs)} ms`]],
			),
		].join('\n'),
		goals: [
			{
				goal: 'Waiting: at most 2 reads of the completed list per completion on average, in a quiet queue and with 10,000 other completions during the waits',
				measured: `${fmtNum(quiet.readsPerCompletion, 2)} quiet; ${busy.map((r) => fmtNum(r.readsPerCompletion, 2)).join(' and ')} with 10,000 others`,
				met: measured.every((r) => r.readsPerCompletion <= 2),
			},
			{
				goal: 'A 2-item run in a queue with 100,000 completed tasks: resumed within 2 s of its last completion',
				measured: `${fmtNum(deep.resumedAfterMs)} ms, ${fmtNum(deep.reads)} read(s)`,
				met: deep.resumedAfterMs <= 2000,
			},
		],
		notes: [
			"Counted at the sandbox by `test/reliability/waiting-reads.test.ts` (n8n-core's contexts; the Task Queue Trigger forwards each delivery to the waiting node, which confirms with the service). Each n8n process keeps one index of recent completions per queue, shared by every run waiting on it.",
		],
		summary: [
			`${title}: ${measured.map((r) => fmtNum(r.readsPerCompletion, 2)).join(' / ')} reads per completion; 100,000 completed: resumed in ${fmtNum(deep.resumedAfterMs)} ms`,
		],
	};
}
