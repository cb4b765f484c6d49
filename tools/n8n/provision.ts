// Provisions a running n8n for the sandbox: a Task Queue credential (public API) and every example
// workflow from examples/*.json, with the credential placeholder replaced. Re-running updates in place.
import { readdirSync, readFileSync } from 'fs';
import { join } from 'path';

import { REPO_ROOT } from './package';
import type { N8nHandle } from './start';

/** Placeholder for the credential id in examples/*.json (n8n re-links by name on a manual import too). */
export const CREDENTIAL_ID_PLACEHOLDER = '__TASK_QUEUE_CREDENTIAL_ID__';
export const CREDENTIAL_NAME = 'Task Queue sandbox';
export const EXAMPLES_DIR = join(REPO_ROOT, 'examples');

export interface CredentialData {
	baseUrl: string;
	apiKey: string;
	organizationId: number;
	apiPaths?: 'queues' | 'workflows';
	allowUnauthorizedCerts?: boolean;
}

export interface WorkflowJson {
	name: string;
	nodes: Array<{
		name: string;
		type: string;
		parameters?: Record<string, unknown>;
		webhookId?: string;
		[k: string]: unknown;
	}>;
	connections: Record<string, unknown>;
	settings?: Record<string, unknown>;
	staticData?: unknown;
	[k: string]: unknown;
}

export interface ProvisionResult {
	credentialId: string;
	workflows: Array<{
		id: string;
		name: string;
		file: string;
		active: boolean;
		activationError?: string;
	}>;
}

function describe(error: unknown): string {
	const e = error as { response?: { status?: number; data?: unknown }; message?: string };
	if (e.response)
		return `HTTP ${e.response.status} ${JSON.stringify(e.response.data).slice(0, 400)}`;
	return e.message ?? String(error);
}

/** Keeps only the fields the installed credential type declares (n8n's public API refuses others). */
async function fitToSchema(
	n8n: N8nHandle,
	data: Record<string, unknown>,
): Promise<Record<string, unknown>> {
	try {
		const res = await n8n.api.get('/credentials/schema/taskQueueApi');
		const props = Object.keys(res.data?.properties ?? {});
		if (props.length === 0) return data;
		const out: Record<string, unknown> = {};
		for (const [key, value] of Object.entries(data)) if (props.includes(key)) out[key] = value;
		// the same switch under its other name
		if (props.includes('ignoreSslIssues') && !('ignoreSslIssues' in out))
			out.ignoreSslIssues = data.allowUnauthorizedCerts ?? false;
		if (props.includes('allowUnauthorizedCerts') && !('allowUnauthorizedCerts' in out))
			out.allowUnauthorizedCerts = data.ignoreSslIssues ?? false;
		// n8n 1.x adds "allowed HTTP request domains" to every credential; its schema needs the choice spelled out
		if (props.includes('allowedHttpRequestDomains') && !('allowedHttpRequestDomains' in out))
			out.allowedHttpRequestDomains = 'all';
		return out;
	} catch {
		return data;
	}
}

/** Creates (or updates, matched by name) the Task Queue credential; returns its id. */
export async function ensureCredential(
	n8n: N8nHandle,
	data: CredentialData,
	name = CREDENTIAL_NAME,
): Promise<string> {
	const full = await fitToSchema(n8n, {
		apiPaths: 'queues',
		allowUnauthorizedCerts: false,
		...data,
	});
	return await ensureNamedCredential(n8n, name, 'taskQueueApi', full);
}

/** Creates (or updates, matched by name and type) a credential; returns its id. */
export async function ensureNamedCredential(
	n8n: N8nHandle,
	name: string,
	type: string,
	data: Record<string, unknown>,
): Promise<string> {
	let existing: string | undefined;
	try {
		const list = await n8n.rest.get('/credentials');
		const found = (list.data?.data ?? []).find(
			(c: { name: string; type: string }) => c.name === name && c.type === type,
		);
		existing = found?.id;
	} catch {
		existing = undefined;
	}
	if (existing) {
		try {
			await n8n.rest.patch(`/credentials/${existing}`, { name, type, data });
			return existing;
		} catch {
			await n8n.api.delete(`/credentials/${existing}`).catch(() => undefined);
		}
	}
	return await createCredential(n8n, name, type, data);
}

/** Public API first; the editor's own call when the public API's schema check refuses what the editor accepts (1.x). */
export async function createCredential(
	n8n: N8nHandle,
	name: string,
	type: string,
	data: Record<string, unknown>,
): Promise<string> {
	try {
		const res = await n8n.api.post('/credentials', { name, type, data });
		return String(res.data.id);
	} catch (error) {
		try {
			const res = await n8n.rest.post('/credentials', { name, type, data });
			return String(res.data.data.id);
		} catch {
			throw new Error(`creating the ${type} credential "${name}" failed: ${describe(error)}`);
		}
	}
}

export function loadExamples(dir = EXAMPLES_DIR): Array<{ file: string; text: string }> {
	return readdirSync(dir)
		.filter((f) => f.endsWith('.json'))
		.sort()
		.map((file) => ({ file, text: readFileSync(join(dir, file), 'utf8') }));
}

/** The example with the placeholder replaced, reduced to what the public API accepts. */
export function prepareWorkflow(
	text: string,
	credentialId: string,
	credentialName = CREDENTIAL_NAME,
	/** An OpenAI credential for the examples' chat model nodes (they ship without one). */
	model?: { id: string; name: string },
): WorkflowJson {
	const wf = JSON.parse(text.split(CREDENTIAL_ID_PLACEHOLDER).join(credentialId)) as WorkflowJson;
	for (const node of wf.nodes) {
		const creds = node.credentials as Record<string, { id: string; name: string }> | undefined;
		if (creds?.taskQueueApi) creds.taskQueueApi = { id: credentialId, name: credentialName };
		if (model && node.type === '@n8n/n8n-nodes-langchain.lmChatOpenAi' && !creds?.openAiApi)
			node.credentials = { ...creds, openAiApi: model };
	}
	return {
		name: wf.name,
		nodes: wf.nodes,
		connections: wf.connections,
		settings: wf.settings ?? { executionOrder: 'v1' },
	};
}

