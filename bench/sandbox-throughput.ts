// Create-task throughput of the sandbox with keep-alive, measured with autocannon.
// Run: npx tsx bench/sandbox-throughput.ts [--duration 10] [--connections 20] [--pipelining 1] [--in-process]
// By default the sandbox runs in its own process (as `npm run sandbox` does), so that the load
// tool and the server do not share one event loop; --in-process starts it inside this process.
import autocannon from 'autocannon';
import { spawn } from 'child_process';
import { join } from 'path';

import { loadDefaultSeed, startSandbox } from '../sandbox/index';

interface Target {
	baseUrl: string;
	close(): Promise<void>;
}

async function startChild(): Promise<Target> {
	const child = spawn(
		process.execPath,
		[require.resolve('tsx/cli'), join(__dirname, '..', 'sandbox', 'cli.ts'), '--port', '0'],
		{
			stdio: ['ignore', 'pipe', 'inherit'],
		},
	);
	let out = '';
	const baseUrl = await new Promise<string>((resolve, reject) => {
		child.stdout.on('data', (c: Buffer) => {
			out += c.toString();
			const m = /Base URL:\s+(\S+)/.exec(out);
			if (m && out.includes('Press Ctrl-C')) resolve(m[1]);
		});
		child.on('exit', (code) => reject(new Error(`sandbox exited with ${code}`)));
	});
	return {
		baseUrl,
		close: async () =>
			await new Promise<void>((resolve) => {
				child.once('exit', () => resolve());
				child.kill('SIGINT');
			}),
	};
}

function arg(name: string, fallback: number): number {
	const i = process.argv.indexOf(`--${name}`);
	return i === -1 ? fallback : Number(process.argv[i + 1]);
}

async function main(): Promise<void> {
	const duration = arg('duration', 10);
	const connections = arg('connections', 20);
	const pipelining = arg('pipelining', 1);
	const inProcess = process.argv.includes('--in-process');
	const sandbox: Target = inProcess ? await startSandbox() : await startChild();
	const seed = loadDefaultSeed();
	const apiKey = seed.apiKeys[0].key;
	const org = seed.organizations[0].id;
	const body = JSON.stringify({
		data: {
			customer_message: 'The blender arrived broken.',
			order_total: 89.9,
			receipt: 'https://example.com/receipts/1001.png',
		},
	});
	try {
		const result = await autocannon({
			url: `${sandbox.baseUrl}/orgs/${org}/queues/101/tasks/create`,
			method: 'POST',
			headers: { Authorization: `Token ${apiKey}`, 'Content-Type': 'application/json' },
			body,
			connections,
			pipelining,
			duration,
		});
		const non201 = result.non2xx + result.errors + result.timeouts;
		console.log(
			`create-task, keep-alive, ${connections} connections, pipelining ${pipelining}, ${duration} s, sandbox ${inProcess ? 'in this process' : 'in its own process'}:`,
		);
		console.log(
			`  requests/s: mean ${Math.round(result.requests.average)}, p50 ${result.requests.p50}`,
		);
		console.log(
			`  latency ms: mean ${result.latency.average.toFixed(2)}, p99 ${result.latency.p99}, max ${result.latency.max}`,
		);
		console.log(`  total ${result.requests.total}, errors/non-2xx ${non201}`);
	} finally {
		await sandbox.close();
	}
}

main().catch((e: Error) => {
	console.error(e);
	process.exit(1);
});
