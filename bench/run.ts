// `npm run bench` (gulp bench): starts the sandbox and a real n8n 2.41.1 with this package installed
// from its packed tarball, runs every scenario against its contenders in alternation, prints medians
// and ratios and writes bench/RESULTS.md. No pass/fail: these machines are noisy.
//
// Options (after `npm run bench --`):
//   --rounds N        rounds of the create and get scenarios (default 5)
//   --short-rounds N  rounds of the trigger and poll scenarios (default 3)
//   --only 1,2,5      run only these scenarios (1 create, 2 get completed, 3 trigger, 4 poll, 5 footprint,
//                     6 Create and Wait, 7 the trigger in queue mode, 8 what waiting costs the service,
//                     9 two triggers on one queue, holder and listener side by side; 12 Escalate, only
//                     when named: about 5 minutes of waiting for level times; 13 a listener, then a
//                     hand-over; 14 a trigger published while the holder takes a burst: named only;
//                     15 Queue > Get Insights over 100,000 completions: named only)
//   --wait-items N    items waiting in one execution in scenario 6 (default 1000)
//   --skip-build      use the dist/ already built
//   --out FILE        where to write the results (default bench/RESULTS.md; "none" to only print)
//   --n8n-env K=V,... more environment for n8n (an A/B run, e.g. N8N_EXPRESSION_ENGINE=legacy)
import { execFileSync } from 'child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'fs';
import os from 'os';
import { join, relative } from 'path';

import { ensureN8n } from '../tools/n8n/install';
import {
	buildAndPack,
	copyPackageInto,
	extractInto,
	PACKAGE_NAME,
	REPO_ROOT,
} from '../tools/n8n/package';
import { startN8n, type N8nHandle } from '../tools/n8n/start';
import { scenarioFootprint } from './footprint';
import { scenarioWaiting } from './waiting';
import { scenarioWaitingReads } from './waiting-reads';
import { startQueueMode } from '../tools/n8n/queue-mode';
import {
	errorText,
	log,
	benchCredentials,
	startSandboxProcess,
	table,
	type SandboxProcess,
} from './lib';
import {
	scenarioCreate,
	scenarioGetCompleted,
	scenarioPoll,
	scenarioTrigger,
	type BenchContext,
	type Section,
} from './scenarios';
import { scenarioEscalation } from './escalation';
import { scenarioInsights } from './insights';
import { scenarioJoinWhileBusy } from './joins';
import { scenarioHandOver, scenarioListeners } from './listeners';

function option(name: string): string | undefined {
	const i = process.argv.indexOf(`--${name}`);
	if (i === -1) return undefined;
	const v = process.argv[i + 1];
	return v === undefined || v.startsWith('--') ? '' : v;
}

function gitDescribe(): string {
	try {
		const sha = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO_ROOT })
			.toString()
			.trim();
		const dirty = execFileSync(
			'git',
			['status', '--porcelain', '--', 'nodes', 'credentials', 'package.json'],
			{ cwd: REPO_ROOT },
		)
			.toString()
			.trim();
		return dirty ? `${sha} (with uncommitted changes under nodes/ or credentials/)` : sha;
	} catch {
		return 'unknown';
	}
}

function machine(): string[] {
	const cpus = os.cpus();
	return [
		`CPU: ${cpus[0]?.model ?? 'unknown'}, ${cpus.length} cores`,
		`Memory: ${(os.totalmem() / 1024 ** 3).toFixed(1)} GiB`,
		`OS: ${os.type()} ${os.release()}`,
	];
}

const load = () =>
	os
		.loadavg()
		.map((l) => l.toFixed(2))
		.join(' / ');

