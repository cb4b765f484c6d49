// n8n-core writes an encryption key under $N8N_USER_FOLDER/.n8n: keep it out of the home folder.
import { mkdtempSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { setSafeRegexEngine } from 'n8n-workflow';

if (!process.env.N8N_USER_FOLDER) {
	process.env.N8N_USER_FOLDER = mkdtempSync(join(tmpdir(), 'tq-n8n-'));
}

// n8n-workflow runs the patterns of its parameter checks (a resource locator's URL regex) in a vm with
// a 250 ms wall-clock limit. On this 2-core machine under full load a check of the chaos suite timed
// out (CI, "Regular expression execution timed out"): a timing the tests must not depend on. The
// tests run only the package's own patterns, so the native engine, the same regexes, with no clock.
setSafeRegexEngine({
	exec: (pattern, input, flags) => new RegExp(pattern, flags).exec(input),
	test: (pattern, input, flags) => new RegExp(pattern, flags).test(input),
	replace: (pattern, input, flags, replacement) =>
		input.replace(new RegExp(pattern, flags), replacement),
	matchAll: (pattern, input, flags) =>
		Array.from(
			input.matchAll(new RegExp(pattern, (flags ?? '').includes('g') ? flags : `${flags ?? ''}g`)),
		),
	split: (pattern, input, flags) => input.split(new RegExp(pattern, flags)),
});
