// The field mapping's own reading of `{{ $json.… }}`: which expressions it takes, and that the
// values it reads are n8n's. Here against n8n's legacy engine; the end-to-end suite runs the same
// check (test/helpers/fieldMappingCheck.ts) with n8n 2.x's default `vm` engine on node 24.
import type { IDataObject } from 'n8n-workflow';
import * as n8nWorkflow from 'n8n-workflow';

import {
	compileFieldMapping,
	jsonReferencePath,
	readMappedFields,
} from '../../../../nodes/TaskQueue/helpers/fieldMapping';
import { checkFieldReferences } from '../../../helpers/fieldMappingCheck';

const SEED = 20261123;

describe('jsonReferencePath: which expressions are plain references to the item', () => {
	test.each([
		['={{ $json.customer_message }}', ['customer_message']],
		['={{$json.a}}', ['a']],
		['={{ $json.order.total }}', ['order', 'total']],
		['={{ $json["key with space"] }}', ['key with space']],
		["={{ $json['a-b'].c[0] }}", ['a-b', 'c', '0']],
		['={{ $json[ "x" ][ 12 ] }}', ['x', '12']],
		['={{ $json.$id_2 }}', ['$id_2']],
	])('%s reads %j', (expression, path) => {
		expect(jsonReferencePath(expression)).toEqual(path);
	});

	test.each([
		'={{ $json }}',
		'={{ $json.a.toUpperCase() }}',
		'={{ $json.a + 1 }}',
		'={{ $json.a }} ',
		'=x {{ $json.a }}',
		'={{ $json.a }}{{ $json.b }}',
		"={{ $('Webhook').item.json.a }}",
		'={{ $input.item.json.a }}',
		'={{ $json.constructor }}',
		"={{ $json['constructor'] }}",
		"={{ $json['__proto__'].a }}",
		'={{ $json.a.prototype }}',
		'={{ $json["a\\"b"] }}',
		'={{ $json.a[b] }}',
		'={{ $json.1a }}',
		'={{ $json.a?.b }}',
		'{{ $json.a }}',
	])('%s is left to n8n', (expression) => {
		expect(jsonReferencePath(expression)).toBeUndefined();
	});
});

describe('compileFieldMapping / readMappedFields', () => {
	test('references and plain values are read from the item; a value that is not plain falls back', () => {
		const mapping = compileFieldMapping({
			message: '={{ $json.body.message }}',
			total: '={{ $json.body["total"] }}',
			urgent: '={{ $json.flags[1] }}',
			note: null,
			receipt: 'https://example.com/r.png',
			count: 3,
			verbatim: '{{ $json.body.message }}',
		});
		expect(mapping).toBeDefined();
		const item = { body: { message: 'Broken', total: 19.5 }, flags: [false, true] };
		expect(readMappedFields(mapping!, item)).toEqual({
			message: 'Broken',
			total: 19.5,
			urgent: true,
			note: null,
			receipt: 'https://example.com/r.png',
			count: 3,
			verbatim: '{{ $json.body.message }}',
		});
		for (const stray of [
			{ body: { message: { nested: 1 }, total: 1 }, flags: [1, 2] },
			{ body: { total: 1 }, flags: [1, 2] },
			{ body: { message: 'm', total: Number.NaN }, flags: [1, 2] },
			{ body: { message: 'm', total: 1 }, flags: 'ab' },
			{
				body: Object.assign(Object.create({ message: 'inherited' }) as IDataObject, { total: 1 }),
				flags: [1, 2],
			},
			{ body: { message: 'm', total: new Date(0) }, flags: [1, 2] },
		]) {
			expect(readMappedFields(mapping!, stray as IDataObject)).toBeUndefined();
		}
	});

	test('a mapping with any other expression, or a value that is an object, is left to n8n whole', () => {
		expect(
			compileFieldMapping({ a: '={{ $json.a }}', b: '={{ $json.b.trim() }}' }),
		).toBeUndefined();
		expect(compileFieldMapping({ a: '={{ $json.a }}', b: ['x'] })).toBeUndefined();
		expect(compileFieldMapping({ a: '={{ $json.a }}', b: { c: 1 } })).toBeUndefined();
		expect(compileFieldMapping([])).toBeUndefined();
		expect(compileFieldMapping(null)).toEqual([]);
		expect(compileFieldMapping(undefined)).toEqual([]);
	});
});

// ---- the same values as n8n's engine ----------------------------------------------------------

test("every value the node reads itself is the value n8n's legacy engine returns, and every plain reference is read", async () => {
	const report = await checkFieldReferences(n8nWorkflow, { runs: 1500, seed: SEED });
	expect(report.engine).toBe('legacy');
	expect(report.mismatches).toEqual([]);
	expect(report.readByNode).toBeGreaterThan(report.cases / 3);
	expect(report.leftToN8n).toBeGreaterThan(0);
});
