// The node reads `{{ $json.… }}` field references itself (nodes/TaskQueue/helpers/fieldMapping.ts).
// This check compares it with an n8n expression engine on generated items and references:
// wherever the node reads a value, it must be the value n8n returns; wherever n8n returns a plain
// value through plain objects and array indexes, the node must read it (else it saves nothing).
//
// In jest (test/nodes/TaskQueue/helpers/fieldMapping.test.ts) it runs with the legacy engine. The
// end-to-end suite runs this file under n8n's node 24 with n8n's own n8n-workflow and its default
// `vm` engine (isolated-vm), which jest cannot start:
//   <node 24> node_modules/tsx/dist/cli.mjs test/helpers/fieldMappingCheck.ts \
//     --workflow <n8n>/node_modules/n8n-workflow --engine vm [--runs 2000] [--seed 1]
import fc from 'fast-check';
import type { IDataObject, INodeExecutionData, INodeTypes } from 'n8n-workflow';

import {
	compileFieldMapping,
	jsonReferencePath,
	readMappedFields,
} from '../../nodes/TaskQueue/helpers/fieldMapping';

type N8nWorkflowModule = typeof import('n8n-workflow');

export interface CheckReport {
	engine: string;
	cases: number;
	/** References the node read itself (each equal to n8n's value, or it is a mismatch). */
	readByNode: number;
	/** References n8n's engine refused or resolved to something not plain: left to n8n. */
	leftToN8n: number;
	mismatches: string[];
}

const KEYS = [
	'a',
	'b',
	'total',
	'$x',
	'_y',
	'key with space',
	'a-b',
	'0',
	'12',
	'ünï',
	"it's",
	'say "hi"',
	'length',
];

const primitive = fc.oneof(
	fc.string(),
	fc.integer(),
	fc.double(),
	fc.boolean(),
	fc.constant(null),
	fc.constantFrom('', '={{ 1 + 1 }}', '{{ $json.a }}', '2021-06-01', '42', '<b>x</b>'),
);
const value = fc.letrec((tie) => ({
	value: fc.oneof(
		{ depthSize: 'small', withCrossShrink: true },
		{ arbitrary: primitive, weight: 3 },
		{ arbitrary: tie('object'), weight: 1 },
		{ arbitrary: tie('array'), weight: 1 },
	),
	object: fc.dictionary(fc.constantFrom(...KEYS), tie('value'), { maxKeys: 5 }),
	array: fc.array(tie('value'), { maxLength: 4 }),
})).value;
const item = fc.dictionary(fc.constantFrom(...KEYS), value, { minKeys: 1, maxKeys: 6 });

/** A path that exists in the item, then (sometimes) one step that may not. */
function pathInto(json: IDataObject, steps: number[], extra: string | undefined): string[] {
	const path: string[] = [];
	let current: unknown = json;
	for (const step of steps) {
		if (current === null || typeof current !== 'object') break;
		const keys = Object.keys(current);
		if (keys.length === 0) break;
		const key = keys[step % keys.length];
		path.push(key);
		current = (current as Record<string, unknown>)[key];
	}
	if (extra !== undefined || path.length === 0) path.push(extra ?? 'a');
	return path;
}

/** As the editor writes it: `.name` where it can, else `['name']` or `["name"]`, `[0]` for indexes. */
function render(path: string[], brackets: boolean[]): string | undefined {
	let out = '';
	for (const [i, key] of path.entries()) {
		if (/^\d+$/.test(key)) out += `[${key}]`;
		else if (/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) && !brackets[i]) out += `.${key}`;
		else if (!key.includes("'")) out += `['${key}']`;
		else if (!key.includes('"')) out += `["${key}"]`;
		else return undefined;
	}
	return out;
}

function isPlain(v: unknown): boolean {
	return (
		v === null ||
		typeof v === 'string' ||
		typeof v === 'boolean' ||
		(typeof v === 'number' && Number.isFinite(v))
	);
}

function throughPlainContainers(root: IDataObject, path: string[]): boolean {
	let current: unknown = root;
	for (const key of path) {
		if (current === null || typeof current !== 'object') return false;
		if (Array.isArray(current) && !/^\d+$/.test(key)) return false;
		if (!Object.prototype.hasOwnProperty.call(current, key)) return false;
		current = (current as Record<string, unknown>)[key];
	}
	return true;
}

