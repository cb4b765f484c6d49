// The links the nodes and the credential show in n8n ("Docs", "Open docs") point at headings the
// README has, and the README links only files the repository has.
import { existsSync, readdirSync, readFileSync } from 'fs';
import { join } from 'path';

const ROOT = join(__dirname, '..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const REPO_README = 'https://github.com/task-queue/n8n-nodes-task-queue?tab=readme-ov-file#';

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
function anchor(heading: string): string {
	return heading
		.trim()
		.toLowerCase()
		.replace(/[^\p{L}\p{N}\s-]/gu, '')
		.replace(/\s/g, '-');
}

const anchors = new Set([...README.matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchor(m[1])));

function docLinks(): string[] {
	const texts = [
		...readdirSync(join(ROOT, 'nodes/TaskQueue'))
			.filter((f) => /\.node\.(json|ts)$/.test(f))
			.map((f) => join(ROOT, 'nodes/TaskQueue', f)),
		join(ROOT, 'credentials/TaskQueueApi.credentials.ts'),
	].map((file) => readFileSync(file, 'utf8'));
	return texts.flatMap((text) =>
		[
			...text.matchAll(
				/https:\/\/github\.com\/task-queue\/n8n-nodes-task-queue\?tab=readme-ov-file#[\w-]+/g,
			),
		].map((m) => m[0]),
	);
}

test('every documentation link of the nodes and the credential names a heading of the README', () => {
	const links = docLinks();
	expect(links.length).toBeGreaterThanOrEqual(6);
	expect(links.filter((link) => !anchors.has(link.slice(REPO_README.length)))).toEqual([]);
});

test('every relative link of the README names a file of the repository', () => {
	const targets = [...README.matchAll(/\]\(([^)#:\s]+)(#[^)]*)?\)/g)].map((m) => m[1]);
	expect(targets.length).toBeGreaterThan(10);
	expect(targets.filter((target) => !existsSync(join(ROOT, target)))).toEqual([]);
});

test('every link of the nodes into docs/ names a file of the repository', () => {
	const texts = readdirSync(join(ROOT, 'nodes/TaskQueue'), { recursive: true })
		.map(String)
		.filter((f) => f.endsWith('.ts') || f.endsWith('.json'))
		.map((f) => readFileSync(join(ROOT, 'nodes/TaskQueue', f), 'utf8'));
	const links = texts.flatMap((text) =>
		[
			...text.matchAll(
				/https:\/\/github\.com\/task-queue\/n8n-nodes-task-queue\/blob\/main\/([\w./-]+)/g,
			),
		].map((m) => m[1]),
	);
	expect(links).toContain('docs/waiting.md');
	expect(links.filter((path) => !existsSync(join(ROOT, path)))).toEqual([]);
});

test.each(['docs/waiting.md', 'docs/operating.md', 'CONTRIBUTING.md'])(
	'every relative link of %s names a file of the repository, and every anchor a heading',
	(file) => {
		const text = readFileSync(join(ROOT, file), 'utf8');
		const dir = join(ROOT, file, '..');
		const targets = [...text.matchAll(/\]\(([^)#:\s]*)(#[^)]*)?\)/g)].map((m) => ({
			path: m[1],
			hash: m[2],
		}));
		expect(targets.length).toBeGreaterThan(3);
		const broken = targets.filter(({ path, hash }) => {
			const target = path ? join(dir, path) : join(ROOT, file);
			if (!existsSync(target)) return true;
			if (!hash || !target.endsWith('.md')) return false;
			const headings = new Set(
				[...readFileSync(target, 'utf8').matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchor(m[1])),
			);
			return !headings.has(hash.slice(1));
		});
		expect(broken).toEqual([]);
	},
);

/** Every .ts file of the shipped nodes, as one text (template parts become gaps). */
function shippedText(): string {
	return readdirSync(join(ROOT, 'nodes'), { recursive: true })
		.map(String)
		.filter((f) => f.endsWith('.ts'))
		.map((f) => readFileSync(join(ROOT, 'nodes', f), 'utf8'))
		.join('\n');
}

test('every error a troubleshooting table quotes is one the nodes have', () => {
	const source = shippedText();
	const docs = [
		join(ROOT, 'README.md'),
		...readdirSync(join(ROOT, 'docs')).map((f) => join(ROOT, 'docs', f)),
	].filter((f) => f.endsWith('.md'));
	const quoted: string[] = [];
	for (const file of docs) {
		const text = readFileSync(file, 'utf8');
		for (const section of text.split(/^## /m).filter((s) => /^Troubleshooting/i.test(s)))
			for (const row of section.split('\n').filter((line) => line.startsWith('| ')))
				for (const m of row.split(' | ')[0].matchAll(/\*([^*]{30,})\*/g)) quoted.push(m[1]);
	}
	expect(quoted.length).toBeGreaterThan(5);
	// a quote's parts between its placeholders (…, N, and "an example value") are literal text of the code
	const missing = quoted.filter((quote) =>
		quote
			.split(/…|\bN\b|"[^"]*"/)
			.map((part) => part.trim().replace(/^"|"$/g, ''))
			.filter((part) => part.length >= 12)
			.some((part) => !source.includes(part)),
	);
	expect(missing).toEqual([]);
});

test("docs/triggers.md's static data table names every key the triggers keep, and only those", () => {
	const code = readFileSync(join(ROOT, 'nodes/TaskQueue/trigger/state/staticData.ts'), 'utf8');
	const keys = new Set([...code.matchAll(/\bstate\.(\w+)/g)].map((m) => m[1]));
	const docs = readFileSync(join(ROOT, 'docs/triggers.md'), 'utf8');
	const section = docs.slice(docs.indexOf('## What the triggers keep in static data'));
	const documented = new Set(
		[...section.slice(0, section.indexOf('\n## ')).matchAll(/^\| ([\w, ]+) \|/gm)]
			.flatMap((m) => m[1].split(',').map((key) => key.trim()))
			.filter((key) => key !== 'key'),
	);
	expect([...documented].sort()).toEqual([...keys].sort());
});

/** The project's own files (not node_modules, builds or test output), as paths from the root. */
function projectFiles(): string[] {
	const folders = ['nodes', 'credentials', 'sandbox', 'tools', 'test', 'bench', 'examples', '.ci'];
	const nested = folders
		.filter((folder) => existsSync(join(ROOT, folder)))
		.flatMap((folder) =>
			readdirSync(join(ROOT, folder), { recursive: true }).map((f) => `${folder}/${String(f)}`),
		);
	return [...nested, ...readdirSync(ROOT)].filter((f) => !f.includes('node_modules'));
}

const PROSE = [
	'README.md',
	'CONTRIBUTING.md',
	'sandbox/README.md',
	...readdirSync(join(ROOT, 'docs'))
		.filter((f) => f.endsWith('.md'))
		.map((f) => `docs/${f}`),
];

// Issue 59, "docs match the code": a file or a name the docs cite is one the project has. n8n's own
// files and names, quoted from its code where the docs explain what n8n does, are not the project's.
const N8N_FILES = /^(n8n\/dist\/|community-packages\.service\.js$|webhook\.js$)/;
const N8N_NAMES = new Set([
	'$getWorkflowStaticData',
	'__commitCursor',
	'__runPoll',
	'N8N_POLLER_DURABLE_CURSORS_ENABLED',
	'handleWaitingState',
	'InstanceSettingsLoaderConfig',
	'needsCommunityPackages',
	'checkForMissingPackages',
	'N8N_UNVERIFIED_PACKAGES_ENABLED',
	'N8N_GRACEFUL_SHUTDOWN_TIMEOUT',
]);

test.each(PROSE)('every source file %s names is a file of the project', (doc) => {
	const text = readFileSync(join(ROOT, doc), 'utf8');
	const cited = [...text.matchAll(/`([\w./-]+\.(?:ts|js|cjs|mjs|sh))`/g)].map((m) => m[1]);
	const files = projectFiles();
	const missing = cited.filter(
		(path) => !N8N_FILES.test(path) && !files.some((f) => f === path || f.endsWith(`/${path}`)),
	);
	expect(missing).toEqual([]);
});

test.each(PROSE)(
	'every function, constant or option of the code %s names is one the project has',
	(doc) => {
		const text = readFileSync(join(ROOT, doc), 'utf8');
		// camelCase or CONSTANT_CASE between backticks: a name of code, not a word
		const names = [...text.matchAll(/`([A-Za-z_$][\w$]*)(?:\(\))?`/g)]
			.map((m) => m[1])
			.filter((name) => /[a-z][A-Z]/.test(name) || /^[A-Z][A-Z0-9]*_[A-Z0-9_]+$/.test(name))
			.filter((name) => !N8N_NAMES.has(name));
		const code = projectFiles()
			.filter((f) => /\.(ts|js|cjs|mjs|html|json)$|^\.ci\/run$/.test(f))
			.map((f) => readFileSync(join(ROOT, f), 'utf8'))
			.join('\n');
		const missing = [...new Set(names)].filter((name) => !code.includes(name));
		expect(missing).toEqual([]);
	},
);
