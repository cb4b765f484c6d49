// Scenario 5: what the package costs before it does anything: packed size, installed size, and the
// time to `require` its node and credential files in a fresh node process (n8n's node 24, with
// n8n's own n8n-workflow and zod, as n8n loads community packages), against two popular community
// packages of similar scope installed from the npm registry into a cache folder (--ignore-scripts).
import { execFile } from 'child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'fs';
import { join, relative } from 'path';
import { promisify } from 'util';

import { cacheRoot, type N8nInstallation } from '../tools/n8n/install';
import { fmtNum, log, median, table } from './lib';
import type { Section } from './scenarios';

const exec = promisify(execFile);

/** Real, popular community packages with a credential and nodes (versions pinned). */
export const COMPETITORS: Array<{ name: string; version: string; why: string }> = [
	{
		name: '@respond-io/n8n-nodes-respond-io',
		version: '1.3.6',
		why: 'credential + action node + trigger node',
	},
	{
		name: '@mendable/n8n-nodes-firecrawl',
		version: '2.1.2',
		why: 'credential + action node (usable as a tool), official',
	},
];

interface Footprint {
	name: string;
	version: string;
	tarballBytes: number;
	installedBytes: number;
	files: number;
	dependencies: number;
	entryFiles: string[];
	requireWarm: number[];
	requireCold: number[];
}

function dirSize(dir: string): { bytes: number; files: number } {
	let bytes = 0;
	let files = 0;
	for (const entry of readdirSync(dir, { withFileTypes: true })) {
		const p = join(dir, entry.name);
		if (entry.isDirectory()) {
			const s = dirSize(p);
			bytes += s.bytes;
			files += s.files;
		} else if (entry.isFile()) {
			bytes += statSync(p).size;
			files++;
		}
	}
	return { bytes, files };
}

function entryFiles(pkgDir: string): string[] {
	const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as {
		n8n?: { nodes?: string[]; credentials?: string[] };
	};
	return [...(pkg.n8n?.credentials ?? []), ...(pkg.n8n?.nodes ?? [])].map((f) => join(pkgDir, f));
}

const REQUIRE_SCRIPT = `
const preload = JSON.parse(process.argv[1]);
const files = JSON.parse(process.argv[2]);
for (const p of preload) require(p);
const t0 = process.hrtime.bigint();
for (const f of files) require(f);
const t1 = process.hrtime.bigint();
process.stdout.write(String(Number(t1 - t0) / 1e6));
`;

async function timeRequire(
	inst: N8nInstallation,
	files: string[],
	preload: string[],
): Promise<number> {
	const nm = join(inst.dir, 'node_modules');
	const { stdout } = await exec(
		inst.nodeBinary,
		['-e', REQUIRE_SCRIPT, JSON.stringify(preload), JSON.stringify(files)],
		{
			env: { PATH: process.env.PATH, HOME: process.env.HOME, NODE_PATH: nm },
			cwd: inst.dir,
		},
	);
	return Number(stdout.trim());
}

/** Installs the competitors into <cache>/bench-footprint once; returns their folders. */
async function installCompetitors(): Promise<{ root: string; tarballs: Record<string, number> }> {
	const root = join(cacheRoot(), 'bench-footprint');
	mkdirSync(root, { recursive: true });
	const deps = Object.fromEntries(COMPETITORS.map((c) => [c.name, c.version]));
	const manifest = JSON.stringify(
		{ name: 'tq-bench-footprint', private: true, dependencies: deps },
		null,
		2,
	);
	const marker = join(root, '.installed.json');
	const tarDir = join(root, 'tarballs');
	if (!existsSync(marker) || readFileSync(marker, 'utf8') !== manifest) {
		log(
			`installing ${COMPETITORS.map((c) => `${c.name}@${c.version}`).join(', ')} into ${root} (--ignore-scripts)`,
		);
		writeFileSync(join(root, 'package.json'), manifest);
		const env = { ...process.env, npm_config_update_notifier: 'false' };
		await exec(
			'npm',
			[
				'install',
				'--ignore-scripts',
				'--legacy-peer-deps',
				'--no-audit',
				'--no-fund',
				'--loglevel=error',
			],
			{ cwd: root, env },
		);
		mkdirSync(tarDir, { recursive: true });
		for (const c of COMPETITORS) {
			await exec(
				'npm',
				[
					'pack',
					`${c.name}@${c.version}`,
					'--ignore-scripts',
					'--pack-destination',
					tarDir,
					'--loglevel=error',
				],
				{ cwd: root, env },
			);
		}
		writeFileSync(marker, manifest);
	}
	const tarballs: Record<string, number> = {};
	for (const c of COMPETITORS) {
		const file = `${c.name.replace(/^@/, '').replace('/', '-')}-${c.version}.tgz`;
		tarballs[c.name] = statSync(join(tarDir, file)).size;
	}
	return { root, tarballs };
}

