// The shape of the shipped code, guarded so the next feature lands in it: functions of at most 60
// lines and files of at most 250 in nodes/, except those named below. The allowance may only
// shrink: a name that is no longer over its limit must leave it (the test says so), and none may
// join it. The trigger's folder has none. And the node and the sandbox know the same block kinds.
import { readdirSync, readFileSync } from 'fs';
import { join, relative } from 'path';
import * as ts from 'typescript';

import { STRING_KINDS, URL_KINDS } from '../../../nodes/TaskQueue/helpers/blockModel';
import { STRING_BLOCKS, URL_BLOCKS } from '../../../sandbox/validate';

const ROOT = join(__dirname, '../../..');
const MAX_FUNCTION_LINES = 60;
const MAX_FILE_LINES = 250;

/** Files over MAX_FILE_LINES today; may only shrink. */
const FILES_ALLOWED: string[] = [];
/** Functions over MAX_FUNCTION_LINES today (file: name); may only shrink, never above 6. */
const FUNCTIONS_ALLOWED: string[] = [];

function sources(dir: string): string[] {
	return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
		entry.isDirectory()
			? sources(join(dir, entry.name))
			: entry.name.endsWith('.ts')
				? [join(dir, entry.name)]
				: [],
	);
}

function nameOf(node: ts.Node): string {
	const named = (node as { name?: ts.Node }).name;
	if (named) return named.getText();
	const parent = node.parent;
	if (parent && (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)))
		return parent.name.getText();
	return '(anonymous)';
}

/** Every function, method and arrow of the file with more lines than allowed. */
function longFunctions(file: string, text: string): string[] {
	const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
	const found: string[] = [];
	const visit = (node: ts.Node) => {
		if (
			ts.isFunctionDeclaration(node) ||
			ts.isMethodDeclaration(node) ||
			ts.isArrowFunction(node) ||
			ts.isFunctionExpression(node)
		) {
			const first = source.getLineAndCharacterOfPosition(node.getStart()).line;
			const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
			if (last - first + 1 > MAX_FUNCTION_LINES)
				found.push(`${relative(ROOT, file)}: ${nameOf(node)}`);
		}
		ts.forEachChild(node, visit);
	};
	visit(source);
	return found;
}

const files = sources(join(ROOT, 'nodes')).map((file) => ({
	file,
	text: readFileSync(file, 'utf8'),
}));

test(`files of nodes/ have at most ${MAX_FILE_LINES} lines, but those allowed; none in trigger/`, () => {
	const long = files
		.filter(({ text }) => text.replace(/\n$/, '').split('\n').length > MAX_FILE_LINES)
		.map(({ file }) => relative(ROOT, file))
		.sort();
	expect(long).toEqual([...FILES_ALLOWED].sort());
	expect(FILES_ALLOWED.filter((file) => file.includes('/trigger/'))).toEqual([]);
});

test(`functions of nodes/ have at most ${MAX_FUNCTION_LINES} lines, but at most 6 allowed; none in trigger/`, () => {
	const long = files.flatMap(({ file, text }) => longFunctions(file, text)).sort();
	expect(long).toEqual([...FUNCTIONS_ALLOWED].sort());
	expect(FUNCTIONS_ALLOWED.length).toBeLessThanOrEqual(6);
	expect(FUNCTIONS_ALLOWED.filter((name) => name.includes('/trigger/'))).toEqual([]);
});

test('the node and the sandbox know the same block kinds', () => {
	const sandboxKinds = [
		...readFileSync(join(ROOT, 'sandbox/types.ts'), 'utf8')
			.split('export type BlockType =')[1]
			.split(';')[0]
			.matchAll(/'([a-z_]+)'/g),
	].map((m) => m[1]);
	const taskData = readFileSync(join(ROOT, 'nodes/TaskQueue/helpers/taskData.ts'), 'utf8');
	const nodeKinds = new Set([
		...STRING_KINDS,
		...URL_KINDS,
		...[...taskData.matchAll(/case '([a-z_]+)'/g)].map((m) => m[1]),
	]);
	expect([...nodeKinds].sort()).toEqual([...new Set(sandboxKinds)].sort());
	expect([...STRING_KINDS].sort()).toEqual([...STRING_BLOCKS].sort());
	expect([...URL_KINDS].sort()).toEqual([...URL_BLOCKS].sort());
});
