// Runs first in `npm test` and `npm run test:long`: everything the tests need on this machine,
// installed where it can be and explained once, before any test, where it cannot.
//   - Linux x64 (n8n's native modules; Debian's chromium), node 20 or later;
//   - Chromium for the tests in a real browser (Debian's package, `tools/install-chromium.sh`):
//     installed when this user is root or has sudo without a password and apt-get is there;
//   - the pinned n8n for the end-to-end suite, in a cache outside the clone (minutes, once).
// Set TQ_SKIP_PREPARE=1 to skip it (a machine set up by hand). `--everything` (CI, before its suites
// run side by side) also installs the other n8n major and the queue-mode services (PostgreSQL, Redis,
// nginx), so that no two suites install the same thing at once.
import { execFileSync, spawnSync } from 'child_process';
import { existsSync } from 'fs';
import { arch, platform } from 'os';
import { join } from 'path';

import { ensureN8n, isInstalled, majorFromEnv, type N8nMajor } from './n8n/install';
import { ensureQueueModeServices } from './n8n/queue-mode';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

function fail(lines: string[]): never {
	console.error(
		['', 'npm test cannot run on this machine yet:', ...lines.map((l) => `  ${l}`), ''].join('\n'),
	);
	process.exit(1);
}

function can(command: string, args: string[]): boolean {
	return spawnSync(command, args, { stdio: 'ignore' }).status === 0;
}

function checkPlatform(): void {
	if (platform() !== 'linux' || arch() !== 'x64') {
		fail([
			`This is ${platform()} ${arch()}; the tests run on Linux x64 (the pinned n8n's native modules and Debian's Chromium).`,
			'Run them in a Linux x64 machine or container (Debian or Ubuntu), or run the jest suites alone: npx jest',
		]);
	}
	const major = Number(process.versions.node.split('.')[0]);
	if (major < 20) fail([`Node ${process.versions.node} is too old: use node 20, 22 or 24.`]);
}

function ensureChromium(): void {
	if (existsSync(CHROMIUM)) return;
	const root = process.getuid?.() === 0;
	const sudo = !root && can('sudo', ['-n', 'true']);
	const apt = existsSync('/usr/bin/apt-get');
	if (!apt || (!root && !sudo)) {
		fail([
			`Chromium is missing (${CHROMIUM}); the page tests and the end-to-end suite drive it.`,
			apt
				? 'Install it once with:  sudo apt-get update && sudo apt-get install -y chromium'
				: "Install Chromium with your system's package manager, then point the tests at it: CHROMIUM_PATH=/path/to/chromium npm test",
			'Then run npm test again.',
		]);
	}
	console.log(
		"[prepare] installing Debian's chromium for the browser tests (once; about 1 minute, ~350 MB)",
	);
	execFileSync('bash', [join(__dirname, 'install-chromium.sh')], { stdio: 'inherit' });
}

const EVERYTHING = process.argv.includes('--everything');

async function ensureN8nInstalled(): Promise<void> {
	const majors: N8nMajor[] = EVERYTHING ? ['2', '1'] : [majorFromEnv()];
	for (const major of majors) {
		if (isInstalled(major)) continue;
		await ensureN8n(major, (line) => console.log(`[prepare] ${line}`));
	}
	if (EVERYTHING) ensureQueueModeServices((line) => console.log(`[prepare] ${line}`));
}

async function main(): Promise<void> {
	if (process.env.TQ_SKIP_PREPARE) return;
	const started = Date.now();
	checkPlatform();
	ensureChromium();
	await ensureN8nInstalled();
	const seconds = Math.round((Date.now() - started) / 1000);
	console.log(
		`[prepare] ready: Chromium at ${CHROMIUM}, n8n in the cache${seconds > 1 ? ` (${seconds} s)` : ''}`,
	);
}

main().catch((error: unknown) => {
	console.error(error instanceof Error ? error.message : error);
	process.exit(1);
});
