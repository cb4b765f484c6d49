import { randomBytes } from 'crypto';
import type { INode } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { MAX_TARGET_LENGTH } from '../transport/endpoints';
import { type Keys, sign, verify } from './signing';

// A queue's webhook target as a Task Queue Trigger registers it: the trigger's production address
// (ending in WEBHOOK_PATH) with a random secret in its query, within the service's 255 characters.
// The Webhook operations and Create and Wait's route-back check read targets in this format too.

export const WEBHOOK_PATH = 'task-completed';
const SECRET_PARAM = 'secret';

/** `origin + path` of a URL, the part compared between a live target and this node's URL. */
export function withoutQuery(url: string): string {
	try {
		const parsed = new URL(url);
		return `${parsed.origin}${parsed.pathname.replace(/\/+$/, '')}`;
	} catch {
		return url.split('?')[0].replace(/\/+$/, '');
	}
}

export function secretOf(url: string): string | undefined {
	try {
		return new URL(url).searchParams.get(SECRET_PARAM) ?? undefined;
	} catch {
		return undefined;
	}
}

/**
 * - `none`: the queue has no webhook;
 * - `mine`: this node's URL in this mode (production or test);
 * - `ours`: this node's other URL (its production URL seen from a test, its test URL or an old
 *   base URL seen from production), recognised by the node's unique webhook id in the path;
 * - `foreign`: anything else (set by a person, another workflow or another tool).
 */
export type TargetKind = 'none' | 'mine' | 'ours' | 'foreign';

export function classifyTarget(
	target: string | null | undefined,
	myUrl: string,
	webhookId?: string,
): TargetKind {
	if (!target) return 'none';
	const live = withoutQuery(target);
	if (live === withoutQuery(myUrl)) return 'mine';
	if (webhookId && live.endsWith(`/${webhookId}/${WEBHOOK_PATH}`)) return 'ours';
	return 'foreign';
}

/**
 * A target as the package shows it (an output, an error): the trigger's secret replaced, so that
 * nobody who can read executions can start the trigger's workflow with it.
 */
export function maskSecret(target: string): string {
	return target.replace(new RegExp(`([?&]${SECRET_PARAM}=)[^&#]*`, 'g'), '$1(hidden)');
}

/** The registered target: the webhook URL plus a random secret, within the service's limit. */
export function targetWithSecret(url: string, secret: string): string {
	return `${url}${url.includes('?') ? '&' : '?'}${SECRET_PARAM}=${secret}`;
}

/**
 * A new secret: 64 hex characters (fewer if the URL is long, never fewer than 32). Given a key (the
 * credential's API key), its second half signs its first half with the trigger's URL and queue, so
 * the trigger can recognise it before n8n has saved the registration (`isSignedSecret`).
 */
export function newSecret(
	url: string,
	node: () => INode,
	signing?: { key: string; queueId: number },
): string {
	const room = MAX_TARGET_LENGTH - targetWithSecret(url, '').length;
	// 32 random bytes (64 hex characters); fewer if the URL is long, never fewer than 16 bytes.
	const bytes = Math.min(32, Math.floor(room / 2));
	if (bytes < 16) {
		throw new NodeOperationError(
			node(),
			`This workflow's webhook URL is too long for the Task Queue Service (${url.length} characters)`,
			{
				description: `The service stores at most ${MAX_TARGET_LENGTH} characters per webhook, including a secret of at least 32 characters. Shorten n8n's WEBHOOK_URL, or use the Task Queue Poll Trigger.`,
			},
		);
	}
	if (!signing) return randomBytes(bytes).toString('hex');
	const nonce = randomBytes(Math.floor(bytes / 2)).toString('hex');
	return nonce + secretSignature(nonce, url, signing).slice(0, bytes * 2 - nonce.length);
}

function secretSignature(nonce: string, url: string, signing: { key: string; queueId: number }) {
	return sign(signing.key, 'trigger-secret', [withoutQuery(url), String(signing.queueId), nonce]);
}

/** Whether `secret` is one `newSecret` made for this URL and queue with one of these keys. */
export function isSignedSecret(
	secret: unknown,
	url: string,
	signing: { keys: Keys; queueId: number },
): boolean {
	if (typeof secret !== 'string' || !/^[0-9a-f]{32,64}$/.test(secret)) return false;
	const nonce = secret.slice(0, Math.floor(secret.length / 4) * 2);
	const fields = [withoutQuery(url), String(signing.queueId), nonce];
	const signature = secret.slice(nonce.length);
	return verify(signature, signing.keys, 'trigger-secret', fields, signature.length);
}

/**
 * Whether a queue's webhook target is a Task Queue Trigger of this n8n (its production address, on
 * the same host as n8n's waiting addresses, ending in the trigger's path).
 */
export function isTriggerOfThisN8n(target: string | null, waitingBase: string): boolean {
	if (!target) return false;
	try {
		const url = new URL(target);
		return (
			url.origin === new URL(waitingBase).origin &&
			url.pathname.endsWith(`/${WEBHOOK_PATH}`) &&
			!url.pathname.includes('/webhook-test/')
		);
	} catch {
		return false;
	}
}
