// Dev tasks. Plain CommonJS; each task spawns its tool with child_process.
const { spawn } = require('child_process');

/** Arguments given after the task name, e.g. `npm run sandbox -- --port 5700`. */
function argsAfter(taskName) {
	const i = process.argv.indexOf(taskName);
	return i === -1 ? [] : process.argv.slice(i + 1);
}

function run(command, args) {
	return spawn(command, args, { stdio: 'inherit', cwd: __dirname });
}

/**
 * A test tool's end as its task's end. Gulp takes a child process stopped by a signal (killed, out
 * of memory) for a success: here that, like a non-zero code, fails the task.
 */
function finished(child) {
	return new Promise((resolve, reject) => {
		child.on('error', reject);
		child.on('exit', (code, signal) =>
			code === 0
				? resolve()
				: reject(new Error(signal ? `stopped by ${signal}` : `exited with code ${code}`)),
		);
	});
}

/**
 * A stop signal to gulp alone (an IDE's stop button, a process manager, `kill` of npm's process,
 * which npm forwards) reaches the child too; the child stops what it started and gulp ends with it.
 * Ctrl-C in a terminal signals the whole group: the child then gets it twice, which it ignores.
 */
function forwardStopSignals(child) {
	const stop = (signal) => {
		if (child.exitCode === null && child.signalCode === null) child.kill(signal);
	};
	for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => stop(signal));
	// npm's process stopped alone does not always pass the signal on (its shell may not): gulp is
	// then left to init, which it notices here, and stops the child all the same.
	const parent = process.ppid;
	const orphaned = setInterval(() => {
		if (process.ppid !== parent) stop('SIGTERM');
	}, 500);
	child.on('exit', () => clearInterval(orphaned));
}

/** `npm run sandbox`: the local Task Queue Service on port 5680 (see sandbox/README.md). */
function sandbox() {
	// tsx as a loader, not its CLI: the CLI relays Ctrl-C to a child and ends it if the child does not
	// say it took the signal within 30 ms (under load), before the sandbox has saved its data file
	const child = run(process.execPath, [
		'--import',
		'tsx',
		'sandbox/cli.ts',
		...argsAfter('sandbox'),
	]);
	forwardStopSignals(child);
	return child;
}
sandbox.description = 'Start the local Task Queue Service sandbox (port 5680)';

exports.sandbox = sandbox;

/** Jest: unit and integration tests against the sandbox, page tests in headless Chromium. */
function unit() {
	return finished(
		run(process.execPath, [require.resolve('jest/bin/jest'), '--ci', ...argsAfter('unit')]),
	);
}
unit.description = 'Run the jest suites (everything but the end-to-end suite)';
exports.unit = unit;

/** `npm run dev`: the sandbox, a real n8n with this package, its credential and the examples. */
function dev() {
	const child = run(process.execPath, [
		require.resolve('tsx/cli'),
		'tools/n8n/dev.ts',
		...argsAfter('dev'),
	]);
	forwardStopSignals(child);
	return child;
}
dev.description =
	'Start the sandbox and a real n8n with this package, a credential and the examples';
exports.dev = dev;

/** Before any test: Chromium and the pinned n8n installed, or what to do said once (tools/prepare-tests.ts). */
function prepare() {
	return finished(run(process.execPath, [require.resolve('tsx/cli'), 'tools/prepare-tests.ts']));
}
prepare.description = 'Install what the tests need (Chromium, the pinned n8n), or say what to do';
exports.prepare = prepare;

/**
 * The end-to-end files of one run share one n8n (or queue-mode stack), one file after another
 * (test/e2e/helpers.ts). TQ_E2E_WORKERS=2 runs two files at once, each with an n8n of its own.
 */
function e2eWorkers() {
	const workers = Number(process.env.TQ_E2E_WORKERS ?? 1);
	if (!Number.isInteger(workers) || workers < 1)
		throw new Error(
			`TQ_E2E_WORKERS is "${process.env.TQ_E2E_WORKERS}": use a whole number, 1 or more`,
		);
	return workers === 1 ? ['--runInBand'] : [`--maxWorkers=${workers}`];
}