const nodeTypes: INodeTypes = {
	getByName: () => ({ description: { properties: [] } }) as never,
	getByNameAndVersion: () => ({ description: { properties: [] } }) as never,
	getKnownTypes: () => ({}),
};

/** Runs the comparison with whatever engine the given n8n-workflow module has active. */
export async function checkFieldReferences(
	n8nWorkflow: N8nWorkflowModule,
	options: { runs: number; seed: number },
): Promise<CheckReport> {
	const workflow = new n8nWorkflow.Workflow({
		id: 'wf',
		nodes: [
			{ id: 'n', name: 'Task Queue', type: 't', typeVersion: 1, position: [0, 0], parameters: {} },
		],
		connections: {},
		active: false,
		nodeTypes,
	});
	const report: CheckReport = {
		engine: n8nWorkflow.Expression.getActiveImplementation(),
		cases: 0,
		readByNode: 0,
		leftToN8n: 0,
		mismatches: [],
	};
	const evaluate = (expression: string, json: IDataObject): { value?: unknown; threw?: true } => {
		const input: INodeExecutionData[] = [{ json }];
		try {
			return {
				value: workflow.expression.getParameterValue(
					expression,
					null,
					0,
					0,
					'Task Queue',
					input,
					'manual',
					{},
				),
			};
		} catch {
			return { threw: true };
		}
	};
	const acquired = await workflow.expression.acquireIsolate();
	try {
		fc.assert(
			fc.property(
				item,
				fc.array(fc.nat(), { minLength: 1, maxLength: 5 }),
				fc.oneof(
					{ arbitrary: fc.constant(undefined), weight: 3 },
					{ arbitrary: fc.constantFrom(...KEYS), weight: 1 },
				),
				fc.array(fc.boolean(), { minLength: 6, maxLength: 6 }),
				(generated, steps, extra, brackets) => {
					const json = generated as IDataObject;
					const rendered = render(pathInto(json, steps, extra), brackets);
					if (rendered === undefined) return;
					const expression = `={{ $json${rendered} }}`;
					const mapping = compileFieldMapping({ field: expression });
					if (!mapping) return; // a name n8n guards (constructor, __proto__, ...)
					report.cases++;
					const mine = readMappedFields(mapping, json);
					const theirs = evaluate(expression, json);
					const show = () => `${expression} on ${JSON.stringify(json)}`;
					if (mine !== undefined) {
						report.readByNode++;
						if (theirs.threw)
							report.mismatches.push(
								`${show()}: node read ${JSON.stringify(mine.field)}, n8n threw`,
							);
						else if (!Object.is(mine.field, theirs.value))
							report.mismatches.push(
								`${show()}: node read ${JSON.stringify(mine.field)}, n8n ${JSON.stringify(theirs.value)}`,
							);
					} else if (
						!theirs.threw &&
						isPlain(theirs.value) &&
						throughPlainContainers(json, jsonReferencePath(expression)!)
					) {
						report.mismatches.push(
							`${show()}: n8n gives ${JSON.stringify(theirs.value)}, the node left it to n8n`,
						);
					} else {
						report.leftToN8n++;
					}
				},
			),
			{ seed: options.seed, numRuns: options.runs },
		);
	} finally {
		if (acquired) await workflow.expression.releaseIsolate();
	}
	return report;
}

async function main(): Promise<void> {
	const arg = (name: string, fallback: string) => {
		const i = process.argv.indexOf(`--${name}`);
		return i === -1 ? fallback : process.argv[i + 1];
	};
	const engine = arg('engine', 'vm') as 'vm' | 'legacy';
	const n8nWorkflow = require(arg('workflow', 'n8n-workflow')) as N8nWorkflowModule;
	if (engine !== 'legacy') {
		await n8nWorkflow.Expression.initExpressionEngine({
			engine,
			bridgeTimeout: 5000,
			bridgeMemoryLimit: 128,
			poolSize: 1,
			maxCodeCacheSize: 1024,
		} as Parameters<N8nWorkflowModule['Expression']['initExpressionEngine']>[0]);
	}
	const report = await checkFieldReferences(n8nWorkflow, {
		runs: Number(arg('runs', '2000')),
		seed: Number(arg('seed', '20261123')),
	});
	await n8nWorkflow.Expression.disposeExpressionEngine();
	console.log(JSON.stringify(report));
	process.exit(report.mismatches.length === 0 && report.engine === engine ? 0 : 1);
}

if (require.main === module) void main();
