// CI's editor sessions of one n8n version, one after another with one n8n and one Chromium
// (editor-session.ts, withSharedEditor): on 2.x the editor tour, then the builder's walk with two
// people and with one; on 1.x (TQ_N8N_VERSION=1) the two walks (the tour is 2.x's). Each session
// has a sandbox of its own and starts from an n8n without the workflows of the one before; the
// first failure ends the run (exit 1). Alone: `npx tsx tools/n8n/editor-tour.ts`, `... builder-walk.ts`.
import { walk } from './builder-walk';
import { withSharedEditor } from './editor-session';
import { tour } from './editor-tour';
import { majorFromEnv } from './install';

async function main(): Promise<void> {
	const started = Date.now();
	await withSharedEditor(async () => {
		if (majorFromEnv() === '2') await tour();
		await walk({ people: true });
		await walk({ people: false });
	});
	console.log(`\nthe editor sessions passed in ${Math.round((Date.now() - started) / 1000)} s`);
}

main().then(
	() => process.exit(0),
	(error) => {
		console.error(error);
		process.exit(1);
	},
);