function jestE2e(extra) {
	return finished(
		run(process.execPath, [
			require.resolve('jest/bin/jest'),
			'-c',
			'jest.e2e.config.js',
			'--ci',
			...e2eWorkers(),
			...extra,
		]),
	);
}

/** The end-to-end suite: real n8n (tools/n8n) + the sandbox, the package installed from npm pack. */
function e2e() {
	return jestE2e(argsAfter('e2e'));
}
e2e.description = 'Run the whole end-to-end suite in a real n8n (TQ_N8N_VERSION=1 for n8n 1.x)';
exports.e2e = e2e;

/** The end-to-end files a developer runs on each change: everything but the long reliability suites. */
function e2eQuick() {
	return jestE2e([
		'--testPathIgnorePatterns',
		'/node_modules/',
		'test/e2e/reliability/',
		'queue-mode\\.e2e',
		...argsAfter('test'),
	]);
}

/**
 * The long reliability suites (hostile calls, n8n down, 100 activation cycles, a burst, Escalate, a lost answer under a backlog, a key change):
 * minutes each, one n8n for all of them (test/e2e/helpers.ts).
 */
function e2eLong() {
	return jestE2e(['test/e2e/reliability/', ...argsAfter('long')]);
}

/**
 * The end-to-end files that prove the package in n8n's queue mode (tools/n8n/queue-mode.ts: PostgreSQL,
 * Redis, a main, 2 workers, 2 webhook processes behind nginx), one stack for all of them.
 */
const QUEUE_MODE_FILES = [
	'test/e2e/queue-mode.e2e.test.ts',
	'test/e2e/n8n.e2e.test.ts',
	'test/e2e/create-and-wait.e2e.test.ts',
	'test/e2e/reliability/n8n-down.e2e.test.ts',
	'test/e2e/reliability/churn.e2e.test.ts',
	'test/e2e/reliability/waiting-chaos.e2e.test.ts',
	'test/e2e/reliability/escalation.e2e.test.ts',
];

/**
 * gulp takes every word after the task name for another task's name, so files are chosen with
 * jest's flag, written with '=': `npm run test:queue-mode -- --testPathPattern='queue-mode\.e2e'`.
 */
function e2eQueueMode() {
	const extra = argsAfter('queueMode');
	const choosesFiles = extra.some((arg) => arg.startsWith('--testPathPattern'));
	return finished(
		spawn(
			process.execPath,
			[
				require.resolve('jest/bin/jest'),
				'-c',
				'jest.e2e.config.js',
				'--ci',
				...e2eWorkers(),
				...extra,
				...(choosesFiles ? [] : QUEUE_MODE_FILES),
			],
			{ stdio: 'inherit', cwd: __dirname, env: { ...process.env, TQ_QUEUE_MODE: '1' } },
		),
	);
}

/** `npm run test:queue-mode`: the queue-mode end-to-end files (installs PostgreSQL, Redis, nginx once). */
exports.queueMode = function queueMode(done) {
	const { series } = require('gulp');
	return series(prepare, e2eQueueMode)(done);
};
exports.queueMode.description =
	'The end-to-end suite in n8n queue mode (PostgreSQL, Redis, 2 workers, 2 webhook processes behind nginx)';

/** `npm run bench`: the benchmarks against a real n8n and the sandbox; writes bench/RESULTS.md. */
function bench() {
	return run(process.execPath, [require.resolve('tsx/cli'), 'bench/run.ts', ...argsAfter('bench')]);
}
bench.description = 'Run the benchmarks (real n8n + sandbox) and write bench/RESULTS.md';
exports.bench = bench;

/** `npm test`: set-up, jest, then the end-to-end suite in a real n8n without the long reliability suites. */
exports.test = function test(done) {
	const { series } = require('gulp');
	return series(prepare, unit, e2eQuick)(done);
};
exports.test.description =
	'The tests of each change: set-up, jest, the end-to-end suite (no long reliability suites)';

/** `npm run test:long`: the long reliability suites in a real n8n (CI runs them too). */
exports.long = function long(done) {
	const { series } = require('gulp');
	return series(prepare, e2eLong)(done);
};
exports.long.description = 'The long reliability suites in a real n8n (about 6 minutes)';
