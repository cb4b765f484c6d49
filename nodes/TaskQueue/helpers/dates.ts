import { DateTime } from 'luxon';
import type { IExecuteFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

/**
 * A dateTime parameter as an instant: ISO text without an offset is read in the workflow's time
 * zone (as n8n's date picker means it); DateTime and Date values from expressions are accepted.
 * Empty means "not set".
 */
export function parseDateParameter(
	this: IExecuteFunctions,
	value: unknown,
	label: string,
	itemIndex: number,
): DateTime | undefined {
	if (value === undefined || value === null || value === '') return undefined;
	let date: DateTime | undefined;
	if (value instanceof Date) date = DateTime.fromJSDate(value);
	else if (
		typeof value === 'object' &&
		typeof (value as { toISO?: unknown }).toISO === 'function'
	) {
		date = DateTime.fromISO(String((value as { toISO(): string }).toISO()), { setZone: true });
	} else if (typeof value === 'string') {
		date = DateTime.fromISO(value.trim(), { zone: this.getTimezone() });
	}
	if (!date?.isValid) {
		throw new NodeOperationError(
			this.getNode(),
			`${label} is not a date: ${JSON.stringify(value)}`,
			{
				itemIndex,
				description: `Pick a date and time for ${label}, or give an ISO 8601 value such as 2024-06-01T09:00:00.`,
			},
		);
	}
	return date;
}
