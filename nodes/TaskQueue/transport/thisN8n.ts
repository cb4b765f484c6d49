import type { IDataObject } from 'n8n-workflow';

import type { TaskQueueContext } from './types';
import { CREDENTIAL_TYPE } from './types';

/**
 * For a call to this n8n (a waiting run's address, the trigger's own), never to the service: the
 * credential is handed to n8n's helper without its data, so the API key cannot travel with it, and
 * n8n does not look the credential up (outside a running execution n8n 2.41 builds an expression
 * isolate for each lookup).
 */
export const withoutTheKey = () => ({
	credentialsDecrypted: { id: '', name: '', type: CREDENTIAL_TYPE, data: {} },
});

/** What one of this n8n's own addresses answered, or why it did not. */
export type ThisN8nAnswer = { status: number; body: unknown; html: boolean } | { error: string };

/**
 * A POST to one of this n8n's own addresses (a waiting execution's, a Task Queue Trigger's), never
 * with the API key. Any status is an answer; no answer (refused, timed out) is `error`.
 */
export async function postToThisN8n(
	this: TaskQueueContext,
	url: string,
	body: IDataObject,
	timeout: number,
): Promise<ThisN8nAnswer> {
	try {
		const response = (await this.helpers.httpRequestWithAuthentication.call(
			this,
			CREDENTIAL_TYPE,
			{
				method: 'POST',
				url,
				body,
				json: true,
				returnFullResponse: true,
				ignoreHttpStatusErrors: true,
				// a redirect is an answer, never followed: what this n8n's address answers stays here
				disableFollowRedirect: true,
				timeout,
			},
			withoutTheKey(),
		)) as { statusCode: number; body: unknown; headers?: Record<string, unknown> };
		const html = String(response.headers?.['content-type'] ?? '').startsWith('text/html');
		return { status: response.statusCode, body: response.body, html };
	} catch (error) {
		return { error: (error as Error).message };
	}
}
