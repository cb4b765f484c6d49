// jest globalTeardown of the e2e suite: the secret scan over n8n's logs and execution data.
import { scanSuite } from './teardown';

export default async function teardown(
	globalConfig: Parameters<typeof scanSuite>[1],
): Promise<void> {
	await scanSuite('e2e', globalConfig);
}
