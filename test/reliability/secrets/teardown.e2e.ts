// jest globalTeardown of the e2e suite: the n8n the files shared is stopped, the secret scan runs over
// n8n's logs and execution data, then the tarball global-setup.ts packed is removed.
import { rmSync } from 'fs';
import { dirname } from 'path';

import { stopSharedN8n } from '../../e2e/helpers';
import { scanSuite } from './teardown';

export default async function teardown(
	globalConfig: Parameters<typeof scanSuite>[1],
): Promise<void> {
	try {
		await stopSharedN8n();
		await scanSuite('e2e', globalConfig);
	} finally {
		if (process.env.TQ_E2E_TARBALL_PACKED_HERE && process.env.TQ_E2E_TARBALL) {
			rmSync(dirname(process.env.TQ_E2E_TARBALL), { recursive: true, force: true });
		}
	}
}