async function main(): Promise<void> {
	const t0 = Date.now();
	const secs = () => `${((Date.now() - t0) / 1000).toFixed(0)} s`;
	const rounds = Number(option('rounds') || 5);
	const shortRounds = Number(option('short-rounds') || 3);
	const only = new Set((option('only') || '1,2,3,4,5,6,7,8,9').split(',').map((s) => s.trim()));
	const waitItems = Number(option('wait-items') || 1000);
	const out = option('out') ?? join(REPO_ROOT, 'bench', 'RESULTS.md');
	const n8nEnv = Object.fromEntries(
		(option('n8n-env') || '')
			.split(',')
			.filter((pair) => pair.includes('='))
			.map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
	);
	const loadStart = load();
	const date = new Date().toISOString();
	const command = `npm run bench${process.argv.slice(2).length ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`;

	log(`load average at start: ${loadStart}`);
	let sandbox: SandboxProcess | undefined;
	let n8n: N8nHandle | undefined;
	let userFolder: string | undefined;
	const sections: Section[] = [];
	let n8nNodeVersion = 'unknown';
	let restarts = 0;
	try {
		const [sb, inst, tarball] = await Promise.all([
			startSandboxProcess(),
			ensureN8n('2', (s) => log(s)),
			buildAndPack({ skipBuild: option('skip-build') !== undefined, log: (s) => log(s) }),
		]);
		sandbox = sb;
		n8nNodeVersion = execFileSync(inst.nodeBinary, ['--version']).toString().trim();
		log(`sandbox at ${sandbox.baseUrl}; packed ${tarball} (${secs()})`);
		userFolder = mkdtempSync(join(os.tmpdir(), 'tq-bench-n8n-'));
		const installedDir = await extractInto(tarball, userFolder);
		// the bench-only "floor" node of scenario 1, beside the package
		copyPackageInto(join(REPO_ROOT, 'bench', 'floor'), userFolder);
		const version = (
			JSON.parse(readFileSync(join(installedDir, 'package.json'), 'utf8')) as { version: string }
		).version;

		if (only.has('5')) {
			sections.push(await scenarioFootprint(inst, { tarball, installedDir, version }, 15));
			log(`footprint done (${secs()})`);
		}
		if (only.has('8')) {
			// before n8n starts: the jest file runs the nodes through n8n-core against its own sandbox
			sections.push(scenarioWaitingReads());
			log(`scenario 8 done (${secs()})`);
		}
		const needN8n = ['1', '2', '3', '4', '6', '9', '12', '13', '14', '15'].some((s) => only.has(s));
		if (needN8n) {
			n8n = await startN8n({
				port: 0,
				brokerPort: 0,
				userFolder,
				version: '2',
				env: {
					N8N_LOG_LEVEL: process.env.TQ_N8N_LOG_LEVEL ?? 'warn',
					// n8n pings its database every 2 s and answers every request with 503 "Database is not
					// ready!" after a ping slower than 5 s: a burst of 500 webhook executions on a loaded
					// 2-core machine does that to sqlite, for both trigger contenders alike
					DB_PING_TIMEOUT_MS: '60000',
					...n8nEnv,
				},
			});
			log(`n8n ${n8n.version} ready at ${n8n.url} (pid ${n8n.pid()}, ${secs()})`);
			const creds = await benchCredentials(n8n, sandbox);
			const ctx: BenchContext = { n8n, sandbox, creds, rounds, shortRounds };
			const steps: Array<[string, () => Promise<Section>]> = [
				['1', async () => await scenarioCreate(ctx, 0)],
				['1', async () => await scenarioCreate(ctx, 50)],
				['2', async () => await scenarioGetCompleted(ctx, 0)],
				['2', async () => await scenarioGetCompleted(ctx, 50)],
				['3', async () => await scenarioTrigger(ctx)],
				['4', async () => await scenarioPoll(ctx)],
				['9', async () => await scenarioListeners(ctx)],
				['12', async () => await scenarioEscalation(ctx, Math.max(5, shortRounds))],
				['13', async () => await scenarioHandOver(ctx)],
				['14', async () => await scenarioJoinWhileBusy(ctx)],
				['15', async () => await scenarioInsights(ctx)],
				[
					'6',
					async () => await scenarioWaiting(ctx, Math.max(10, shortRounds * 4), waitItems, 200),
				],
			];
			const handle = n8n;
			/** n8n answers and its database is up; otherwise restart it (same folder: same workflows). */
			const ensureN8nUp = async (): Promise<void> => {
				const ok = await handle.api
					.get('/workflows', { params: { limit: 1 }, timeout: 10_000 })
					.then(() => true)
					.catch(() => false);
				if (ok) return;
				log(
					`n8n does not answer; its last log lines:\n${handle.logs.text().split('\n').slice(-8).join('\n')}\nrestarting it`,
				);
				restarts++;
				await handle.restart();
			};
			for (const [key, step] of steps) {
				if (!only.has(key)) continue;
				let section: Section | undefined;
				for (let attempt = 1; attempt <= 2 && !section; attempt++) {
					await ensureN8nUp();
					const mark = handle.logs.mark();
					try {
						const result = await step();
						const broken = /Database is not ready|ECONNREFUSED|socket hang up/.test(result.body);
						if (broken && attempt === 1) {
							log(
								`scenario ${key}: n8n failed under it; n8n log:\n${handle.logs.since(mark).split('\n').slice(-8).join('\n')}\nretrying once`,
							);
							continue;
						}
						section = result;
					} catch (error) {
						if (attempt === 1) {
							log(`scenario ${key} failed (${errorText(error)}); retrying once`);
							continue;
						}
						section = {
							title: `scenario ${key}`,
							body: `failed: ${errorText(error)}`,
							goals: [],
							notes: [],
							summary: [`scenario ${key} failed: ${errorText(error)}`],
						};
					}
				}
				if (section) sections.push(section);
				log(`scenario ${key} done (${secs()})`);
			}
		}
		if (only.has('7')) {
			// the single n8n is stopped first: the queue-mode processes get the machine to themselves
			if (n8n) await n8n.stop();
			n8n = undefined;
			const queueFolder = mkdtempSync(join(os.tmpdir(), 'tq-bench-queue-mode-'));
			await extractInto(tarball, queueFolder);
			const queueMode = await startQueueMode({
				userFolder: queueFolder,
				env: { N8N_LOG_LEVEL: process.env.TQ_N8N_LOG_LEVEL ?? 'warn', ...n8nEnv },
				log: (s) => log(s),
			});
			try {
				const handle = queueMode.asOne();
				log(`n8n in queue mode ready at ${handle.url} (${secs()})`);
				const creds = await benchCredentials(handle, sandbox);
				const describe = `${queueMode.webhooks.length} webhook processes behind nginx round-robin, ${queueMode.workers.length} workers, PostgreSQL, Redis`;
				sections.push(
					await scenarioTrigger({ n8n: handle, sandbox, creds, rounds, shortRounds }, { describe }),
				);
				log(`scenario 7 done (${secs()})`);
			} catch (error) {
				sections.push({
					title: 'scenario 7',
					body: `failed: ${errorText(error)}`,
					goals: [],
					notes: [],
					summary: [`scenario 7 failed: ${errorText(error)}`],
				});
			} finally {
				await queueMode.stop();
				if (!process.env.TQ_BENCH_KEEP) rmSync(queueFolder, { recursive: true, force: true });
			}
		}
	} finally {
		if (n8n) await n8n.stop().catch(() => undefined);
		if (sandbox) await sandbox.stop().catch(() => undefined);
		if (userFolder && !process.env.TQ_BENCH_KEEP)
			rmSync(userFolder, { recursive: true, force: true });
	}

	const duration = ((Date.now() - t0) / 1000).toFixed(0);
	const loadEnd = load();
	const goals = sections.flatMap((s) => s.goals);
	const goalTable = table(
		['goal', 'measured', 'lands'],
		goals.map((g) => [
			g.goal,
			g.measured,
			g.met === null ? 'not measured' : g.met ? 'met' : 'missed',
		]),
	);
	const md = [
		'# Benchmark results',
		'',
		'Generated by `npm run bench` (bench/run.ts); see [bench/README.md](README.md) for what each scenario does and how the nodes were profiled.',
		'',
		`- Command: \`${command}\``,
		`- Date: ${date}; one run took ${duration} s`,
		...machine().map((m) => `- ${m}`),
		`- Load average (1/5/15 min) at start: ${loadStart}; at end: ${loadEnd}`,
		`- node ${process.version} (runner, sandbox, raw client); n8n ${n8n?.version ?? '2.41.1'} on node ${n8nNodeVersion}`,
		`- Package: ${PACKAGE_NAME} at commit ${gitDescribe()}, installed into n8n from its \`npm pack\` tarball`,
		`- Rounds: ${rounds} (scenarios 1, 2), ${shortRounds} (scenarios 3, 4); contenders run in alternation, figures are medians over rounds`,
		...(restarts
			? [
					`- n8n stopped answering ${restarts} time(s) during the run and was restarted (same database)`,
				]
			: []),
		'',
		'## Goals',
		'',
		goalTable,
		'',
		...sections.flatMap((s) => [
			`## ${s.title}`,
			'',
			s.body,
			'',
			...s.notes.map((n) => `- ${n}`),
			...(s.notes.length ? [''] : []),
		]),
		'## How to read these figures',
		'',
		"- **work**: for an n8n contender, the `executionTime` n8n records for the node that does the work (from the execution's run data, read through the public API); for the raw client, its own time. Ratios use this figure.",
		"- **execution**: the execution's `stoppedAt - startedAt` as n8n records it (includes the Webhook and Split Out nodes).",
		'- **wall (outside)**: from the benchmark process, the webhook call that starts the workflow until n8n answers (the Webhook node answers when the last node has finished).',
		'- The sandbox, n8n and the raw client run in three processes on the same machine; the raw client is what the wire and the service allow (keep-alive, no n8n).',
		'- Every n8n contender is a workflow created through the public API and run as a production execution; each contender ran once with 20 items before the measured rounds (n8n loads node code lazily).',
		'- n8n runs with its defaults except `DB_PING_TIMEOUT_MS=60000`: at the default 5 s, the burst of scenario 3 made n8n\'s sqlite ping time out on this machine, and n8n then answered every request, webhook deliveries included, with 503 "Database is not ready!" (deliveries the service never retries).',
		'',
	].join('\n');

	console.log(`\n${md}`);
	// "-" is still accepted when run.ts is started directly (gulp reads a lone "-" as a task name)
	if (out !== 'none' && out !== '-') {
		writeFileSync(out, md);
		log(`wrote ${relative(process.cwd(), out) || out}`);
	}
	log(`done in ${duration} s; load average at end: ${loadEnd}`);
}

main().catch((error) => {
	console.error(`[bench] ${error instanceof Error ? error.stack : error}`);
	process.exit(1);
});
