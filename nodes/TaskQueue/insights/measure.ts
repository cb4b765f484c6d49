import type { IDataObject } from 'n8n-workflow';

import { collectUpward } from '../reader/completions';
import { shifted, timeKey } from '../reader/cursor';
import type { CompletedTask, Queue } from '../transport/schemas';
import type { TaskQueueContext } from '../transport/types';
import { Durations } from './durations';

// Queue > Get Insights: a queue's completions within a window, read by the one reader's backlog
// read (reader/completions.ts: oldest first, pages of 1,000, each page proven to follow the last, so
// none is skipped or counted twice while the list moves), summed up page by page.

export interface InsightsWindow {
	/** timeKeys: completions at or after `from`, before `to`. */
	from: string;
	to: string;
	targetMs: number;
}

export interface QueueFigures {
	all: Durations;
	/** By person (`completed_by`, trimmed, lower case; '' when the service names nobody). */
	people: Map<string, Durations>;
}

const msOf = (timestamp: string) => Date.parse(`${timeKey(timestamp)}Z`);

/** The queue's completions in the window, summed up without keeping them. */
export async function measureQueue(
	this: TaskQueueContext,
	queueId: number,
	window: InsightsWindow,
): Promise<QueueFigures> {
	const figures: QueueFigures = { all: new Durations(window.targetMs), people: new Map() };
	const take = async (tasks: CompletedTask[]) => {
		for (const task of tasks) {
			if (timeKey(task.completed_at) >= window.to) return false; // the rest is later still
			const ms = msOf(task.completed_at) - msOf(task.created_at);
			const person = (task.completed_by ?? '').trim().toLowerCase();
			const own = figures.people.get(person) ?? new Durations(window.targetMs);
			figures.people.set(person, own);
			own.add(ms);
			figures.all.add(ms);
		}
		return true;
	};
	const cursor = { at: shifted(window.from, -1), ids: [] };
	await collectUpward.call(this, queueId, cursor, { deadline: Infinity, take });
	return figures;
}

const round = (value: number, digits: number) => Math.round(value * 10 ** digits) / 10 ** digits;

/** The window as the output names it. */
function windowOf(window: InsightsWindow): IDataObject {
	const hours = (Date.parse(`${window.to}Z`) - Date.parse(`${window.from}Z`)) / 3_600_000;
	return { from: `${window.from}Z`, to: `${window.to}Z`, hours: round(hours, 3) };
}

function figuresOf(durations: Durations, window: InsightsWindow): IDataObject {
	return {
		completed: durations.count,
		completionsPerHour: round(durations.count / (windowOf(window).hours as number), 2),
		secondsToComplete: durations.secondsToComplete(),
		withinTarget: durations.withinTargetShare(),
	};
}

/** One item for the queue: the queue's figures, then each person's (most answers first). */
export function queueItem(
	queue: Queue,
	figures: QueueFigures,
	window: InsightsWindow,
): IDataObject {
	return {
		...queueOf(queue, window),
		...figuresOf(figures.all, window),
		people: personItems(figures).map(({ person, durations }) => ({
			person,
			completed: durations.count,
			share: round(durations.count / figures.all.count, 4),
			p50Seconds: (durations.secondsToComplete() as IDataObject).p50,
		})),
	};
}

/** One item per person who completed a task of the queue in the window (most answers first). */
export function peopleItems(queue: Queue, figures: QueueFigures, window: InsightsWindow) {
	return personItems(figures).map(({ person, durations }) => ({
		...queueOf(queue, window),
		person,
		...figuresOf(durations, window),
		share: round(durations.count / figures.all.count, 4),
	}));
}

function queueOf(queue: Queue, window: InsightsWindow): IDataObject {
	return {
		queueId: queue.id,
		queue: queue.name,
		window: windowOf(window),
		pendingTasks: queue.n_tasks ?? null,
		activePeople: queue.active_users?.length ?? null,
		targetSeconds: window.targetMs / 1000,
	};
}

function personItems(figures: QueueFigures) {
	return [...figures.people.entries()]
		.map(([person, durations]) => ({ person: person || null, durations }))
		.sort(
			(a, b) =>
				b.durations.count - a.durations.count || String(a.person).localeCompare(String(b.person)),
		);
}
