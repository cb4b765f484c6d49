// Once per e2e run: install the pinned n8n into the cache if it is cold (minutes; ~0 s when warm),
// then build and pack this package (or take the tarball TQ_E2E_TARBALL names: CI packs once for
// every suite); the test files install that tarball into their n8n. Then the secret scan's set-up.
import { existsSync } from 'fs';

import { ensureN8n, majorFromEnv } from '../../tools/n8n/install';
import { buildAndPack } from '../../tools/n8n/package';
import secretsSetup from '../reliability/secrets/setup';

export default async function globalSetup(): Promise<void> {
	const started = Date.now();
	const given = process.env.TQ_E2E_TARBALL;
	if (given && !existsSync(given)) throw new Error(`TQ_E2E_TARBALL names no file: ${given}`);
	const [inst, tarball] = await Promise.all([
		ensureN8n(majorFromEnv(), (s) => console.log(`[e2e] ${s}`)),
		given ?? buildAndPack({ skipBuild: !!process.env.TQ_E2E_SKIP_BUILD }),
	]);
	if (!given) {
		process.env.TQ_E2E_TARBALL = tarball;
		process.env.TQ_E2E_TARBALL_PACKED_HERE = '1'; // its folder goes at the end of the run
	}
	await secretsSetup();
	console.log(
		`\n[e2e] n8n ${inst.spec.version} from ${inst.dir}; package ${tarball}; expression engine ${process.env.TQ_N8N_EXPRESSION_ENGINE ?? "n8n's default"} (${((Date.now() - started) / 1000).toFixed(1)} s)`,
	);
}
