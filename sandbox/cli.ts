// `npm run sandbox` (gulp sandbox -> tsx sandbox/cli.ts): starts the sandbox on port 5680.
// Options: --port N, --host H, --data FILE, --admin-secret S, --api-key K
// The admin secret and the API key differ per sandbox unless given: the sandbox runs on people's
// workstations, and a secret every copy shares is no secret.
import { randomBytes } from 'crypto';
import { resolve } from 'path';

import { startSandbox, type SandboxOptions } from './index';

function parseArgs(argv: string[]): SandboxOptions {
	const opts: SandboxOptions = { port: 5680 };
	for (let i = 0; i < argv.length; i++) {
		const [flag, inline] = argv[i].split('=', 2);
		const value = () => inline ?? argv[++i];
		switch (flag) {
			case '--port':
				opts.port = Number(value());
				break;
			case '--host':
				opts.host = value();
				break;
			case '--data':
				opts.dataFile = resolve(value());
				break;
			case '--admin-secret':
				opts.adminSecret = value();
				break;
			case '--api-key':
				opts.apiKey = value();
				break;
			case '--help':
			case '-h':
				console.log(
					'Usage: tsx sandbox/cli.ts [--port 5680] [--host 127.0.0.1] [--data FILE] [--admin-secret S] [--api-key K]',
				);
				process.exit(0);
				break;
			default:
				console.error(`Unknown option ${argv[i]}`);
				process.exit(2);
		}
	}
	if (!Number.isInteger(opts.port) || (opts.port as number) < 0) {
		console.error('--port needs an integer');
		process.exit(2);
	}
	return opts;
}

async function main(): Promise<void> {
	const opts = parseArgs(process.argv.slice(2));
	opts.adminSecret ??= `sandbox-admin-${randomBytes(12).toString('hex')}`;
	opts.apiKey ??= `tqs_sandbox_${randomBytes(12).toString('hex')}`;
	const host = opts.host ?? '127.0.0.1';
	if (!['127.0.0.1', 'localhost', '::1'].includes(host) && !host.startsWith('127.')) {
		console.warn(
			`Warning: --host ${host} is not a loopback address: anyone who reaches this machine on that address can use the sandbox's page (complete tasks, read every queue's webhook address) and its API with the key below. Use it only on a network you trust.`,
		);
	}
	const sandbox = await startSandbox(opts);
	const names = new Map(sandbox.seed.queues.map((q) => [q.id, q.name]));
	console.log('Task Queue sandbox is running');
	console.log(`  Base URL:        ${sandbox.baseUrl}`);
	console.log(`  Page URL:        ${sandbox.pageUrl}`);
	console.log(`  Organization id: ${sandbox.organizationId}`);
	console.log('  Queues:');
	for (const id of sandbox.queueIds) console.log(`    ${id}  ${names.get(id) ?? ''}`);
	console.log(`  API key:         ${sandbox.apiKey}`);
	console.log(
		`  Admin secret:    ${sandbox.adminSecret}  (header x-sandbox-admin, for /_sandbox/)`,
	);
	if (opts.dataFile) console.log(`  Data file:       ${opts.dataFile}`);
	console.log('Press Ctrl-C to stop.');

	let stopping = false;
	const stop = (signal: string) => {
		if (stopping) return;
		stopping = true;
		console.log(`\n${signal}: stopping the sandbox`);
		sandbox.close().then(
			() => process.exit(0),
			(e: Error) => {
				console.error(e.message);
				process.exit(1);
			},
		);
	};
	process.on('SIGINT', () => stop('SIGINT'));
	process.on('SIGTERM', () => stop('SIGTERM'));
}

main().catch((e: NodeJS.ErrnoException) => {
	console.error(`Could not start the sandbox: ${e.message}`);
	process.exit(1);
});
