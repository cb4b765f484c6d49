// Once per jest run, at the end: the secret scan, then the n8n user folder of global-setup.ts goes.
import { rmSync } from 'fs';

import secretsTeardown from './reliability/secrets/teardown';

export default async function globalTeardown(
	globalConfig: Parameters<typeof secretsTeardown>[0],
): Promise<void> {
	try {
		await secretsTeardown(globalConfig);
	} finally {
		if (process.env.TQ_REMOVE_N8N_USER_FOLDER && process.env.N8N_USER_FOLDER) {
			rmSync(process.env.N8N_USER_FOLDER, { recursive: true, force: true });
		}
	}
}
