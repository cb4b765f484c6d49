// Experiment: does what the Task Queue Trigger writes to its static data inside webhook() reach
// n8n's database? Starts a real n8n (TQ_N8N_VERSION=1|2) with a probe preloaded (`--require`) that
// logs (1) every `ObservableObject.create()` over static data whose `__dataChanged` flag was true
// (n8n-workflow resets the flag there) with the caller's stack, (2) every `saveStaticData` call
// with the flag it sees and what it writes. Then one delivery to an activated trigger, and the
// workflow's static data read through the public API before and after it. Secrets are masked.
//   npx tsx tools/n8n/static-data-probe.ts        (TQ_E2E_SKIP_BUILD=1 packs the current dist/)
import { mkdtempSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';

import { SandboxClient } from '../../sandbox/client';
import { startSandbox } from '../../sandbox/index';
import {
	activate,
	createWorkflow,
	executions,
	queueLocator,
	sleep,
	triggerWorkflow,
	TYPES,
	waitFor,
	webhookTarget,
	type E2E,
} from '../../test/e2e/helpers';
import { installationFor, majorFromEnv } from './install';
import { buildAndPack, extractInto } from './package';
import { ensureCredential } from './provision';
import { startN8n } from './start';

const PROBE = `
const path = require('path');
const nm = process.env.TQ_PROBE_NODE_MODULES;
const oo = require(path.join(nm, 'n8n-workflow/dist/cjs/observable-object.js'));
const create = oo.create;
oo.create = function (target, parent, option, depth) {
	if (parent === undefined && target && target.__dataChanged === true) {
		const stack = new Error().stack.split('\\n').slice(2, 7).map((l) => l.trim().replace(/ \\(.*\\)$/, '')).join(' <- ');
		console.log('[probe] static data flag __dataChanged reset from true to false: ' + stack);
	}
	return create.call(this, target, parent, option, depth);
};
setTimeout(() => {
	const svc = require(path.join(nm, 'n8n/dist/workflows/workflow-static-data.service.js')).WorkflowStaticDataService;
	const save = svc.prototype.saveStaticData;
	svc.prototype.saveStaticData = async function (workflow) {
		console.log('[probe] saveStaticData (webhook answer) sees __dataChanged=' + workflow.staticData.__dataChanged);
		return await save.call(this, workflow);
	};
	const byId = svc.prototype.saveStaticDataById;
	svc.prototype.saveStaticDataById = async function (id, data) {
		console.log('[probe] saveStaticDataById writes keys ' + JSON.stringify(Object.keys(data['node:Trigger'] || {})));
		return await byId.call(this, id, data);
	};
}, 3000).unref();
`;

const mask = (text: string) => text.replace(/secret([^0-9a-f]{1,4})[0-9a-f]{16,}/g, 'secret$1…');

async function main() {
	const major = majorFromEnv(process.env.TQ_N8N_VERSION);
	const work = mkdtempSync(join(tmpdir(), 'tq-static-data-probe-'));
	const probe = join(work, 'probe.cjs');
	writeFileSync(probe, PROBE);
	const sandbox = await startSandbox({ port: 0 });
	const client = new SandboxClient(sandbox.baseUrl, sandbox.adminSecret);
	const userFolder = join(work, 'n8n');
	await extractInto(await buildAndPack({ skipBuild: !!process.env.TQ_E2E_SKIP_BUILD }), userFolder);
	const n8n = await startN8n({
		port: 0,
		brokerPort: 0,
		userFolder,
		version: major,
		env: {
			NODE_OPTIONS: `--require ${probe}`,
			TQ_PROBE_NODE_MODULES: join(installationFor(major).dir, 'node_modules'),
		},
	});
	try {
		const credentialId = await ensureCredential(n8n, {
			baseUrl: sandbox.baseUrl,
			apiKey: sandbox.apiKey,
			organizationId: sandbox.organizationId,
			apiPaths: 'queues',
			allowUnauthorizedCerts: false,
		});
		const e = { n8n, sandbox, client, credentialId } as unknown as E2E;
		const stored = async (id: string) =>
			mask(
				JSON.stringify(
					(await n8n.api.get(`/workflows/${id}`)).data.staticData?.['node:Trigger'] ?? null,
				),
			);
		await client.reset();
		await client.createTasks(101, 2);
		const webhookId = `probe-${Date.now()}`;
		const wf = await createWorkflow(
			e,
			triggerWorkflow(e, `static data probe ${webhookId}`, {
				type: TYPES.trigger,
				webhookId,
				parameters: {
					event: 'taskCompleted',
					queue: queueLocator(101),
					options: { catchUp: true, replaceExistingWebhook: true },
				},
			}),
		);
		await activate(e, wf);
		await waitFor('the registration', async () =>
			(await webhookTarget(e, 101)).includes(webhookId),
		);
		await sleep(1000);
		console.log(`n8n ${n8n.version}`);
		console.log(`stored after activation:  ${await stored(wf)}`);
		const mark = n8n.logs.mark();
		await client.complete(101, undefined, { by: 'alice@example.com' });
		await waitFor('the execution', async () =>
			(await executions(e, wf)).length === 1 ? true : undefined,
		);
		await sleep(1500);
		console.log(`stored after 1 delivery:  ${await stored(wf)}`);
		const calls = await client.webhookCalls();
		console.log(`the service's delivery got HTTP ${calls.map((c) => c.status).join(', ')}`);
		console.log(
			mask(
				n8n.logs
					.since(mark)
					.split('\n')
					.filter((l) => l.includes('[probe]'))
					.join('\n'),
			),
		);
	} finally {
		await n8n.stop();
		client.close();
		await sandbox.close();
		rmSync(work, { recursive: true, force: true });
	}
}

main().then(
	() => process.exit(0),
	(error: Error) => {
		console.error(error);
		process.exit(1);
	},
);
