// Starts n8n 2.41.1 in queue mode, as teams that outgrow one process run it: PostgreSQL (database)
// and Redis (queue) from Debian's packages, run as unprivileged processes in a temporary folder; a
// main process (editor, API, triggers' activation, polls), 2 workers (executions), 2 webhook
// processes (production webhooks and waiting executions) behind nginx, which round-robins between
// them and is the n8n address the service calls (WEBHOOK_URL). The main takes no production
// webhooks (N8N_DISABLE_PRODUCTION_MAIN_PROCESS).
//
//   npx tsx tools/n8n/queue-mode.ts        start it all; Ctrl-C stops all of it
// Needs tools/install-queue-mode.sh (run by it when something is missing).
import { execFileSync, spawn, type ChildProcess } from 'child_process';
import {
	chmodSync,
	chownSync,
	existsSync,
	mkdirSync,
	mkdtempSync,
	readdirSync,
	readFileSync,
	rmSync,
	symlinkSync,
	writeFileSync,
} from 'fs';
import { tmpdir, userInfo } from 'os';
import { basename, join } from 'path';

import { REPO_ROOT } from './package';
import { freePort, startN8n, type N8nHandle, type StartN8nOptions } from './start';

const sleep = async (ms: number) => await new Promise((r) => setTimeout(r, ms));

export interface QueueModeN8n {
	/** The main process (editor, public API, REST): `main.api` is the public API. */
	main: N8nHandle;
	workers: N8nHandle[];
	webhooks: N8nHandle[];
	/** What the service calls: nginx in front of the webhook processes, e.g. http://localhost:PORT */
	url: string;
	/** `${url}/webhook` */
	webhookBase: string;
	/** Each process's pid by role, to tell from the logs which one handled what. */
	processes(): Record<string, number | undefined>;
	/** The calls nginx passed on so far, with the role of the process that answered each. */
	proxiedCalls(): ProxiedCall[];
	/** The role (`worker-1`, ...) whose log says it finished the execution, or undefined. */
	ranBy(executionId: string | number): string | undefined;
	/** How nginx spreads webhook calls from now on (reloads it; no call is lost). */
	setRouting(routing: WebhookRouting): Promise<void>;
	/** Stops the webhook processes, runs `whileDown`, starts them again (nginx answers 502 meanwhile). */
	restartWebhookProcesses(whileDown?: () => Promise<void>): Promise<void>;
	stop(): Promise<void>;
	/**
	 * The whole of it as one n8n for the tools and tests written for one process: the main's API,
	 * the proxy's address as n8n's address and webhook base, every process's log; its `stop` and
	 * `restart` stop and start every n8n process (PostgreSQL, Redis and nginx stay up: `stop()` of
	 * this object ends those).
	 */
	asOne(): N8nHandle;
}

interface Service {
	stop(): Promise<void>;
}

function postgresBin(): string {
	const versions = existsSync('/usr/lib/postgresql')
		? readdirSync('/usr/lib/postgresql').sort((a, b) => Number(a) - Number(b))
		: [];
	const bin = versions.length
		? join('/usr/lib/postgresql', versions[versions.length - 1], 'bin')
		: '';
	if (!bin || !existsSync(join(bin, 'initdb')))
		throw new Error('PostgreSQL is missing: run tools/install-queue-mode.sh');
	return bin;
}

export function ensureQueueModeServices(log: (s: string) => void = console.log): void {
	const ok = () => {
		try {
			postgresBin();
			return existsSync('/usr/sbin/nginx') && existsSync('/usr/bin/redis-server');
		} catch {
			return false;
		}
	};
	if (ok()) return;
	log('[queue-mode] installing PostgreSQL, Redis and nginx from Debian (once)');
	execFileSync('bash', [join(REPO_ROOT, 'tools', 'install-queue-mode.sh')], { stdio: 'inherit' });
	if (!ok())
		throw new Error('tools/install-queue-mode.sh did not install PostgreSQL, Redis and nginx');
}

