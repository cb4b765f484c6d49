import type { ICredentialDataDecryptedObject, INode } from 'n8n-workflow';

import { rememberedMap } from '../runtime/processMemory';
import type { TaskQueueContext, TaskQueueCredentials } from './types';
import { CREDENTIAL_TYPE } from './types';

/** What every request of one execution context needs, looked up once. */
export interface RequestSetup {
	node: INode;
	credentials: TaskQueueCredentials;
	/** Handed to n8n's helper so that it does not look up (and decrypt) the credential per request. */
	credentialsDecrypted: {
		id: string;
		name: string;
		type: string;
		data: ICredentialDataDecryptedObject;
	};
}

// One lookup per execution context: n8n would otherwise decrypt the credential, and copy the node
// (`getNode()` returns a deep copy), for every request.
const setupCache = new WeakMap<object, Promise<RequestSetup>>();

/**
 * A webhook call runs outside an execution, where n8n 2.41 builds an expression isolate for each
 * credential lookup (about a third of a waiting run's resume time): webhook calls reuse what one of
 * the last minute looked up. An answer of 401 or 403 drops it, so a changed key is read again.
 */
const WEBHOOK_CREDENTIAL_TTL_MS = 60_000;
const webhookCredentials = rememberedMap<
	string,
	{ data: ICredentialDataDecryptedObject; at: number }
>('webhookCredentials');

async function credentialData(
	this: TaskQueueContext,
	node: INode,
): Promise<ICredentialDataDecryptedObject> {
	const id = node.credentials?.[CREDENTIAL_TYPE]?.id ?? '';
	if (!id || !('getBodyData' in this)) return await this.getCredentials(CREDENTIAL_TYPE);
	const cached = webhookCredentials.get(id);
	if (cached && Date.now() - cached.at < WEBHOOK_CREDENTIAL_TTL_MS) return cached.data;
	const data = await this.getCredentials(CREDENTIAL_TYPE);
	webhookCredentials.set(id, { data, at: Date.now() });
	return data;
}

async function lookUp(this: TaskQueueContext): Promise<RequestSetup> {
	const node = this.getNode();
	const data = await credentialData.call(this, node);
	return {
		node,
		credentials: normalizeCredentials(data),
		credentialsDecrypted: {
			id: node.credentials?.[CREDENTIAL_TYPE]?.id ?? '',
			name: node.credentials?.[CREDENTIAL_TYPE]?.name ?? '',
			type: CREDENTIAL_TYPE,
			data,
		},
	};
}

export async function requestSetup(this: TaskQueueContext): Promise<RequestSetup> {
	let cached = setupCache.get(this);
	if (!cached) {
		cached = lookUp.call(this);
		setupCache.set(this, cached);
		cached.catch(() => setupCache.delete(this));
	}
	return await cached;
}

export function normalizeCredentials(data: ICredentialDataDecryptedObject): TaskQueueCredentials {
	return {
		baseUrl: String(data.baseUrl ?? '').replace(/\/+$/, ''),
		apiKey: String(data.apiKey ?? ''),
		previousApiKey: String(data.previousApiKey ?? '').trim(),
		organizationId: Number(data.organizationId),
		apiPaths: data.apiPaths === 'workflows' ? 'workflows' : 'queues',
		ignoreSslIssues: data.ignoreSslIssues === true,
	};
}

export async function getTaskQueueCredentials(
	this: TaskQueueContext,
): Promise<TaskQueueCredentials> {
	return (await requestSetup.call(this)).credentials;
}

/**
 * The keys what this package signed is checked against: the credential's key, and while it changes
 * the previous one (runs, records and secrets signed before the change still count). New values are
 * always signed with the current key.
 */
export async function verificationKeys(this: TaskQueueContext): Promise<string[]> {
	return keysOf(await getTaskQueueCredentials.call(this));
}

const keysOf = ({ apiKey, previousApiKey }: TaskQueueCredentials) =>
	[apiKey, previousApiKey].filter((key) => key !== '');

/** A webhook call reads the credential afresh to check a signature at most this often. */
const FRESH_LOOKUP_GAP_MS = 5_000;

/**
 * Whether what a message carries was signed with the credential's key (or the previous one). A
 * webhook call may hold the credential as it was up to a minute ago (`webhookCredentials`), and a
 * run started since the key changed signs with the new one: on a mismatch the credential is read
 * again, at most once every 5 s (a forged message cannot make n8n read it more often).
 */
export async function isSignedByCredential(
	this: TaskQueueContext,
	signed: (keys: string[]) => boolean,
): Promise<boolean> {
	if (signed(await verificationKeys.call(this))) return true;
	const id = this.getNode().credentials?.[CREDENTIAL_TYPE]?.id ?? '';
	const cached = webhookCredentials.get(id);
	if (!cached || Date.now() - cached.at < FRESH_LOOKUP_GAP_MS) return false;
	const data = await this.getCredentials(CREDENTIAL_TYPE);
	webhookCredentials.set(id, { data, at: Date.now() });
	return signed(keysOf(normalizeCredentials(data)));
}

/** A key the service refused (401, 403): the context's next request and the next webhook call look the credential up again. */
export function forgetCredential(context: TaskQueueContext, id: string): void {
	setupCache.delete(context);
	webhookCredentials.delete(id);
}
