// The house drawn from the imports of the shipped code: no cycle between files, none between folders.
import { existsSync, readdirSync, readFileSync } from 'fs';
import { dirname, join, relative, resolve } from 'path';

const ROOT = resolve(__dirname, '../../..');
const sources = (dir: string): string[] =>
	readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
		entry.isDirectory()
			? sources(join(dir, entry.name))
			: entry.name.endsWith('.ts')
				? [join(dir, entry.name)]
				: [],
	);

function importsOf(file: string): string[] {
	const text = readFileSync(file, 'utf8');
	return [...text.matchAll(/from '(\.[^']+)'/g)]
		.map((match) => resolve(dirname(file), match[1]))
		.flatMap((target) => [`${target}.ts`, join(target, 'index.ts')].filter(existsSync).slice(0, 1));
}

/** The cycles of a graph (Tarjan's strongly connected components of more than one node). */
function cycles(graph: Map<string, Set<string>>): string[][] {
	const index = new Map<string, number>();
	const low = new Map<string, number>();
	const stack: string[] = [];
	const found: string[][] = [];
	const visit = (v: string) => {
		index.set(v, index.size);
		low.set(v, index.get(v)!);
		stack.push(v);
		for (const w of graph.get(v) ?? []) {
			if (!index.has(w)) {
				visit(w);
				low.set(v, Math.min(low.get(v)!, low.get(w)!));
			} else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
		}
		if (low.get(v) === index.get(v)) {
			const component: string[] = [];
			let w: string;
			do {
				w = stack.pop()!;
				component.push(w);
			} while (w !== v);
			if (component.length > 1) found.push(component.sort());
		}
	};
	for (const v of graph.keys()) if (!index.has(v)) visit(v);
	return found;
}

const files = [...sources(join(ROOT, 'nodes')), ...sources(join(ROOT, 'credentials'))];
const fileGraph = new Map(
	files.map((file) => [
		relative(ROOT, file),
		new Set(importsOf(file).map((t) => relative(ROOT, t))),
	]),
);

it('no two files of nodes/ and credentials/ import each other, directly or around a loop', () => {
	expect(cycles(fileGraph)).toEqual([]);
});

it('imports between the folders of nodes/TaskQueue run one way', () => {
	const folderOf = (file: string) => dirname(file).split('/').slice(0, 3).join('/');
	const folders = new Map<string, Set<string>>();
	for (const [file, targets] of fileGraph) {
		for (const target of targets) {
			if (folderOf(file) === folderOf(target)) continue;
			if (!folders.has(folderOf(file))) folders.set(folderOf(file), new Set());
			folders.get(folderOf(file))!.add(folderOf(target));
		}
	}
	expect(cycles(folders)).toEqual([]);
	expect(folders.get('nodes/TaskQueue/waiting')?.has('nodes/TaskQueue/trigger')).toBeFalsy();
});