/** A child process in its own group, stopped with SIGTERM (SIGKILL after 10 s). */
function daemon(
	command: string,
	args: string[],
	options: { cwd?: string; log: string; uid?: number; gid?: number },
): Service & { proc: ChildProcess } {
	const proc = spawn(command, args, {
		cwd: options.cwd,
		stdio: ['ignore', 'pipe', 'pipe'],
		detached: true,
		uid: options.uid,
		gid: options.gid,
	});
	const lines: string[] = [];
	const keep = (b: Buffer) => {
		lines.push(b.toString());
		if (lines.length > 200) lines.shift();
	};
	proc.stdout?.on('data', keep);
	proc.stderr?.on('data', keep);
	const exited = new Promise<void>((resolve) => proc.on('exit', () => resolve()));
	proc.on('exit', (code, signal) => {
		if (code && code !== 0) writeFileSync(options.log, lines.join(''));
		void signal;
	});
	return {
		proc,
		stop: async () => {
			if (proc.exitCode !== null || proc.signalCode !== null) return;
			try {
				process.kill(-(proc.pid as number), 'SIGTERM');
			} catch {
				// gone
			}
			const done = await Promise.race([exited.then(() => true), sleep(10_000).then(() => false)]);
			if (!done) {
				try {
					process.kill(-(proc.pid as number), 'SIGKILL');
				} catch {
					// gone
				}
			}
		},
	};
}

async function waitFor(what: string, probe: () => boolean, timeoutMs = 30_000): Promise<void> {
	const deadline = Date.now() + timeoutMs;
	while (!probe()) {
		if (Date.now() > deadline)
			throw new Error(`queue mode: ${what} did not come up in ${timeoutMs} ms`);
		await sleep(200);
	}
}

function succeeds(command: string, args: string[]): boolean {
	try {
		execFileSync(command, args, { stdio: 'ignore' });
		return true;
	} catch {
		return false;
	}
}

/** PostgreSQL in `dir`, run by the `postgres` user when started as root (it refuses root). */
async function startPostgres(dir: string): Promise<Service & { port: number }> {
	const bin = postgresBin();
	const port = await freePort();
	mkdirSync(dir, { recursive: true });
	const asRoot = userInfo().uid === 0;
	const owner = asRoot
		? {
				uid: Number(execFileSync('id', ['-u', 'postgres']).toString()),
				gid: Number(execFileSync('id', ['-g', 'postgres']).toString()),
			}
		: {};
	if (asRoot) chownSync(dir, owner.uid as number, owner.gid as number);
	execFileSync(
		join(bin, 'initdb'),
		['-D', join(dir, 'data'), '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8'],
		{
			stdio: ['ignore', 'ignore', 'pipe'],
			cwd: dir,
			...owner,
		},
	);
	const server = daemon(
		join(bin, 'postgres'),
		[
			'-D',
			join(dir, 'data'),
			'-p',
			String(port),
			'-k',
			dir,
			'-c',
			'listen_addresses=127.0.0.1',
			'-c',
			'fsync=off',
			'-c',
			'max_connections=200',
		],
		{ log: join(tmpdir(), `tq-postgres-${port}.log`), ...owner },
	);
	await waitFor('PostgreSQL', () =>
		succeeds(join(bin, 'pg_isready'), ['-h', '127.0.0.1', '-p', String(port)]),
	);
	// the one answering must be this stack's: a PostgreSQL of another stack started on the same port
	// at the same moment (another CI job) would share its database
	const dataDirectory = execFileSync(
		join(bin, 'psql'),
		['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-tAc', 'SHOW data_directory'],
		{ stdio: ['ignore', 'pipe', 'ignore'] },
	)
		.toString()
		.trim();
	if (server.proc.exitCode !== null || dataDirectory !== join(dir, 'data'))
		throw new Error(`queue mode: port ${port} is another PostgreSQL's (${dataDirectory})`);
	execFileSync(
		join(bin, 'createdb'),
		['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', 'n8n'],
		{ stdio: 'ignore' },
	);
	return { port, stop: server.stop };
}

