// `npm run dev`: the sandbox with its seed, a pinned real n8n with this package installed from its
// packed tarball, a ready credential and the example workflows. One Ctrl-C stops everything.
//
// Env: TQ_N8N_PORT (5678), TQ_N8N_BROKER_PORT (5690), TQ_SANDBOX_PORT (5680), TQ_N8N_VERSION (2|1),
//      TQ_N8N_DEV_FOLDER (n8n's user folder; default <cache>/dev-n8n-<version>), TQ_DEV_FRESH=1 (start
//      from an empty n8n database), TQ_N8N_ECHO=1 (print n8n's log), TQ_MODEL_PORT (5681: the
//      scripted stand-in model the AI examples get when OPENAI_API_KEY is not set).
// `npm run dev -- --queue-mode`: n8n 2.41.1 in queue mode instead (tools/n8n/queue-mode.ts: PostgreSQL,
//      Redis, a main, 2 workers, 2 webhook processes behind nginx on TQ_N8N_PORT), in a fresh
//      temporary database each time.
import { randomBytes } from 'crypto';
import axios from 'axios';
import { spawn, type ChildProcess } from 'child_process';
import { existsSync, rmSync } from 'fs';
import { dirname, join } from 'path';

import { cacheRoot, ensureN8n, majorFromEnv, N8N_SPECS } from './install';
import { buildAndPack, extractInto, REPO_ROOT } from './package';
import { startOpenAiMock, type OpenAiMock } from '../stand-in-model';
import { ensureNamedCredential, provision } from './provision';
import { startQueueMode, type QueueModeN8n } from './queue-mode';
import { startN8n, type N8nHandle } from './start';

/** Per run of `npm run dev`: a key every copy of the sandbox shared would be no secret. */
export const SANDBOX_API_KEY = `tqs_sandbox_${randomBytes(12).toString('hex')}`;
export const SANDBOX_ORG_ID = 1;

const log = (s: string) => console.log(`[dev] ${s}`);
const sleep = async (ms: number) => await new Promise((r) => setTimeout(r, ms));

let sandboxChild: ChildProcess | undefined;
let n8n: N8nHandle | undefined;
let queueMode: QueueModeN8n | undefined;
let model: OpenAiMock | undefined;
let stopping = false;
/** What the AI examples' chat model nodes get: an OpenAI credential with your key, or the stand-in's. */
const STAND_IN_MODEL = 'OpenAI stand-in (scripted, not a real model)';
const OPENAI_CREDENTIAL = 'OpenAI (OPENAI_API_KEY)';

function killGroup(child: ChildProcess | undefined, signal: NodeJS.Signals) {
	if (!child?.pid || child.exitCode !== null) return;
	try {
		process.kill(-child.pid, signal);
	} catch {
		// gone
	}
}

async function stopAll(code: number) {
	if (stopping) return;
	stopping = true;
	log('stopping ...');
	const waits: Array<Promise<unknown>> = [];
	if (model) waits.push(model.close().catch(() => undefined));
	if (queueMode) waits.push(queueMode.stop().catch(() => undefined));
	else if (n8n) waits.push(n8n.stop().catch(() => undefined));
	if (sandboxChild && sandboxChild.exitCode === null) {
		const child = sandboxChild;
		waits.push(
			new Promise<void>((resolve) => {
				child.once('exit', () => resolve());
				killGroup(child, 'SIGTERM');
				setTimeout(() => {
					killGroup(child, 'SIGKILL');
					resolve();
				}, 5000).unref();
			}),
		);
	}
	await Promise.all(waits);
	log('stopped');
	process.exit(code);
}

export async function startSandboxProcess(port: number): Promise<string> {
	const baseUrl = `http://127.0.0.1:${port}`;
	const tsx = join(REPO_ROOT, 'node_modules', '.bin', 'tsx');
	const cli = join(REPO_ROOT, 'sandbox', 'cli.ts');
	if (!existsSync(cli)) throw new Error('sandbox/cli.ts does not exist yet');
	sandboxChild = spawn(tsx, [cli, '--port', String(port), '--api-key', SANDBOX_API_KEY], {
		cwd: REPO_ROOT,
		env: { ...process.env, PORT: String(port), SANDBOX_PORT: String(port) },
		stdio: ['ignore', 'inherit', 'inherit'],
		detached: true,
	});
	sandboxChild.on('exit', (code, signal) => {
		if (!stopping) {
			log(`the sandbox exited (code ${code}, signal ${signal}); stopping`);
			void stopAll(1);
		}
	});
	const started = Date.now();
	while (Date.now() - started < 60_000) {
		try {
			const res = await axios.get(`${baseUrl}/app/`, { timeout: 2000, validateStatus: () => true });
			if (res.status < 500) return baseUrl;
		} catch {
			// not yet
		}
		if (sandboxChild.exitCode !== null) throw new Error('the sandbox exited during start-up');
		await sleep(200);
	}
	throw new Error(`the sandbox did not answer on ${baseUrl}`);
}

