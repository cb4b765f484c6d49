// Builds this package, packs it with `npm pack` and extracts the tarball where n8n looks for
// community packages ($N8N_USER_FOLDER/.n8n/nodes/node_modules/<name>), as n8n's own installer does.
import { execFile } from 'child_process';
import {
	cpSync,
	existsSync,
	mkdirSync,
	mkdtempSync,
	readFileSync,
	rmSync,
	symlinkSync,
	writeFileSync,
} from 'fs';
import { tmpdir } from 'os';
import { join, resolve } from 'path';
import { promisify } from 'util';

import type { N8nHandle } from './start';

const exec = promisify(execFile);

export const REPO_ROOT = resolve(__dirname, '..', '..');
export const PACKAGE_NAME = 'n8n-nodes-task-queue';

export interface PackOptions {
	/** Skip `npm run build` (dist/ is already fresh). */
	skipBuild?: boolean;
	log?: (s: string) => void;
}

/** What `npm run build` and `npm pack` read; copied so that a build elsewhere in the tree cannot race ours. */
const SOURCES = [
	'package.json',
	'tsconfig.json',
	'nodes',
	'credentials',
	'icons',
	'README.md',
	'LICENSE',
	'CHANGELOG.md',
	'.npmignore',
];

/**
 * `npm run build` then `npm pack` into a temp folder; returns the tarball path. Both run in a private
 * copy of the sources (node_modules linked), so other builds in the same working tree (which wipe
 * dist/) cannot break the pack; `inPlace` builds and packs the working tree itself.
 */
export async function buildAndPack(
	options: PackOptions & { inPlace?: boolean } = {},
): Promise<string> {
	const log = options.log ?? (() => undefined);
	const env = { ...process.env, npm_config_update_notifier: 'false' };
	let cwd = REPO_ROOT;
	if (!options.inPlace) {
		cwd = mkdtempSync(join(tmpdir(), 'tq-build-'));
		for (const entry of SOURCES) {
			if (existsSync(join(REPO_ROOT, entry)))
				cpSync(join(REPO_ROOT, entry), join(cwd, entry), { recursive: true });
		}
		if (options.skipBuild && existsSync(join(REPO_ROOT, 'dist')))
			cpSync(join(REPO_ROOT, 'dist'), join(cwd, 'dist'), { recursive: true });
		symlinkSync(join(REPO_ROOT, 'node_modules'), join(cwd, 'node_modules'), 'dir');
	}
	if (!options.skipBuild) {
		log('npm run build');
		try {
			await exec('npm', ['run', 'build'], { cwd, env, maxBuffer: 64 * 1024 * 1024 });
		} catch (error) {
			const e = error as { stdout?: string; stderr?: string; message: string };
			throw new Error(`npm run build failed:\n${e.stdout ?? ''}\n${e.stderr ?? ''}`);
		}
	}
	const out = mkdtempSync(join(tmpdir(), 'tq-pack-'));
	log('npm pack');
	const { stdout } = await exec(
		'npm',
		['pack', '--ignore-scripts', '--json', '--pack-destination', out],
		{
			cwd,
			env,
			maxBuffer: 64 * 1024 * 1024,
		},
	);
	const info = JSON.parse(stdout.slice(stdout.indexOf('['))) as Array<{ filename: string }>;
	if (cwd !== REPO_ROOT) rmSync(cwd, { recursive: true, force: true });
	return join(out, info[0].filename);
}

/** Lists a package in the community-node folder's manifest, as n8n's installer does. */
function registerInNodesFolder(nodesDir: string, name: string, version: string): void {
	const manifest = join(nodesDir, 'package.json');
	const pkg = existsSync(manifest)
		? (JSON.parse(readFileSync(manifest, 'utf8')) as { dependencies?: Record<string, string> })
		: { name: 'installed-nodes', private: true, dependencies: {} as Record<string, string> };
	pkg.dependencies = { ...(pkg.dependencies ?? {}), [name]: version };
	writeFileSync(manifest, JSON.stringify(pkg, null, 2));
}

function manifestOf(packageDir: string): { name: string; version: string } {
	return JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as {
		name: string;
		version: string;
	};
}

/** Extracts a packed tarball into the user folder's community-node folder (replacing any earlier copy). */
export async function extractInto(tarball: string, userFolder: string): Promise<string> {
	const nodesDir = join(userFolder, '.n8n', 'nodes');
	const target = join(nodesDir, 'node_modules', PACKAGE_NAME);
	rmSync(target, { recursive: true, force: true });
	mkdirSync(target, { recursive: true });
	await exec('tar', ['-xzf', tarball, '-C', target, '--strip-components=1']);
	registerInNodesFolder(nodesDir, PACKAGE_NAME, manifestOf(target).version);
	return target;
}

/** Copies an unpacked package folder (such as bench/floor) into the user folder's community-node folder. */
export function copyPackageInto(packageDir: string, userFolder: string): string {
	const nodesDir = join(userFolder, '.n8n', 'nodes');
	const { name, version } = manifestOf(packageDir);
	const target = join(nodesDir, 'node_modules', name);
	rmSync(target, { recursive: true, force: true });
	cpSync(packageDir, target, { recursive: true });
	registerInNodesFolder(nodesDir, name, version);
	return target;
}

/** Build + pack + extract into the n8n's user folder, then restart that n8n (if given). */
export async function installPackage(
	target: N8nHandle | { userFolder: string },
	options: PackOptions & { tarball?: string } = {},
): Promise<string> {
	const tarball = options.tarball ?? (await buildAndPack(options));
	await extractInto(tarball, target.userFolder);
	if ('restart' in target) await target.restart();
	return tarball;
}

if (require.main === module) {
	// npx tsx tools/n8n/package.ts <userFolder>
	const folder = process.argv[2];
	if (!folder) {
		console.error('usage: tsx tools/n8n/package.ts <N8N_USER_FOLDER>');
		process.exit(2);
	}
	installPackage({ userFolder: folder }, { log: console.log })
		.then((t) => console.log(`installed ${t} into ${folder}`))
		.catch((error) => {
			console.error(error instanceof Error ? error.message : error);
			process.exit(1);
		});
}