async function startRedis(dir: string): Promise<Service & { port: number }> {
	const port = await freePort();
	mkdirSync(dir, { recursive: true });
	const server = daemon(
		'/usr/bin/redis-server',
		[
			'--port',
			String(port),
			'--bind',
			'127.0.0.1',
			'--save',
			'',
			'--appendonly',
			'no',
			'--dir',
			dir,
		],
		{
			log: join(dir, 'redis.log'),
		},
	);
	await waitFor('Redis', () => succeeds('/usr/bin/redis-cli', ['-p', String(port), 'ping']));
	// the one answering must be this stack's: another stack's Redis would share its queue of jobs
	const answer = execFileSync('/usr/bin/redis-cli', ['-p', String(port), 'config', 'get', 'dir'], {
		stdio: ['ignore', 'pipe', 'ignore'],
	})
		.toString()
		.trim()
		.split('\n');
	if (server.proc.exitCode !== null || answer[1] !== dir)
		throw new Error(`queue mode: port ${port} is another Redis's (${answer.join(' ')})`);
	return { port, stop: server.stop };
}

/**
 * How nginx spreads `/webhook/` and `/webhook-waiting/` over the webhook processes: `round-robin`
 * (each call to the next one), or `by-path` (consistent hash of the path, the query aside: every
 * delivery of one trigger and every call to one waiting run, any item or level, reach the same
 * process; different workflows and runs still spread).
 */
export type WebhookRouting = 'round-robin' | 'by-path';

interface Nginx extends Service {
	setRouting(routing: WebhookRouting): Promise<void>;
	/**
	 * Drained: nginx answers every webhook call 503 itself, and this returns once the calls it had
	 * passed on are answered (its old worker has exited). Undrained: the routing again.
	 */
	setDrained(drained: boolean): Promise<void>;
	accessLog(): string;
}

