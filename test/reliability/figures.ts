// The measured outcomes of the reliability tests, one JSON file per test under .tmp/reliability/
// (docs/reliability.md quotes them; `npx tsx test/reliability/figures.ts` prints them all).
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'fs';
import { join, resolve } from 'path';

export const FIGURES_DIR = resolve(__dirname, '..', '..', '.tmp', 'reliability');

/** In n8n queue mode (TQ_QUEUE_MODE) a test's figures go beside its single-process ones, as `<name>.queue-mode.json`. */
export function recordFigures(name: string, figures: Record<string, unknown>): void {
	mkdirSync(FIGURES_DIR, { recursive: true });
	const file =
		process.env.TQ_QUEUE_MODE && !name.startsWith('queue-mode') ? `${name}.queue-mode` : name;
	writeFileSync(
		join(FIGURES_DIR, `${file}.json`),
		`${JSON.stringify({ ...figures, measuredAt: new Date().toISOString() }, null, 2)}\n`,
	);
}

if (require.main === module) {
	for (const file of readdirSync(FIGURES_DIR)
		.filter((f) => f.endsWith('.json'))
		.sort()) {
		process.stdout.write(`${file}: ${readFileSync(join(FIGURES_DIR, file), 'utf8')}`);
	}
}
