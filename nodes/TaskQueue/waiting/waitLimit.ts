import { DateTime } from 'luxon';
import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import { NodeOperationError, WAIT_INDEFINITELY } from 'n8n-workflow';

import { parseDateParameter } from '../helpers/dates';

// Limit Wait Time: when n8n ends a wait on its own, and a run's own deadline (Several People per Item).

/**
 * How long after a deadline n8n ends the wait on its own, with the node's input (no node code runs
 * then): the Task Queue Trigger's check, every minute by default, wakes the run at its deadline
 * before that (trigger/relay/deadlines.ts), and the run goes on with the answers so far.
 */
export const DEADLINE_GRACE_MS = 5 * 60_000;

/**
 * n8n's wait limit and the run's own deadline. Only a run with Several People per Item keeps what
 * people said at its deadline; any other run ends at the limit as n8n's own nodes do.
 */
export function waitLimits(
	limit: Date,
	keepsAnswers: boolean,
): { waitTill: Date; deadline?: number } {
	if (!keepsAnswers || limit.getTime() === WAIT_INDEFINITELY.getTime()) return { waitTill: limit };
	return {
		waitTill: new Date(limit.getTime() + DEADLINE_GRACE_MS),
		deadline: limit.getTime(),
	};
}

const LIMIT_UNITS = { minutes: 60_000, hours: 3_600_000, days: 86_400_000 } as const;

/** When the wait ends without every completion; checked before any task is created. */
export function waitTill(this: IExecuteFunctions): Date {
	const limit = this.getNodeParameter(
		'options.limitWaitTime.values',
		0,
		null,
	) as IDataObject | null;
	if (!limit) return WAIT_INDEFINITELY;
	if (limit.limitType === 'atSpecifiedTime') {
		const at = parseDateParameter.call(this, limit.maxDateAndTime, 'Max Date and Time', 0);
		if (!at || at.toMillis() <= Date.now()) {
			throw new NodeOperationError(
				this.getNode(),
				'Limit Wait Time is set to a date that has passed',
				{
					description:
						'Set Max Date and Time to a date in the future, or remove the Limit Wait Time option.',
				},
			);
		}
		return at.toJSDate();
	}
	const amount = Number(limit.resumeAmount);
	const unit = LIMIT_UNITS[limit.resumeUnit as keyof typeof LIMIT_UNITS];
	if (!Number.isFinite(amount) || amount <= 0 || unit === undefined) {
		throw new NodeOperationError(
			this.getNode(),
			`Limit Wait Time must be a positive amount of time, not ${JSON.stringify(limit.resumeAmount)} ${String(limit.resumeUnit)}`,
			{
				description:
					'Set Amount to more than 0 (minutes, hours or days), or remove the Limit Wait Time option.',
			},
		);
	}
	return DateTime.now()
		.plus({ milliseconds: amount * unit })
		.toJSDate();
}
