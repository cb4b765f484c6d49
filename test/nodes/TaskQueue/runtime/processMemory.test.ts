import { readdirSync, readFileSync } from 'fs';
import { join, relative } from 'path';

import { BoundedMap, BoundedSet } from '../../../../nodes/TaskQueue/runtime/bounded';
import { PROCESS_MEMORY } from '../../../../nodes/TaskQueue/runtime/processMemory';

const NODES = join(__dirname, '../../../../nodes');
const sources = (dir: string): string[] =>
	readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
		entry.isDirectory()
			? sources(join(dir, entry.name))
			: entry.name.endsWith('.ts')
				? [join(dir, entry.name)]
				: [],
	);

describe('what a process remembers', () => {
	it('a bounded map keeps its newest writes, the oldest go first', () => {
		const map = new BoundedMap<string, number>(2);
		map.set('a', 1).set('b', 2).set('a', 3).set('c', 4);
		expect([...map]).toEqual([
			['a', 3],
			['c', 4],
		]);
	});

	it('a bounded set keeps its newest adds, the oldest go first', () => {
		const set = new BoundedSet<string>(2);
		set.add('a').add('b').add('a').add('c');
		expect([...set]).toEqual(['a', 'c']);
	});

	it('every module-level store of the shipped code is made from the list (in-call lanes, constant sets and per-context WeakMaps aside)', () => {
		const unlisted: string[] = [];
		const used = new Set<string>();
		for (const file of sources(NODES)) {
			const text = readFileSync(file, 'utf8');
			for (const match of text.matchAll(
				/^(?:export )?const (\w+) = new (?:Map|Set)(?:<.*>)?\(\);/gm,
			))
				unlisted.push(`${relative(NODES, file)}: ${match[1]}`);
			for (const match of text.matchAll(/remembered(?:Map|Set)<[^(]*>\(\s*'(\w+)'/g))
				used.add(match[1]);
		}
		expect(unlisted).toEqual(['TaskQueue/trigger/relay/lanes.ts: lanes']);
		expect([...used].sort()).toEqual(Object.keys(PROCESS_MEMORY).sort());
	});

	it('docs/operating.md lists every store with the bound the code gives it, and what it holds and a restart costs', () => {
		const docs = readFileSync(join(__dirname, '../../../../docs/operating.md'), 'utf8');
		const section = docs.slice(docs.indexOf('## What one n8n process remembers'));
		const rows = [...section.matchAll(/^\| `(\w+)` \| ([\d,]+) \|(.*)\|$/gm)].map(
			([, name, bound, rest]) => ({
				name,
				bound: Number(bound.replace(/,/g, '')),
				cells: rest.split(' | ').map((cell) => cell.trim()),
			}),
		);
		expect(Object.fromEntries(rows.map((r) => [r.name, r.bound]))).toEqual(PROCESS_MEMORY);
		// in which process, worst-case size, what it holds, what a restart costs: each said
		for (const row of rows) expect(row.cells.filter((cell) => cell.length > 0)).toHaveLength(4);
	});
});
