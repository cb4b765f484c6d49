// Checks of single values, whatever block they belong to: texts, numbers, URLs, dates, lists. The
// block-aware checks (options, entities, boxes, forms) are in blocks.ts, which uses these.

export function isEmptyValue(value: unknown): boolean {
	return value === undefined || value === null || value === '';
}

const HOST_LABEL = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/i;

/**
 * A URL as the service accepts it: http(s), and a host with a dot, or localhost for a webhook
 * target. Task values are stricter on real servers: `localhost` is refused there (`forValue`).
 */
export function isValidUrl(value: string, forValue = false): boolean {
	if (value.length === 0 || /\s/.test(value)) return false;
	let url: URL;
	try {
		url = new URL(value);
	} catch {
		return false;
	}
	if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
	const host = url.hostname.replace(/^\[|\]$/g, '');
	if (host.includes(':') || (host === 'localhost' && !forValue)) return true;
	const labels = host.split('.');
	return labels.length >= 2 && labels.every((label) => HOST_LABEL.test(label));
}

const DATE =
	/^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,6})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

export function isValidDate(value: string): boolean {
	const match = DATE.exec(value);
	if (!match) return false;
	const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
	const calendar = new Date(Date.UTC(year, month - 1, day));
	if (calendar.getUTCMonth() !== month - 1 || calendar.getUTCDate() !== day) return false;
	if (match[4] !== undefined && (Number(match[4]) > 23 || Number(match[5]) > 59)) return false;
	return !(match[6] !== undefined && Number(match[6]) > 59);
}

export const EMAIL = /^[^\s@]+@[^\s@]+$/;

export function describe(value: unknown): string {
	if (value === null) return 'null';
	if (Array.isArray(value)) return 'a list';
	if (typeof value === 'string')
		return `"${value.length > 60 ? `${value.slice(0, 57)}...` : value}"`;
	if (typeof value === 'object') return 'an object';
	return `${typeof value} ${String(value)}`;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
	return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Lists and objects typed into the editor arrive as JSON text. */
export function parseJsonText(value: unknown, opening: '[' | '{'): unknown {
	if (typeof value !== 'string' || !value.trim().startsWith(opening)) return value;
	try {
		return JSON.parse(value) as unknown;
	} catch {
		return value;
	}
}

/** Values such as luxon DateTime or Date objects that expressions produce. */
export function dateText(value: unknown): unknown {
	if (value instanceof Date) return Number.isNaN(value.getTime()) ? value : value.toISOString();
	if (isPlainObject(value) && typeof (value as { toISO?: unknown }).toISO === 'function') {
		return (value as unknown as { toISO(): string | null }).toISO() ?? value;
	}
	return value;
}

/** The service keeps only the documented keys of an object value: refuse others rather than lose them. */
export function unknownKey(value: Record<string, unknown>, known: string[]): string | undefined {
	const extra = Object.keys(value).filter((key) => !known.includes(key));
	return extra.length > 0
		? `${extra.map((key) => `"${key}"`).join(', ')} ${extra.length === 1 ? 'is' : 'are'} not part of it (only ${known.join(' and ')}; the service would drop ${extra.length === 1 ? 'it' : 'them'})`
		: undefined;
}

export function isFraction(value: unknown): value is number {
	return typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= 1;
}

export type Checked = { ok: true; value: unknown } | { ok: false; message: string };

export const ok = (value: unknown): Checked => ({ ok: true, value });
export const bad = (message: string): Checked => ({ ok: false, message });

export function number(value: unknown): Checked {
	if (typeof value === 'number' && Number.isFinite(value)) return ok(value);
	if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) {
		return ok(Number(value));
	}
	return bad(`expected a number, got ${describe(value)}`);
}

export function url(value: unknown): Checked {
	if (typeof value !== 'string') return bad(`expected a URL, got ${describe(value)}`);
	if (!isValidUrl(value.trim(), true)) {
		return bad(
			`${describe(value)} is not a valid URL (use http:// or https:// and a host name with a dot: the service refuses localhost in a task's value)`,
		);
	}
	return ok(value.trim());
}

export function stringList(value: unknown): Checked {
	const parsed = parseJsonText(value, '[');
	if (!Array.isArray(parsed)) return bad(`expected a list of texts, got ${describe(value)}`);
	const wrong = parsed.findIndex((entry) => typeof entry !== 'string' && typeof entry !== 'number');
	if (wrong !== -1)
		return bad(`entry ${wrong + 1} should be a text, got ${describe(parsed[wrong])}`);
	return ok(parsed.map(String));
}