/** nginx: `/webhook/` and `/webhook-waiting/` to the webhook processes, the rest to the main. */
async function startNginx(
	dir: string,
	port: number,
	mainPort: number,
	webhookPorts: number[],
	routing: WebhookRouting,
): Promise<Nginx> {
	mkdirSync(join(dir, 'logs'), { recursive: true });
	const proxy = `proxy_http_version 1.1; proxy_set_header Connection ""; proxy_set_header Host $http_host; proxy_set_header X-Forwarded-For $remote_addr; proxy_read_timeout 300s; proxy_buffering off;`;
	const accessLog = join(dir, 'logs', 'access.log');
	let routed = routing;
	let drained = false;
	const conf = (how: WebhookRouting) => `
worker_processes 1;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'logs', 'error.log')} warn;
${userInfo().uid === 0 ? 'user root;' : ''}
events { worker_connections 4096; }
http {
  log_format upstream '$request_method $uri $status $upstream_addr |$http_user_agent';
  access_log ${accessLog} upstream;
  client_body_temp_path ${join(dir, 'body')};
  proxy_temp_path ${join(dir, 'proxy')};
  fastcgi_temp_path ${join(dir, 'fastcgi')};
  uwsgi_temp_path ${join(dir, 'uwsgi')};
  scgi_temp_path ${join(dir, 'scgi')};
  client_max_body_size 64m;
  map $http_upgrade $connection_upgrade { default upgrade; '' ''; }
  upstream webhook_processes { ${how === 'by-path' ? 'hash $uri consistent; ' : ''}${webhookPorts.map((p) => `server 127.0.0.1:${p} max_fails=0;`).join(' ')} keepalive 64; keepalive_timeout 4s; }
  upstream main_process { server 127.0.0.1:${mainPort}; keepalive 16; keepalive_timeout 4s; }
  server {
    listen 127.0.0.1:${port};
    location /webhook/ { ${drained ? 'return 503;' : `proxy_pass http://webhook_processes; ${proxy}`} }
    location /webhook-waiting/ { ${drained ? 'return 503;' : `proxy_pass http://webhook_processes; ${proxy}`} }
    location / { proxy_pass http://main_process; proxy_http_version 1.1; proxy_set_header Upgrade $http_upgrade; proxy_set_header Connection $connection_upgrade; proxy_set_header Host $http_host; proxy_read_timeout 300s; proxy_buffering off; }
  }
}
`;
	const file = join(dir, 'nginx.conf');
	writeFileSync(file, conf(routing));
	const server = daemon('/usr/sbin/nginx', ['-c', file, '-p', dir, '-g', 'daemon off;'], {
		log: join(dir, 'nginx.out'),
	});
	await waitFor('nginx', () => existsSync(join(dir, 'nginx.pid')));
	const workers = () => {
		try {
			return execFileSync('pgrep', ['-P', readFileSync(join(dir, 'nginx.pid'), 'utf8').trim()])
				.toString()
				.split('\n')
				.filter(Boolean);
		} catch {
			return [];
		}
	};
	/**
	 * The new configuration in force: the old worker exits once every call it took is answered
	 * (nginx's graceful reload); then no call is on its way to a process about to stop, none goes by
	 * the old rule, and none on a kept-alive connection still gets the old worker's answer. An
	 * operator's reload ends after a while too.
	 */
	const reload = async (what: string) => {
		const before = workers();
		writeFileSync(file, conf(routed));
		execFileSync('/usr/sbin/nginx', ['-c', file, '-p', dir, '-s', 'reload'], { stdio: 'ignore' });
		await waitFor(
			`nginx's old worker gone (${what})`,
			() => !workers().some((pid) => before.includes(pid)),
			60_000,
		).catch((error: Error) => console.warn(`[queue-mode] ${error.message}; going on`));
	};
	return {
		stop: server.stop,
		accessLog: () => (existsSync(accessLog) ? readFileSync(accessLog, 'utf8') : ''),
		async setRouting(how) {
			routed = how;
			await reload(`routing ${how}`);
		},
		async setDrained(drain) {
			drained = drain;
			await reload(drain ? 'drained' : 'routing again');
		},
	};
}

/** One call nginx passed on: which process (role) answered it. */
export interface ProxiedCall {
	method: string;
	path: string;
	status: number;
	role: string;
	/** The caller's User-Agent: the sandbox's deliveries say `task-queue-sandbox`. */
	agent: string;
}

