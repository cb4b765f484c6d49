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

/** `npm run sandbox`: the local Task Queue Service on port 5680 (see sandbox/README.md). */
function sandbox() {
	return run(process.execPath, [
		require.resolve('tsx/cli'),
		'sandbox/cli.ts',
		...argsAfter('sandbox'),
	]);
}
sandbox.description = 'Start the local Task Queue Service sandbox (port 5680)';

exports.sandbox = sandbox;

/** Jest: unit and integration tests against the sandbox, page tests in headless Chromium. */
function unit() {
	return run(process.execPath, [require.resolve('jest/bin/jest'), '--ci', ...argsAfter('unit')]);
}
unit.description = 'Run the jest suites (everything but the end-to-end suite)';
exports.unit = unit;

/** `npm test`: jest, then the end-to-end suite in a real n8n (once the e2e task exists). */
exports.test = function test(done) {
	const { series } = require('gulp');
	const steps = exports.e2e ? [unit, exports.e2e] : [unit];
	return series(...steps)(done);
};
exports.test.description = 'Run every test: jest, then the end-to-end suite in real n8n';
