// The queue's figures on the people's page: what Queue > Get Insights returns for its default
// window (the last 7 days, up to 10 s ago; a target of 4 hours), computed here exactly from the
// sandbox's own list, apart from the node's code, so a builder can hold one against the other.
import type { Task } from './types';

const DAY_MS = 24 * 3_600_000;
const TARGET_MS = 4 * 3_600_000;
const SETTLE_MS = 10_000;

const msOf = (timestamp: string) => Date.parse(timestamp.replace(/(\.\d{3})\d*Z$/, '$1Z'));

/** Nearest rank, in seconds: the smallest time at or under which `share` of them lie. */
function percentile(sortedMs: number[], share: number): number {
	return sortedMs[Math.ceil(share * sortedMs.length) - 1] / 1000;
}

function figures(durations: number[]) {
	const sorted = [...durations].sort((a, b) => a - b);
	if (sorted.length === 0) return { completed: 0, p50: null, p90: null, withinTarget: null };
	return {
		completed: sorted.length,
		p50: percentile(sorted, 0.5),
		p90: percentile(sorted, 0.9),
		withinTarget: sorted.filter((ms) => ms <= TARGET_MS).length / sorted.length,
	};
}

export function queueInsights(completed: Task[], pending: number, now = Date.now()) {
	const to = now - SETTLE_MS;
	const from = to - 7 * DAY_MS;
	const byPerson = new Map<string, number[]>();
	const all: number[] = [];
	for (const task of completed) {
		const at = msOf(task.completed_at ?? '');
		if (!(at >= from && at < to)) continue;
		const ms = Math.max(0, at - msOf(task.created_at));
		const person = (task.completed_by ?? '').trim().toLowerCase();
		byPerson.set(person, [...(byPerson.get(person) ?? []), ms]);
		all.push(ms);
	}
	return {
		window: { from: new Date(from).toISOString(), to: new Date(to).toISOString() },
		targetSeconds: TARGET_MS / 1000,
		pending,
		...figures(all),
		people: [...byPerson]
			.map(([person, durations]) => ({
				person: person || null,
				share: durations.length / all.length,
				...figures(durations),
			}))
			.sort(
				(a, b) => b.completed - a.completed || String(a.person).localeCompare(String(b.person)),
			),
	};
}
