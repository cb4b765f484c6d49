// Where does the node's time go inside n8n? Starts the sandbox and a real n8n under `--cpu-prof`,
// runs one scenario's workflow a few times, stops n8n (which writes the profile) and prints the
// functions that took the most CPU while the workflow ran, grouped by file.
//
//   npx tsx bench/profile.ts create [--runs 3] [--items 1000] [--http]
//   npx tsx bench/profile.ts get [--runs 2]
//   npx tsx bench/profile.ts trigger [--items 500] [--http]   (--http: n8n's Webhook node instead)
import axios from 'axios';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'fs';
import os from 'os';
import { join } from 'path';

import { ensureN8n } from '../tools/n8n/install';
import { buildAndPack, extractInto } from '../tools/n8n/package';
import { startN8n } from '../tools/n8n/start';
import {
	benchCredentials,
	log,
	PERSON,
	QUEUE_ID,
	startSandboxProcess,
	waitForExecutions,
} from './lib';
import * as wf from './workflows';

interface ProfileNode {
	id: number;
	callFrame: { functionName: string; url: string; lineNumber: number };
	children?: number[];
}
interface CpuProfile {
	nodes: ProfileNode[];
	startTime: number;
	endTime: number;
	samples: number[];
	timeDeltas: number[];
}

function arg(name: string, fallback: number): number {
	const i = process.argv.indexOf(`--${name}`);
	return i === -1 ? fallback : Number(process.argv[i + 1]);
}

function shortUrl(url: string): string {
	const m = /node_modules\/((?:@[^/]+\/)?[^/]+)\/(.*)$/.exec(url);
	if (m) return `${m[1]}/${m[2]}`;
	return url.replace(/^file:\/\//, '').replace(/^.*\.n8n\/nodes\//, '') || '(native)';
}

function analyse(profile: CpuProfile, marker: RegExp, keep: number, top = 45): void {
	const byId = new Map(profile.nodes.map((n) => [n.id, n]));
	const parent = new Map<number, number>();
	for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
	// sample times
	const times: number[] = [];
	let t = profile.startTime;
	for (const d of profile.timeDeltas) times.push((t += d));
	// window: first to last sample whose stack holds a frame matching the marker
	const stackMatches = (id: number) => {
		for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
			const f = byId.get(cur)?.callFrame;
			if (f && marker.test(`${f.functionName} ${f.url}`)) return true;
		}
		return false;
	};
	// One window per run: marked samples more than a second apart belong to different runs (n8n's
	// start-up can add one before them). The first run also loads n8n's execution code lazily, so
	// only the last `keep` windows are analysed.
	const windows: Array<[number, number]> = [];
	profile.samples.forEach((id, i) => {
		if (!stackMatches(id)) return;
		const current = windows[windows.length - 1];
		if (current && times[i] - times[current[1]] < 1_000_000) current[1] = i;
		else windows.push([i, i]);
	});
	if (windows.length === 0) {
		console.log('no sample in the marked code');
		return;
	}
	const measured = windows.slice(-Math.max(1, keep));
	console.log(
		`${windows.length} window(s) of marked samples; analysing the last ${measured.length}: ${measured
			.map(([a, b]) => `${((times[b] - times[a]) / 1000).toFixed(0)} ms`)
			.join(', ')}`,
	);
	const self = new Map<string, number>();
	const byFile = new Map<string, number>();
	const inclusive = new Map<string, number>();
	let idle = 0;
	let total = 0;
	for (const [first, last] of measured)
		for (let i = first; i <= last; i++) {
			const dt = (times[i + 1] ?? times[i]) - times[i];
			const node = byId.get(profile.samples[i])!;
			total += dt;
			const f = node.callFrame;
			if (f.functionName === '(idle)') {
				idle += dt;
				continue;
			}
			const key = `${f.functionName || '(anonymous)'} ${shortUrl(f.url)}:${f.lineNumber + 1}`;
			self.set(key, (self.get(key) ?? 0) + dt);
			const file = shortUrl(f.url).replace(/\/dist\/.*$/, '/dist/…') || '(native)';
			byFile.set(file, (byFile.get(file) ?? 0) + dt);
			const seen = new Set<string>();
			for (let cur: number | undefined = node.id; cur !== undefined; cur = parent.get(cur)) {
				const cf = byId.get(cur)!.callFrame;
				const k = `${cf.functionName || '(anonymous)'} ${shortUrl(cf.url)}:${cf.lineNumber + 1}`;
				if (seen.has(k)) continue;
				seen.add(k);
				inclusive.set(k, (inclusive.get(k) ?? 0) + dt);
			}
		}
	const ms = (us: number) => `${(us / 1000).toFixed(0).padStart(6)} ms`;
	console.log(`\nwindow ${ms(total)} (idle ${ms(idle)}, busy ${ms(total - idle)})`);
	console.log('\n-- self time by package/file --');
	for (const [k, v] of [...byFile].sort((a, b) => b[1] - a[1]).slice(0, 25))
		console.log(`${ms(v)}  ${k}`);
	console.log('\n-- self time by function --');
	for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top))
		console.log(`${ms(v)}  ${k}`);
	console.log('\n-- inclusive time (stack samples) --');
	for (const [k, v] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, top))
		console.log(`${ms(v)}  ${k}`);
}

