// Once per jest run: one n8n user folder for every test file (n8n-core writes its encryption key
// there; outside the home folder), removed at the end; then the secret scan's set-up.
import { mkdtempSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';

import secretsSetup from './reliability/secrets/setup';

export default async function globalSetup(): Promise<void> {
	if (!process.env.N8N_USER_FOLDER) {
		process.env.N8N_USER_FOLDER = mkdtempSync(join(tmpdir(), 'tq-n8n-'));
		process.env.TQ_REMOVE_N8N_USER_FOLDER = '1';
	}
	await secretsSetup();
}
