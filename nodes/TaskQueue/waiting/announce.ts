import type { IExecuteFunctions } from 'n8n-workflow';

import { CREDENTIAL_TYPE } from '../transport/types';
import { withoutTheKey } from '../transport';
import { announcement } from './messages';

/**
 * Tells the queue's Task Queue Trigger (of this n8n, checked before any task was created) which tasks
 * the run waits for, so their completions reach the run by id even when a person replaced the address
 * in a task's fields (trigger/relay/knownRuns.ts). A hint: when it does not arrive, completions still travel by the
 * address they carry. The trigger's address holds its secret: it is never written to a log.
 */
export async function announceRun(
	this: IExecuteFunctions,
	triggerUrl: string,
	queueId: number,
	address: string,
	tasks: number[],
): Promise<void> {
	try {
		await this.helpers.httpRequestWithAuthentication.call(
			this,
			CREDENTIAL_TYPE,
			{
				method: 'POST',
				url: triggerUrl,
				body: announcement(address, tasks),
				json: true,
				timeout: 10_000,
			},
			withoutTheKey(),
		);
	} catch (error) {
		const code =
			(error as { httpCode?: unknown; code?: unknown }).httpCode ??
			(error as { code?: unknown }).code ??
			'no answer';
		this.logger.info(
			`Task Queue: the Task Queue Trigger of queue ${queueId} did not take the list of this run's tasks (${String(code)}); their completions reach the run by the address each task carries`,
		);
	}
}