async function main() {
	const t0 = Date.now();
	const secs = () => `${((Date.now() - t0) / 1000).toFixed(1)} s`;
	const asQueueMode = process.argv.includes('--queue-mode');
	const major = asQueueMode ? '2' : majorFromEnv();
	const n8nPort = Number(process.env.TQ_N8N_PORT ?? 5678);
	const brokerPort = Number(process.env.TQ_N8N_BROKER_PORT ?? 5690);
	const sandboxPort = Number(process.env.TQ_SANDBOX_PORT ?? 5680);
	const userFolder =
		process.env.TQ_N8N_DEV_FOLDER ??
		join(cacheRoot(), `dev-n8n-${N8N_SPECS[major].version}${asQueueMode ? '-queue-mode' : ''}`);
	// queue mode keeps its database in a temporary PostgreSQL: its user folder starts empty each time
	if (process.env.TQ_DEV_FRESH || asQueueMode) rmSync(userFolder, { recursive: true, force: true });

	// Independent steps in parallel: the sandbox, the n8n install (cold cache only), build + pack.
	const [sandboxUrl, , tarball] = await Promise.all([
		startSandboxProcess(sandboxPort).then((u) => {
			log(`sandbox up at ${u} (${secs()})`);
			return u;
		}),
		ensureN8n(major, (s) => log(s)),
		buildAndPack({ log: (s) => log(s) }).then((t) => {
			log(`packed ${t} (${secs()})`);
			return t;
		}),
	]);
	await extractInto(tarball, userFolder);
	rmSync(dirname(tarball), { recursive: true, force: true });
	log(
		`installed the package into ${userFolder}/.n8n/nodes; starting n8n ${N8N_SPECS[major].version} ...`,
	);
	if (asQueueMode) {
		log(
			'starting n8n in queue mode: PostgreSQL, Redis, a main, 2 workers, 2 webhook processes behind nginx (routed by path) ...',
		);
		queueMode = await startQueueMode({
			userFolder,
			port: n8nPort,
			echo: !!process.env.TQ_N8N_ECHO,
			log: (s) => log(s),
			// as docs/scaling.md deploys it: each webhook address to one webhook process
			routing: 'by-path',
		});
		n8n = queueMode.asOne();
	} else {
		n8n = await startN8n({
			port: n8nPort,
			brokerPort,
			userFolder,
			version: major,
			echo: process.env.TQ_N8N_ECHO ? '[n8n] ' : false,
		});
	}
	log(`n8n ready (${secs()}); provisioning`);
	// the AI examples need a chat model: yours with OPENAI_API_KEY, else a scripted stand-in
	let modelCredential: { id: string; name: string };
	if (process.env.OPENAI_API_KEY) {
		modelCredential = {
			name: OPENAI_CREDENTIAL,
			id: await ensureNamedCredential(n8n, OPENAI_CREDENTIAL, 'openAiApi', {
				apiKey: process.env.OPENAI_API_KEY,
			}),
		};
	} else {
		model = await startOpenAiMock(undefined, { port: Number(process.env.TQ_MODEL_PORT ?? 5681) });
		modelCredential = {
			name: STAND_IN_MODEL,
			id: await ensureNamedCredential(n8n, STAND_IN_MODEL, 'openAiApi', {
				apiKey: 'sk-stand-in',
				url: model.baseUrl,
			}),
		};
		log(
			`the AI examples use "${STAND_IN_MODEL}" at ${model.baseUrl}: it calls the first tool with what the request says, then quotes the tool's answer (set OPENAI_API_KEY for a real model)`,
		);
	}
	const result = await provision(
		n8n,
		{ baseUrl: sandboxUrl, apiKey: SANDBOX_API_KEY, organizationId: SANDBOX_ORG_ID },
		{ log: (s) => log(s), model: modelCredential },
	);
	const line = '-'.repeat(72);
	console.log(
		[
			line,
			`n8n ${n8n.version}:   ${n8n.url}`,
			`  login:        ${n8n.owner.email} / ${n8n.owner.password}`,
			`  credential:   "Task Queue sandbox" (id ${result.credentialId})`,
			`  workflows:    ${result.workflows.map((w) => `${w.name}${w.active ? '' : ' (inactive)'}\n                  ${n8n!.url}/workflow/${w.id}`).join('\n                ')}`,
			`sandbox:        ${sandboxUrl}  (people's page: ${sandboxUrl}/app/)`,
			`  API key:      ${SANDBOX_API_KEY}   organization ${SANDBOX_ORG_ID}`,
			`try Create and Wait: a refund request waits for a person's decision in one execution`,
			`  1. curl -X POST ${n8n.webhookBase}/refund-decision -H 'Content-Type: application/json' \\`,
			`       -d '{"message": "My kettle leaks", "order_total": 42}'`,
			`  2. open ${sandboxUrl}/app/, pick who you are, open "Refund Decisions", "Take next task", choose a Decision, "Complete task"`,
			`  3. the execution goes on: ${n8n.url}/home/executions`,
			`an AI agent whose refund waits for a person's approval (model: ${modelCredential.name}):`,
			`  curl -X POST ${n8n.webhookBase}/refund-agent-approval -H 'Content-Type: application/json' \\`,
			`       -d '{"message": "My kettle leaks", "order": 4411, "order_total": 89.9}'`,
			`  then approve or deny its task in "Agent Approvals" on the people's page`,
			queueMode
				? `n8n logs:       ${[queueMode.main, ...queueMode.webhooks, ...queueMode.workers].map((p) => p.logs.file).join('\n                ')}\nprocesses:      ${JSON.stringify(queueMode.processes())}`
				: `n8n log:        ${n8n.logs.file}`,
			`ready in ${secs()}. Ctrl-C stops the sandbox and n8n${queueMode ? ' (every process, PostgreSQL, Redis, nginx)' : ''}.`,
			line,
		].join('\n'),
	);
}

if (require.main === module) {
	process.on('SIGINT', () => void stopAll(0));
	process.on('SIGTERM', () => void stopAll(0));
	process.on('SIGHUP', () => void stopAll(0));
	main().catch((error) => {
		console.error(`[dev] ${error instanceof Error ? error.message : error}`);
		if (n8n) console.error(n8n.logs.text().split('\n').slice(-30).join('\n'));
		void stopAll(1);
	});
}