function dependencyCount(nodeModules: string, exclude: string): number {
	let n = 0;
	for (const entry of readdirSync(nodeModules)) {
		if (entry.startsWith('.')) continue;
		if (entry.startsWith('@')) {
			for (const sub of readdirSync(join(nodeModules, entry)))
				if (`${entry}/${sub}` !== exclude) n++;
		} else if (entry !== exclude) n++;
	}
	return n;
}

export async function scenarioFootprint(
	inst: N8nInstallation,
	own: { tarball: string; installedDir: string; version: string },
	runs: number,
): Promise<Section> {
	const notes: string[] = [];
	const results: Footprint[] = [];
	const ownSize = dirSize(own.installedDir);
	results.push({
		name: 'n8n-nodes-task-queue (this package)',
		version: own.version,
		tarballBytes: statSync(own.tarball).size,
		installedBytes: ownSize.bytes,
		files: ownSize.files,
		dependencies: 0,
		entryFiles: entryFiles(own.installedDir),
		requireWarm: [],
		requireCold: [],
	});
	try {
		const { root, tarballs } = await installCompetitors();
		const nm = join(root, 'node_modules');
		for (const c of COMPETITORS) {
			const dir = join(nm, c.name);
			const pkgSize = dirSize(dir);
			// everything else in the folder belongs to the other competitors' dependencies too: count
			// only this package plus its declared dependencies' folders
			const declared = Object.keys(
				(
					JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
						dependencies?: Record<string, string>;
					}
				).dependencies ?? {},
			);
			let depBytes = 0;
			for (const d of declared) if (existsSync(join(nm, d))) depBytes += dirSize(join(nm, d)).bytes;
			results.push({
				name: c.name,
				version: c.version,
				tarballBytes: tarballs[c.name],
				installedBytes: pkgSize.bytes + depBytes,
				files: pkgSize.files,
				dependencies: declared.length,
				entryFiles: entryFiles(dir),
				requireWarm: [],
				requireCold: [],
			});
		}
		notes.push(
			`Competitors: ${COMPETITORS.map((c) => `\`${c.name}@${c.version}\` (${c.why})`).join(', ')}; installed with \`npm install --ignore-scripts --legacy-peer-deps\` into \`<n8n cache>/${relative(cacheRoot(), root)}\` (n8n-workflow is a peer: n8n provides it). Their installed size counts the package and its direct dependencies' folders (${dependencyCount(nm, '')} folders in that node_modules in all).`,
		);
	} catch (error) {
		notes.push(`Competitors could not be installed: ${(error as Error).message.split('\n')[0]}`);
	}

	// require times: fresh processes, alternating packages
	for (let i = 0; i < runs; i++) {
		for (const r of results) {
			try {
				r.requireWarm.push(await timeRequire(inst, r.entryFiles, ['n8n-workflow', 'zod']));
				r.requireCold.push(await timeRequire(inst, r.entryFiles, ['n8n-workflow']));
			} catch (error) {
				notes.push(`require of ${r.name} failed: ${(error as Error).message.split('\n')[0]}`);
				r.requireWarm.push(NaN);
			}
		}
	}
	const kb = (b: number) => `${fmtNum(b / 1024, 1)} KB`;
	const rows = results.map((r) => [
		`${r.name}@${r.version}`,
		kb(r.tarballBytes),
		kb(r.installedBytes),
		String(r.files),
		String(r.dependencies),
		String(r.entryFiles.length),
		`${fmtNum(median(r.requireWarm), 1)} ms`,
		`${fmtNum(median(r.requireCold), 1)} ms`,
	]);
	const ours = results[0];
	notes.push(
		`require: \`${inst.nodeBinary.replace(process.env.HOME ?? '~', '~')}\` (n8n's node), NODE_PATH = n8n's node_modules as n8n sets it, a fresh process per measurement, median of ${runs}; the timer covers \`require()\` of every credential and node file the package declares. "In n8n" preloads n8n-workflow and zod (n8n has both loaded when it scans community packages); "cold" preloads only n8n-workflow.`,
	);
	return {
		title: '5. Footprint',
		body: table(
			[
				'package',
				'packed',
				'installed',
				'files',
				'runtime deps',
				'entry files',
				'require (in n8n)',
				'require (cold zod)',
			],
			rows,
		),
		goals: [
			{
				goal: 'Packed package under 60 KB',
				measured: kb(ours.tarballBytes),
				met: ours.tarballBytes < 60 * 1024,
			},
			{
				goal: 'Loads in under 30 ms',
				measured: `${fmtNum(median(ours.requireWarm), 1)} ms`,
				met: Number.isFinite(median(ours.requireWarm)) ? median(ours.requireWarm) < 30 : null,
			},
		],
		notes,
		summary: [
			`5. Footprint: packed ${kb(ours.tarballBytes)}, installed ${kb(ours.installedBytes)}, require ${fmtNum(median(ours.requireWarm), 1)} ms`,
		],
	};
}
