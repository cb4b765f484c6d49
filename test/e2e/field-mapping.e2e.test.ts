// The Task Queue node reads dragged field references (`{{ $json.… }}`) itself instead of asking
// n8n's expression engine (nodes/TaskQueue/helpers/fieldMapping.ts). Jest compares it with n8n's
// legacy engine; this compares it with the engine n8n 2.x runs by default, `vm` (isolated-vm), in
// n8n's own installation: n8n's node and n8n's n8n-workflow, on generated items and references.
import { execFile } from 'child_process';
import { join } from 'path';
import { promisify } from 'util';

import { installationFor, majorFromEnv } from '../../tools/n8n/install';
import type { CheckReport } from '../helpers/fieldMappingCheck';

const root = join(__dirname, '..', '..');

test("every value the node reads itself is the one n8n's own expression engine returns", async () => {
	const inst = installationFor(majorFromEnv());
	const n8nWorkflow = join(inst.dir, 'node_modules', 'n8n-workflow');
	// the default engine of both lines (1.x here with isolated-vm 5 built for node 20, tools/n8n)
	const engine = 'vm';
	const { stdout } = await promisify(execFile)(
		inst.nodeBinary,
		[
			// tsx as a loader, not its CLI: the CLI's signal relay ended the check with a failure code
			// under load after it had printed its report (CI35; the sandbox's CLI likewise, stop 69)
			'--import',
			'tsx',
			join(root, 'test', 'helpers', 'fieldMappingCheck.ts'),
			'--workflow',
			n8nWorkflow,
			'--engine',
			engine,
			'--runs',
			'3000',
		],
		{
			cwd: root,
			env: { ...process.env, N8N_USER_FOLDER: process.env.N8N_USER_FOLDER ?? join(root, '.tmp') },
		},
	).catch((error: { code?: unknown; signal?: unknown; stdout?: string; stderr?: string }) => {
		const how = `exit ${String(error.code)}, signal ${String(error.signal)}`;
		throw new Error(`the check failed (${how}): ${error.stdout ?? ''}${error.stderr ?? ''}`);
	});
	const report = JSON.parse(stdout.trim().split('\n').pop()!) as CheckReport;
	expect(report.engine).toBe(engine);
	expect(report.mismatches).toEqual([]);
	expect(report.cases).toBe(3000);
	expect(report.readByNode).toBeGreaterThan(1000);
	expect(report.leftToN8n).toBeGreaterThan(100);
});
