/* eslint-disable @n8n/community-nodes/no-restricted-globals, no-console */
// Create-task throughput of the sandbox with keep-alive, measured with autocannon.
// Run: npx tsx bench/sandbox-throughput.ts [--duration 10] [--connections 20] [--pipelining 1]
import autocannon from 'autocannon';

import { startSandbox } from '../sandbox/index';

function arg(name: string, fallback: number): number {
	const i = process.argv.indexOf(`--${name}`);
	return i === -1 ? fallback : Number(process.argv[i + 1]);
}

async function main(): Promise<void> {
	const duration = arg('duration', 10);
	const connections = arg('connections', 20);
	const pipelining = arg('pipelining', 1);
	const sandbox = await startSandbox();
	const body = JSON.stringify({
		data: {
			customer_message: 'The blender arrived broken.',
			order_total: 89.9,
			receipt: 'https://example.com/receipts/1001.png',
		},
	});
	try {
		const result = await autocannon({
			url: `${sandbox.baseUrl}/orgs/${sandbox.organizationId}/queues/101/tasks/create`,
			method: 'POST',
			headers: { Authorization: `Token ${sandbox.apiKey}`, 'Content-Type': 'application/json' },
			body,
			connections,
			pipelining,
			duration,
		});
		const non201 = result.non2xx + result.errors + result.timeouts;
		console.log(
			`create-task, keep-alive, ${connections} connections, pipelining ${pipelining}, ${duration} s:`,
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
