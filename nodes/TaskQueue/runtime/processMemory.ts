// What one n8n process remembers between calls, all of it: each store and its bound (the most
// entries it keeps; the oldest go first). What each holds, in which process (in queue mode each has
// its own), its worst-case size and what a restart costs: docs/operating.md, "What one n8n process
// remembers" (a test keeps the two lists the same). Most are hints or caches (what must outlive a
// restart is in static data or the execution's data); three are duties, whose restart cost says what
// is lost: `resumingRuns`, `owedCompletions` and `seenDeliveryScopes`. Stores that only live while a
// call runs (trigger/relay/lanes.ts) and per-context WeakMaps are not listed.

import { BoundedMap, BoundedSet } from './bounded';

/** Every store and its bound, written here only; each store is made with `remembered(name)`. */
export const PROCESS_MEMORY = {
	webhookCredentials: 100,
	seenDeliveryScopes: 200,
	firstHandledHere: 200,
	warnedScopes: 200,
	testEvents: 200,
	runOfTask: 200_000,
	runTasks: 5000,
	answeredRunTasks: 5000,
	waitingRuns: 5000,
	settledCompletions: 10_000,
	owedCompletions: 10_000,
	retryCompletions: 10_000,
	completionConsumers: 1000,
	heldCheckRecords: 200,
	writingDeliveries: 200,
	resumingRuns: 10_000,
	liveTargets: 200,
	nudgesUnderWay: 200,
	freshRegistrations: 200,
	queueAddressFields: 200,
	confirmationIndexes: 200,
	keptOutcomes: 100,
	askedAgain: 1000,
	progressLogged: 10_000,
	runDeadlines: 10_000,
	announcedWakes: 1000,
	joinsRetrying: 200,
} as const;

export type StoreName = keyof typeof PROCESS_MEMORY;

const made: Array<Map<unknown, unknown> | Set<unknown>> = [];

export function rememberedMap<K, V>(name: StoreName): BoundedMap<K, V> {
	const store = new BoundedMap<K, V>(PROCESS_MEMORY[name]);
	made.push(store as Map<unknown, unknown>);
	return store;
}

export function rememberedSet<T>(name: StoreName): BoundedSet<T> {
	const store = new BoundedSet<T>(PROCESS_MEMORY[name]);
	made.push(store as Set<unknown>);
	return store;
}

/** Everything listed above forgotten, as after a restart of the process (tests). */
export function forgetAsAfterRestart(): void {
	for (const store of made) store.clear();
}
