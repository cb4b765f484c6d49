// jest globalTeardown: the secret scan over everything this run recorded (see capture.ts).
// Fails the run on any hit, and on a full run that recorded too little to mean anything.
import { existsSync, renameSync, rmSync } from 'fs';

import { join } from 'path';

import { report, scan, SCAN_ROOT, suiteDir, type ScanSuite } from './scan';

/**
 * One folder per kind of run, and per CI job (`TQ_CI_JOB`, set by .ci/run: its jobs run 2.x's and
 * queue mode's suites two at a time, and the later one's folder replaced the other's: the long
 * suite's failure in stop 71's CI could not be read).
 */
function lastDir(suite: ScanSuite): string {
	const variant =
		suite === 'e2e'
			? `${process.env.TQ_N8N_VERSION === '1' ? '-n8n1' : ''}${process.env.TQ_QUEUE_MODE ? '-queue-mode' : ''}`
			: '';
	const job = process.env.TQ_CI_JOB ? `-job-${process.env.TQ_CI_JOB}` : '';
	return join(SCAN_ROOT, `${suite}${variant}${job}-last`);
}

/**
 * A full jest run records thousands of items. An e2e run of `npm test` (its three files, without
 * the long reliability suites) records, per test file, n8n's log lines of that file (one record)
 * and its stored executions (a few large records), and at the end the whole log of the n8n the
 * files shared (test/e2e/helpers.ts): about 24 records and well over 100 KB (the files' own parts
 * alone came to 99 KB once). Fewer means the capture broke.
 */
export const MIN_RECORDS: Record<ScanSuite, number> = { jest: 1000, e2e: 8 };
export const MIN_BYTES: Record<ScanSuite, number> = { jest: 1_000_000, e2e: 100_000 };
export const MIN_SECRETS: Record<ScanSuite, number> = { jest: 3, e2e: 2 };

interface GlobalConfig {
	testPathPattern?: string;
	testNamePattern?: string;
	onlyChanged?: boolean;
	findRelatedTests?: boolean;
	nonFlagArgs?: string[];
}

export async function scanSuite(suite: ScanSuite, globalConfig: GlobalConfig): Promise<void> {
	const dir = suiteDir(suite);
	const result = scan(dir);
	// keep the last run's artifacts for inspection; the next run starts empty
	if (existsSync(dir)) {
		rmSync(lastDir(suite), { recursive: true, force: true });
		renameSync(dir, lastDir(suite));
	}
	const full =
		!globalConfig.testPathPattern &&
		!globalConfig.testNamePattern &&
		!globalConfig.onlyChanged &&
		!globalConfig.findRelatedTests &&
		(globalConfig.nonFlagArgs ?? []).length === 0;
	console.log(
		`\n${report(result)}${full ? '' : ' (partial run: no minimum)'} -> ${lastDir(suite)}`,
	);
	if (result.hits.length > 0)
		throw new Error(`A secret appeared in what the package produced:\n${report(result)}`);
	if (
		full &&
		(result.records < MIN_RECORDS[suite] ||
			result.bytes < MIN_BYTES[suite] ||
			result.secrets < MIN_SECRETS[suite])
	) {
		throw new Error(
			`The secret scan saw too little to mean anything (${result.records} records, ${result.bytes} bytes, ${result.secrets} secrets; ` +
				`expected at least ${MIN_RECORDS[suite]}, ${MIN_BYTES[suite]} and ${MIN_SECRETS[suite]}): the capture is broken.`,
		);
	}
}

export default async function teardown(globalConfig: GlobalConfig): Promise<void> {
	await scanSuite('jest', globalConfig);
}
