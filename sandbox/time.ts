// Timestamps as real deployments write them. The REST answers carry microseconds
// ("2026-11-21T09:51:19.070455Z", a Django datetime's isoformat); the webhook deliveries carry the
// same instant truncated to milliseconds ("…19.070Z", Django's JSON encoder). An instant on a whole
// second has no fraction in either. A node that keys completions by the raw string sees one
// completion as two: the sandbox must write both forms, as the server does.

let lastMicros = 0;

function hrMicros(): number {
	return Number(process.hrtime.bigint() / 1000n) % 1000;
}

/** Microseconds since the epoch, strictly increasing within this process. */
export function nowMicros(): number {
	const now = Date.now() * 1000 + hrMicros();
	lastMicros = now > lastMicros ? now : lastMicros + 1;
	return lastMicros;
}

/** `YYYY-MM-DDTHH:MM:SS.ffffffZ`, or without a fraction on a whole second. */
export function formatMicros(micros: number): string {
	const seconds = Math.floor(micros / 1_000_000);
	const fraction = micros - seconds * 1_000_000;
	const base = new Date(seconds * 1000).toISOString().slice(0, 19);
	return fraction === 0 ? `${base}Z` : `${base}.${String(fraction).padStart(6, '0')}Z`;
}

/** The REST form of "now". */
export function isoNowMicros(): string {
	return formatMicros(nowMicros());
}

const ISO = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?Z$/;

/** Microseconds since the epoch of a `…Z` timestamp (any fraction up to 6 digits); NaN otherwise. */
export function parseMicros(timestamp: string): number {
	const match = ISO.exec(timestamp);
	if (!match) {
		const ms = Date.parse(timestamp);
		return Number.isNaN(ms) ? Number.NaN : ms * 1000;
	}
	const seconds = Date.parse(`${match[1]}Z`) / 1000;
	return seconds * 1_000_000 + Number((match[2] ?? '').padEnd(6, '0'));
}

/** The same instant as a webhook delivery writes it: truncated to milliseconds. */
export function deliveryTimestamp(timestamp: string): string {
	const match = ISO.exec(timestamp);
	if (!match) return timestamp;
	const fraction = (match[2] ?? '').padEnd(6, '0');
	return /^0+$/.test(fraction) ? `${match[1]}Z` : `${match[1]}.${fraction.slice(0, 3)}Z`;
}

/** A task as a webhook delivery carries it: its timestamps truncated to milliseconds. */
export function asDelivered<T extends { created_at: string; completed_at: string | null }>(
	task: T,
): T {
	return {
		...task,
		created_at: deliveryTimestamp(task.created_at),
		completed_at: task.completed_at === null ? null : deliveryTimestamp(task.completed_at),
	};
}
