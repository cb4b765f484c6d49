// The Poll Trigger over a backlog of 130,000 completions (security review M2: a read of about 126,000
// new completions threw "RangeError: Maximum call stack size exceeded", spreading them into one
// push, and the cursor never moved: the Poll Trigger failed on every poll). In n8n 1.x a poll has
// no time budget and reads the whole backlog from the top; in 2.x the budget reads it oldest first.
import { BY, QUEUE, usePollTriggerEnv } from './pollTriggerEnv';

const BACKLOG = 130_000;
const { env, trigger } = usePollTriggerEnv();

async function backlogOldestFirst(): Promise<number[]> {
	await env().client.createTasks(QUEUE, BACKLOG);
	await env().client.completeMany(QUEUE, BACKLOG, BY);
	return (await env().client.tasks(QUEUE))
		.filter((x) => x.status === 'completed')
		.sort((a, b) =>
			a.completed_at === b.completed_at
				? a.id - b.id
				: Date.parse(String(a.completed_at)) - Date.parse(String(b.completed_at)),
		)
		.slice(-BACKLOG)
		.map((x) => x.id);
}

test(`n8n 1.x (no poll budget): ${BACKLOG.toLocaleString('en')} new completions in one poll, each once, oldest first; the next poll finds nothing new`, async () => {
	const t = trigger();
	t.budgetMs = null;
	await t.poll();
	const expected = await backlogOldestFirst();
	const first = await t.poll();
	expect(first?.[0]).toHaveLength(BACKLOG);
	expect(t.emitted.map((x) => x.id)).toEqual(expected);
	expect(await t.poll()).toBeNull();
}, 600_000);

test(`n8n 2.x (a 20 s poll budget): ${BACKLOG.toLocaleString('en')} new completions, every poll moves, each once, oldest first`, async () => {
	const t = trigger();
	t.budgetMs = 20_000;
	await t.poll();
	const expected = await backlogOldestFirst();
	const polls: number[] = [];
	for (let poll = 0; poll < 100 && t.emitted.length < BACKLOG; poll++)
		polls.push((await t.poll())?.[0].length ?? 0);
	expect(polls.every((n) => n > 0)).toBe(true);
	expect(t.emitted.map((x) => x.id)).toEqual(expected);
	expect(await t.poll()).toBeNull();
}, 600_000);
