// Self-test of the secret scan: it catches a planted secret in every form a log would hold it,
// and the capture of this very run is live (so the final scan cannot pass by seeing nothing).
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';

import { LoggerProxy } from 'n8n-workflow';

import { recordArtifact, recordSecret, recordText, scan, suiteDir } from './scan';

describe('secret scan', () => {
	let dir: string;
	beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'tq-scan-'))));
	afterEach(() => rmSync(dir, { recursive: true, force: true }));

	test('catches a planted secret, raw, URL-encoded and JSON-escaped, and names where', () => {
		const secret = 'tqs_planted/secret+"value"';
		recordSecret(dir, secret, 'planted');
		recordSecret(dir, 'short', 'too short to be a secret');
		recordArtifact(dir, 'clean', 'log.info', 'nothing to see here');
		expect(scan(dir).hits).toEqual([]);

		recordArtifact(dir, 'raw', 'log.warn', `refused ${secret} here`);
		recordText(dir, 'n8n.log', `GET /webhook/x?secret=${encodeURIComponent(secret)}\n`);
		recordArtifact(dir, 'json', 'execute.result', { json: { error: `bad ${secret}` } });
		const result = scan(dir);
		expect(result.hits.map((hit) => hit.file.replace(`${dir}/`, '')).sort()).toEqual([
			'json.jsonl',
			'n8n.log',
			'raw.jsonl',
		]);
		expect(
			result.hits.every((hit) => hit.secret.source === 'planted' && !hit.excerpt.includes(secret)),
		).toBe(true);
		expect(result).toMatchObject({ files: 4, secrets: 1 });
	});

	test('the capture of this run is live: console, LoggerProxy and the secrets of a sandbox land in the artifacts', async () => {
		const marker = `capture-marker-${Date.now()}`;
		console.log(marker);
		LoggerProxy.warn(`${marker} via LoggerProxy`);
		const { startSandbox } = await import('../../../sandbox');
		const sandbox = await startSandbox();
		await sandbox.close();
		const live = suiteDir('jest');
		const artifacts = readdirSync(live).map((f) => readFileSync(join(live, f), 'utf8'));
		const text = artifacts.join('\n');
		expect(text).toContain(`"kind":"console.log","text":"${marker}"`);
		expect(text).toContain(`${marker} via LoggerProxy`);
		expect(text).toContain(JSON.stringify({ value: sandbox.apiKey, source: 'sandbox apiKey' }));
	});
});
