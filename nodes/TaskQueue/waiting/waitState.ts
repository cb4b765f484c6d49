import type { IExecuteFunctions } from 'n8n-workflow';

import { signedResumeUrl } from '../runtime/n8nInternals';
import type { Escalation } from './escalation/levels';
import type { PeopleSettings } from './people/settings';
import type { WaitSettings } from './settings';
import { addressTag, resumeAddressQuery } from './messages';

/** What Create and Wait sets up before its first task, for the tasks, the run's memory and its announcement. */
export interface WaitState {
	settings: WaitSettings;
	queueId: number;
	/** Input items whose task is sent (items refused under "Continue" are not waited for). */
	waitedFor: number;
	/** When n8n ends the wait on its own (with Several People per Item and a limit: after the deadline). */
	waitTill: Date;
	/** Several People per Item with Limit Wait Time: when the run goes on with the answers so far. */
	deadline?: number;
	queueName: string;
	/** The Task Queue Trigger's address (with its secret) when it is the route back. */
	triggerUrl?: string;
	/** Unix seconds, written into every address of the run. */
	createdAt: number;
	/** The labels of the options of the fields people choose in, for the output's `labels`. */
	labels: Record<string, Record<string, string>>;
	/** The credential's key, which tags the run's addresses (waiting/messages.ts); never output. */
	addressKey: string;
	/** Several People per Item, and each item's Never Count. */
	people?: PeopleSettings;
	neverCount: string[][];
	escalation?: Escalation;
}

/** The run's resume address for one input item, signed by n8n and tagged with the credential's key. */
export function resumeAddress(
	this: IExecuteFunctions,
	wait: WaitState,
	item: number,
	inputs: number,
	queueId = wait.queueId,
) {
	const parts = {
		item,
		count: wait.waitedFor,
		inputs,
		queueId,
		createdAt: wait.createdAt,
	};
	const executionId = String(this.getExecutionId());
	const tag = addressTag(wait.addressKey, { ...parts, executionId, nodeId: this.getNode().id });
	return signedResumeUrl(this, resumeAddressQuery({ ...parts, tag }));
}