export async function startQueueMode(
	options: {
		userFolder?: string;
		/** nginx's port: the n8n address for people (editor) and for the service (webhooks); default a free one */
		port?: number;
		echo?: boolean;
		workers?: number;
		webhookProcesses?: number;
		routing?: WebhookRouting;
		/** more environment for every n8n process */
		env?: Record<string, string>;
		log?: (s: string) => void;
	} = {},
): Promise<QueueModeN8n> {
	const log = options.log ?? ((s: string) => console.log(`[queue-mode] ${s}`));
	ensureQueueModeServices(log);
	const root = mkdtempSync(join(tmpdir(), 'tq-queue-mode-'));
	chmodSync(root, 0o755); // the postgres user works below it
	const userFolder = options.userFolder ?? join(root, 'n8n');
	mkdirSync(userFolder, { recursive: true });
	const services: Service[] = [];
	const n8ns: N8nHandle[] = [];
	const stop = async () => {
		for (const n of [...n8ns].reverse()) await n.stop().catch(() => undefined);
		for (const s of [...services].reverse()) await s.stop().catch(() => undefined);
		if (!process.env.TQ_QUEUE_MODE_KEEP) rmSync(root, { recursive: true, force: true });
	};
	try {
		const postgres = await startPostgres(join(root, 'postgres'));
		services.push(postgres);
		const redis = await startRedis(join(root, 'redis'));
		services.push(redis);
		log(`PostgreSQL on ${postgres.port}, Redis on ${redis.port}`);
		const proxyPort = options.port || (await freePort());
		const url = `http://localhost:${proxyPort}`;
		const shared: Record<string, string> = {
			DB_TYPE: 'postgresdb',
			DB_POSTGRESDB_HOST: '127.0.0.1',
			DB_POSTGRESDB_PORT: String(postgres.port),
			DB_POSTGRESDB_DATABASE: 'n8n',
			DB_POSTGRESDB_USER: 'postgres',
			DB_POSTGRESDB_PASSWORD: '',
			EXECUTIONS_MODE: 'queue',
			QUEUE_BULL_REDIS_HOST: '127.0.0.1',
			QUEUE_BULL_REDIS_PORT: String(redis.port),
			// a prefix of its own: no other stack's process takes this stack's jobs, whatever Redis it reaches
			QUEUE_BULL_PREFIX: `bull-${basename(root)}`,
			WEBHOOK_URL: `${url}/`,
			N8N_DISABLE_PRODUCTION_MAIN_PROCESS: 'true',
			N8N_PROXY_HOPS: '1',
			OFFLOAD_MANUAL_EXECUTIONS_TO_WORKERS: 'true',
			// n8n pings its database every 2 s and, after one ping slower than 5 s, answers every
			// request with 503 "Database is not ready!" (deliveries the service never retries). Five n8n
			// processes and PostgreSQL on 2 cores under a burst of 500 did that here (58 deliveries lost).
			DB_PING_TIMEOUT_MS: '60000',
			...options.env,
		};
		// Each process has a user folder of its own, as on a machine of its own: n8n keeps its crash
		// journal and its event log there, and a process starting in a folder another runs in took that
		// one's journal for its own crash and marked the executions the other had running, or waiting,
		// as crashed (a run resumed during a restart lost its job for good). The package is one
		// installation: the main's community-node folder, linked into each.
		mkdirSync(join(userFolder, '.n8n', 'nodes'), { recursive: true });
		const folderOf = (logName: string) => {
			if (logName === 'main.log') return userFolder;
			const folder = join(root, `n8n-${logName.replace(/\.log$/, '')}`);
			mkdirSync(join(folder, '.n8n'), { recursive: true });
			if (!existsSync(join(folder, '.n8n', 'nodes')))
				symlinkSync(join(userFolder, '.n8n', 'nodes'), join(folder, '.n8n', 'nodes'));
			return folder;
		};
		const common = (logName: string): StartN8nOptions => ({
			port: 0,
			brokerPort: 0,
			userFolder: folderOf(logName),
			version: '2',
			logName,
			echo: options.echo ? `[${logName.replace(/\.log$/, '')}] ` : false,
			env: shared,
		});
		// the main first: it migrates the database and sets up the owner
		const main = await startN8n({ ...common('main.log') });
		n8ns.push(main);
		log(`main on ${main.port}`);
		const webhooks: N8nHandle[] = [];
		const workers: N8nHandle[] = [];
		const webhookCount = options.webhookProcesses ?? 2;
		const workerCount = options.workers ?? 2;
		const started = await Promise.all([
			...Array.from({ length: webhookCount }, async (_, i) => {
				const w = await startN8n({ ...common(`webhook-${i + 1}.log`), command: 'webhook' });
				webhooks.push(w);
				return w;
			}),
			...Array.from({ length: workerCount }, async (_, i) => {
				const port = await freePort();
				const w = await startN8n({
					...common(`worker-${i + 1}.log`),
					port,
					command: 'worker',
					env: {
						...shared,
						QUEUE_HEALTH_CHECK_ACTIVE: 'true',
						QUEUE_HEALTH_CHECK_PORT: String(port),
					},
				});
				workers.push(w);
				return w;
			}),
		]);
		n8ns.push(...started);
		// ordered by role, not by which came up first
		webhooks.sort((a, b) => a.logs.file.localeCompare(b.logs.file));
		workers.sort((a, b) => a.logs.file.localeCompare(b.logs.file));
		const routing = options.routing ?? 'round-robin';
		const nginx = await startNginx(
			join(root, 'nginx'),
			proxyPort,
			main.port,
			webhooks.map((w) => w.port),
			routing,
		);
		services.unshift(nginx);
		log(
			`${webhooks.length} webhook processes (${webhooks.map((w) => w.port).join(', ')}) behind nginx (${routing}) at ${url}; ${workers.length} workers`,
		);
		const roleOfPort = new Map<string, string>([
			[`127.0.0.1:${main.port}`, 'main'],
			...webhooks.map((w, i) => [`127.0.0.1:${w.port}`, `webhook-${i + 1}`] as [string, string]),
		]);
		return {
			main,
			workers,
			webhooks,
			url,
			webhookBase: `${url}/webhook`,
			processes: () => ({
				main: main.pid(),
				...Object.fromEntries(webhooks.map((w, i) => [`webhook-${i + 1}`, w.pid()])),
				...Object.fromEntries(workers.map((w, i) => [`worker-${i + 1}`, w.pid()])),
			}),
			proxiedCalls: () =>
				nginx
					.accessLog()
					.split('\n')
					.filter(Boolean)
					.map((line) => {
						const cut = line.indexOf(' |');
						const agent = cut === -1 ? '' : line.slice(cut + 2);
						const [method, path, status, ...upstream] = (
							cut === -1 ? line : line.slice(0, cut)
						).split(' ');
						// a call retried on another process lists both: the last one answered
						const last = upstream.join(' ').split(/,\s*/).pop() ?? '';
						return {
							method,
							path,
							status: Number(status),
							role: roleOfPort.get(last) ?? (last || 'nginx'),
							agent,
						};
					}),
			ranBy: (executionId) => {
				const line = new RegExp(`Worker finished execution ${executionId} \\(`);
				const i = workers.findIndex((w) => line.test(w.logs.text()));
				return i === -1 ? undefined : `worker-${i + 1}`;
			},
			setRouting: async (how) => await nginx.setRouting(how),
			// as an operator restarts them: nginx stops passing calls on and the ones on their way are
			// answered first (n8n 2.41 stopped mid-resume left the execution "running" for good: its
			// pool closed under the update that marks it running)
			restartWebhookProcesses: async (whileDown) => {
				await nginx.setDrained(true);
				await Promise.all(webhooks.map(async (w) => await w.stop()));
				await whileDown?.();
				await Promise.all(webhooks.map(async (w) => await w.restart()));
				await nginx.setDrained(false);
			},
			stop,
			asOne: () => ({
				...main,
				url,
				webhookBase: `${url}/webhook`,
				get apiKey() {
					return main.apiKey;
				},
				logs: {
					file: main.logs.file,
					text: () => [main, ...webhooks, ...workers].map((n) => n.logs.text()).join('\n'),
					mark: main.logs.mark,
					since: main.logs.since,
				},
				stop: async () => {
					for (const n of [...webhooks, ...workers, main]) await n.stop();
				},
				restart: async (whileDown?: () => Promise<void>) => {
					const others = [...webhooks, ...workers];
					await main.restart(async () => {
						await Promise.all(others.map(async (n) => await n.stop()));
						await whileDown?.();
					});
					await Promise.all(others.map(async (n) => await n.restart()));
				},
			}),
		};
	} catch (error) {
		await stop();
		throw error;
	}
}

if (require.main === module) {
	void (async () => {
		const q = await startQueueMode({ echo: !!process.env.TQ_N8N_ECHO });
		console.log(
			`n8n in queue mode: editor ${q.main.url} (login ${q.main.owner.email} / ${q.main.owner.password}), webhooks ${q.webhookBase}`,
		);
		console.log(`processes: ${JSON.stringify(q.processes())}`);
		const shutdown = () => void q.stop().then(() => process.exit(0));
		process.on('SIGINT', shutdown);
		process.on('SIGTERM', shutdown);
	})().catch((error) => {
		console.error(error instanceof Error ? error.message : error);
		process.exit(1);
	});
}