const MANUAL_ONLY = new Set([
	'n8n-nodes-base.manualTrigger',
	'n8n-nodes-base.executeWorkflowTrigger',
]);

/** A workflow can be activated when it has a trigger other than the manual one. */
export function isActivatable(wf: WorkflowJson): boolean {
	return wf.nodes.some(
		(n) =>
			!MANUAL_ONLY.has(n.type) &&
			(/trigger/i.test(n.type) ||
				n.type === 'n8n-nodes-base.webhook' ||
				n.type === 'n8n-nodes-base.scheduleTrigger') &&
			!n.disabled,
	);
}

/** Creates or updates (matched by name) a workflow through the public API; returns its id. */
export async function upsertWorkflow(n8n: N8nHandle, wf: WorkflowJson): Promise<string> {
	let id: string | undefined;
	try {
		const list = await n8n.api.get('/workflows', { params: { name: wf.name, limit: 250 } });
		// an archived one (n8n 2.x) cannot be updated: a new one is made beside it
		id = (list.data?.data ?? []).find(
			(w: { name: string; isArchived?: boolean }) => w.name === wf.name && !w.isArchived,
		)?.id;
	} catch {
		id = undefined;
	}
	try {
		if (id) {
			await n8n.api.post(`/workflows/${id}/deactivate`, {}).catch(() => undefined);
			await n8n.api.put(`/workflows/${id}`, wf);
			return id;
		}
		const res = await n8n.api.post('/workflows', wf);
		return String(res.data.id);
	} catch (error) {
		throw new Error(`importing workflow "${wf.name}" failed: ${describe(error)}`);
	}
}

export async function activateWorkflow(n8n: N8nHandle, id: string): Promise<void> {
	try {
		await n8n.api.post(`/workflows/${id}/activate`, {});
	} catch (error) {
		throw new Error(describe(error));
	}
}

export async function provision(
	n8n: N8nHandle,
	credential: CredentialData,
	options: {
		activate?: boolean;
		log?: (s: string) => void;
		examplesDir?: string;
		model?: { id: string; name: string };
	} = {},
): Promise<ProvisionResult> {
	const log = options.log ?? (() => undefined);
	const credentialId = await ensureCredential(n8n, credential);
	log(`credential "${CREDENTIAL_NAME}" (taskQueueApi) id ${credentialId} -> ${credential.baseUrl}`);
	const workflows: ProvisionResult['workflows'] = [];
	for (const { file, text } of loadExamples(options.examplesDir)) {
		const wf = prepareWorkflow(text, credentialId, CREDENTIAL_NAME, options.model);
		const id = await upsertWorkflow(n8n, wf);
		const entry: ProvisionResult['workflows'][number] = { id, name: wf.name, file, active: false };
		if (options.activate !== false && isActivatable(wf)) {
			try {
				await activateWorkflow(n8n, id);
				entry.active = true;
			} catch (error) {
				const message = (error as Error).message;
				entry.activationError = /Missing required credential: (\w+)/.test(message)
					? `needs your ${/Missing required credential: (\w+)/.exec(message)![1]} credential: add it in the editor, then publish`
					: message;
			}
		}
		workflows.push(entry);
		log(
			`workflow ${id} "${wf.name}" (${file})${entry.active ? ' active' : ''}${entry.activationError ? ` - inactive: ${entry.activationError}` : ''}`,
		);
	}
	return { credentialId, workflows };
}

/** Deletes an archived workflow; n8n 2.x answers 409 while its deactivation is still under way. */
async function deleteArchived(n8n: N8nHandle, id: string): Promise<void> {
	for (let attempt = 1; ; attempt++) {
		try {
			await n8n.rest.delete(`/workflows/${id}`);
			return;
		} catch (error) {
			const status = (error as { response?: { status?: number } }).response?.status;
			if (status !== 409 || attempt >= 60) {
				console.warn(`[n8n] could not delete workflow ${id}: ${describe(error)}; left archived`);
				return;
			}
			await new Promise((resolve) => setTimeout(resolve, 500)); // until its deactivation ends
		}
	}
}

/**
 * Every workflow and credential of n8n deleted, as on a fresh n8n (the test harness's shared n8n,
 * between two files or sessions). Through n8n's REST API, as the editor does: n8n 2.x deletes only an
 * archived workflow (archiving deactivates it); 1.x deletes at once.
 */
export async function clearN8n(n8n: N8nHandle): Promise<void> {
	const tried = new Set<string>();
	for (let round = 0; round < 10; round++) {
		const listed = await n8n.rest.get('/workflows', { params: { includeScopes: false } });
		const ids = ((listed.data?.data ?? []) as Array<{ id: string }>)
			.map((w) => w.id)
			.filter((id) => !tried.has(id));
		if (ids.length === 0) break;
		for (const id of ids) tried.add(id);
		for (const id of ids) {
			await n8n.api.post(`/workflows/${id}/deactivate`, {}).catch(() => undefined);
			await n8n.rest.post(`/workflows/${id}/archive`, {}).catch(() => undefined);
			await deleteArchived(n8n, id);
		}
	}
	const credentials = await n8n.rest.get('/credentials');
	for (const { id } of (credentials.data?.data ?? []) as Array<{ id: string }>)
		await n8n.rest.delete(`/credentials/${id}`).catch(() => undefined);
}
