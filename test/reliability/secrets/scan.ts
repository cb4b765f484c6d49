// The secret scan: every test run records what the package produced (log lines, error messages,
// execution output, webhook answers, n8n's own log and execution data) into an artifact folder,
// and the secrets it used (API keys, webhook secrets) beside them; a final check greps every
// artifact for every secret. See docs/reliability.md, "Secrets".
import {
	appendFileSync,
	existsSync,
	mkdirSync,
	readdirSync,
	readFileSync,
	rmSync,
	statSync,
} from 'fs';
import { join, resolve } from 'path';

export const SCAN_ROOT = resolve(__dirname, '..', '..', '..', '.tmp', 'secret-scan');
/** jest (unit and integration) and e2e (real n8n) keep separate folders: each run clears its own. */
export type ScanSuite = 'jest' | 'e2e';

/** Set by the suite's globalSetup (setup.ts): this run's id, so runs started side by side never mix. */
export const RUN_ENV = 'TQ_SECRET_SCAN_RUN';

export function suiteDir(suite: ScanSuite, root = SCAN_ROOT): string {
	// without a globalSetup of ours (the e2e suite runs in band): this process names the run, and
	// the globalTeardown runs in the same process
	process.env[RUN_ENV] ??= `${process.pid}-inband`;
	return join(root, suite, `run-${process.env[RUN_ENV]}`);
}

const SECRETS_PREFIX = 'secrets-';
/** Shorter values are not secrets (they would match ordinary text). */
export const MIN_SECRET_LENGTH = 8;

/** Remembers a secret value used by the tests (one file per process, appended). */
export function recordSecret(dir: string, value: unknown, source: string): void {
	if (typeof value !== 'string' || value.length < MIN_SECRET_LENGTH) return;
	mkdirSync(dir, { recursive: true });
	appendFileSync(
		join(dir, `${SECRETS_PREFIX}${process.pid}.jsonl`),
		`${JSON.stringify({ value, source })}\n`,
	);
}

/** Appends one artifact record (what the package produced) for the scan. */
export function recordArtifact(dir: string, name: string, kind: string, content: unknown): void {
	mkdirSync(dir, { recursive: true });
	const text = typeof content === 'string' ? content : safeStringify(content);
	appendFileSync(join(dir, `${name}.jsonl`), `${JSON.stringify({ kind, text })}\n`);
}

/** Copies a whole text (e.g. n8n's log) into the artifact folder. */
export function recordText(dir: string, fileName: string, text: string): void {
	mkdirSync(dir, { recursive: true });
	appendFileSync(join(dir, fileName), text);
}

/** JSON of anything, errors included with every own property, cycles cut. */
export function safeStringify(value: unknown): string {
	const seen = new WeakSet<object>();
	try {
		return (
			JSON.stringify(value, function (_key, v: unknown) {
				if (typeof v === 'bigint') return v.toString();
				if (typeof v === 'function') return undefined;
				if (v instanceof Error) {
					const out: Record<string, unknown> = { name: v.name, message: v.message, stack: v.stack };
					for (const key of Object.getOwnPropertyNames(v))
						out[key] = (v as unknown as Record<string, unknown>)[key];
					if ('cause' in v) out.cause = (v as { cause?: unknown }).cause;
					if (seen.has(v)) return '[cycle]';
					seen.add(v);
					return out;
				}
				if (typeof v === 'object' && v !== null) {
					if (seen.has(v)) return '[cycle]';
					seen.add(v);
				}
				return v;
			}) ?? String(value)
		);
	} catch {
		return String(value);
	}
}

export interface Secret {
	value: string;
	source: string;
}

export function loadSecrets(dir: string): Secret[] {
	if (!existsSync(dir)) return [];
	const byValue = new Map<string, Secret>();
	for (const file of readdirSync(dir).filter((f) => f.startsWith(SECRETS_PREFIX))) {
		for (const line of readFileSync(join(dir, file), 'utf8').split('\n')) {
			if (!line) continue;
			const secret = JSON.parse(line) as Secret;
			if (!byValue.has(secret.value)) byValue.set(secret.value, secret);
		}
	}
	return [...byValue.values()];
}

export interface Hit {
	file: string;
	secret: Secret;
	/** a short excerpt around the hit, with the secret masked */
	excerpt: string;
}

export interface ScanResult {
	files: number;
	bytes: number;
	/** artifact records (lines of the .jsonl files, or whole texts) */
	records: number;
	secrets: number;
	hits: Hit[];
}

function listFiles(dir: string): string[] {
	if (!existsSync(dir)) return [];
	const out: string[] = [];
	for (const entry of readdirSync(dir)) {
		const path = join(dir, entry);
		if (statSync(path).isDirectory()) out.push(...listFiles(path));
		else if (!entry.startsWith(SECRETS_PREFIX)) out.push(path);
	}
	return out;
}

/** Each secret is searched as is, URL-encoded and JSON-escaped (how it would appear in a log). */
function forms(value: string): string[] {
	return [...new Set([value, encodeURIComponent(value), JSON.stringify(value).slice(1, -1)])];
}

export function scan(dir: string, secrets: Secret[] = loadSecrets(dir)): ScanResult {
	const result: ScanResult = { files: 0, bytes: 0, records: 0, secrets: secrets.length, hits: [] };
	for (const file of listFiles(dir)) {
		const raw = readFileSync(file, 'utf8');
		// records are JSON lines: search their decoded text too (a secret with quotes is escaped twice)
		const decoded = file.endsWith('.jsonl')
			? raw
					.split('\n')
					.filter(Boolean)
					.map((line) => {
						try {
							return String((JSON.parse(line) as { text?: unknown }).text);
						} catch {
							return line;
						}
					})
					.join('\n')
			: '';
		const text = `${raw}\n${decoded}`;
		result.files++;
		result.bytes += Buffer.byteLength(raw);
		result.records += file.endsWith('.jsonl') ? raw.split('\n').filter(Boolean).length : 1;
		for (const secret of secrets) {
			for (const form of forms(secret.value)) {
				const at = text.indexOf(form);
				if (at === -1) continue;
				const excerpt = text
					.slice(Math.max(0, at - 80), at + form.length + 80)
					.split(form)
					.join(`<${secret.source}>`);
				result.hits.push({ file, secret, excerpt });
				break;
			}
		}
	}
	return result;
}

export function clear(dir: string): void {
	rmSync(dir, { recursive: true, force: true });
	mkdirSync(dir, { recursive: true });
}

export function report(result: ScanResult): string {
	const lines = [
		`secret scan: ${result.secrets} secrets x ${result.files} files (${result.records} records, ${result.bytes} bytes): ${result.hits.length} hit(s)`,
	];
	for (const hit of result.hits.slice(0, 20))
		lines.push(`  ${hit.secret.source} in ${hit.file}: ...${hit.excerpt}...`);
	return lines.join('\n');
}