async function main(): Promise<void> {
	const scenario =
		process.argv[2] === 'get' || process.argv[2] === 'trigger' ? process.argv[2] : 'create';
	const runs = arg('runs', scenario === 'get' ? 2 : 3);
	const items = arg('items', 1000);
	const useHttp = process.argv.includes('--http');
	const profDir = mkdtempSync(join(os.tmpdir(), 'tq-prof-'));
	mkdirSync(profDir, { recursive: true });
	const [sandbox, , tarball] = await Promise.all([
		startSandboxProcess(),
		ensureN8n('2'),
		buildAndPack({ skipBuild: process.argv.includes('--skip-build') }),
	]);
	const userFolder = mkdtempSync(join(os.tmpdir(), 'tq-prof-n8n-'));
	await extractInto(tarball, userFolder);
	const n8n = await startN8n({
		port: 0,
		brokerPort: 0,
		userFolder,
		version: '2',
		env: {
			N8N_LOG_LEVEL: 'warn',
			NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${profDir} --cpu-prof-interval=250`,
		},
	});
	const pid = n8n.pid();
	try {
		const creds = await benchCredentials(n8n, sandbox);
		if (scenario === 'trigger') {
			const json = useHttp ? wf.triggerWithWebhook() : wf.triggerWithNode(creds);
			const id = String((await n8n.api.post('/workflows', json)).data.id);
			await sandbox.client.createTasks(QUEUE_ID, items);
			await n8n.api.post(`/workflows/${id}/activate`, {});
			await new Promise((r) => setTimeout(r, 1500));
			if (useHttp)
				await sandbox.client.setWebhook(QUEUE_ID, `${n8n.webhookBase}/${wf.HOOK_PATH}`, {
					by: PERSON,
				});
			const t0 = performance.now();
			await sandbox.client.completeMany(QUEUE_ID, items, { by: PERSON });
			await sandbox.client.waitForWebhookCalls(items, 300_000);
			log(`${items} deliveries answered in ${(performance.now() - t0).toFixed(0)} ms`);
			// n8n writes the profile when it exits, and it exits cleanly only once its executions are done
			const finished = await waitForExecutions(n8n, id, 0, items, { totalTimeoutMs: 300_000 });
			log(`${finished} executions finished in ${(performance.now() - t0).toFixed(0)} ms`);
		} else {
			const json =
				scenario === 'create'
					? useHttp
						? wf.createWithHttp(creds, sandbox.baseUrl)
						: wf.createWithNode(creds)
					: useHttp
						? wf.getWithHttp(creds, sandbox.baseUrl)
						: wf.getWithNode(creds);
			const id = String((await n8n.api.post('/workflows', json)).data.id);
			await n8n.api.post(`/workflows/${id}/activate`, {});
			await new Promise((r) => setTimeout(r, 1500)); // activation registers the webhook asynchronously
			const path = (json.nodes[0].parameters as { path: string }).path;
			if (scenario === 'get') {
				await sandbox.client.createTasks(QUEUE_ID, 50_000);
				await sandbox.client.completeMany(QUEUE_ID, 50_000, { by: PERSON });
			}
			for (let r = 0; r < runs; r++) {
				const body =
					scenario === 'create'
						? {
								items: Array.from({ length: items }, (_, i) => ({
									customer_message: `profile ${r} #${i}`,
									order_total: 12.5,
									receipt: `https://example.com/r/${i}.png`,
									decision: 'escalate',
								})),
							}
						: {};
				const t0 = performance.now();
				const res = await axios.post(`${n8n.webhookBase}/${path}`, body, {
					validateStatus: () => true,
					timeout: 600_000,
				});
				log(`run ${r + 1}: HTTP ${res.status} in ${(performance.now() - t0).toFixed(0)} ms`);
				if (scenario === 'create') await sandbox.client.reset();
			}
		}
	} finally {
		await n8n.stop();
		await sandbox.stop();
	}
	const files = readdirSync(profDir).filter((f) => f.includes(`.${pid}.`));
	if (files.length === 0)
		throw new Error(`no profile of pid ${pid} in ${profDir}: ${readdirSync(profDir).join(', ')}`);
	const profile = JSON.parse(readFileSync(join(profDir, files[0]), 'utf8')) as CpuProfile;
	const marker =
		scenario === 'trigger'
			? useHttp
				? /^webhook .*Webhook\.node/
				: /^(receiveDelivery|webhook) .*n8n-nodes-task-queue/
			: useHttp
				? /^execute .*HttpRequestV3/
				: /^(taskQueueRequest|execute|prepare|runPool|parseBody) .*n8n-nodes-task-queue/;
	// the trigger's burst is one window; otherwise every run but the first
	analyse(profile, marker, scenario === 'trigger' ? 1 : runs - 1);
	rmSync(userFolder, { recursive: true, force: true });
	log(`profile kept in ${join(profDir, files[0])}`);
}

main().catch((error) => {
	console.error(error instanceof Error ? error.stack : error);
	process.exit(1);
});
