// What one n8n process remembers between calls, all of it: each store with its process (in queue
// mode each has its own), worst-case size and what a restart costs. Most are hints or caches (what
// must outlive a restart is in static data or the execution's data); three are duties, whose restart
// lines say what is lost: `resumingRuns`, `owedCompletions` and `seenDeliveryScopes`.

import { BoundedMap, BoundedSet } from './bounded';

/**
 * Every store, with what it holds and what a restart costs. The bound is written here only; each
 * store is made with `remembered(name)`. Stores that only live while a call runs (the forwarding
 * lanes of trigger/relay/lanes.ts) and per-context caches that n8n drops with the context
 * (WeakMaps in transport/index.ts and createAndWait.operation.ts) are not listed.
 */
export const PROCESS_MEMORY = {
	webhookCredentials: {
		process: 'every process that runs webhook calls (main, webhook processes)',
		size: '100 credential objects (a few hundred bytes each)',
		bound: 100,
		holds: 'the credential data webhook calls looked up in the last minute (transport/index.ts)',
		restart: 'one credential lookup per credential on the next webhook call',
	},
	seenDeliveryScopes: {
		process: 'where deliveries arrive (main; webhook processes in queue mode)',
		size: '200 × 1,000 keys of ~40 bytes: ~8 MB',
		bound: 200,
		holds:
			'per trigger registration, the keys of completions it accepted (each bounded by SEEN_LIMIT; trigger/deliveryChecks.ts)',
		restart:
			'none where the record is durable (static data); otherwise a duplicate of a delivery accepted before the restart starts one more execution',
	},
	firstHandledHere: {
		process: 'where deliveries arrive',
		size: '200 numbers',
		bound: 200,
		holds:
			'per trigger registration, when this process first handled one of its deliveries (trigger/deliveryChecks.ts)',
		restart: 'none (the several-processes warning starts counting again)',
	},
	warnedScopes: {
		process: 'where deliveries arrive',
		size: '200 short strings',
		bound: 200,
		holds:
			'registrations already warned that deliveries reach several processes (trigger/deliveryChecks.ts)',
		restart: 'the warning may be logged once more',
	},
	testEvents: {
		process: 'main (manual executions)',
		size: 'the items of 200 test deliveries',
		bound: 200,
		holds:
			"a test delivery's items, handed from webhook() to the manual execution's poll() (trigger/testEvents.ts)",
		restart: 'a test delivery in flight during the restart is not shown in the editor',
	},
	runOfTask: {
		process: 'where deliveries and announcements arrive, and main (the check)',
		size: '200,000 entries of ~150 bytes: ~30 MB',
		bound: 200_000,
		holds:
			'which waiting run each announced task belongs to, and one of its addresses (trigger/relay/knownRuns.ts)',
		restart: 'a task whose address a person replaced is routed by it until the run is known again',
	},
	runTasks: {
		process: 'where deliveries and announcements arrive, and main',
		size: '5,000 runs, 200,000 ids in all (a run has at most 60,000): ~10 MB at worst',
		bound: 5_000,
		holds: "each known run's task ids (trigger/relay/knownRuns.ts)",
		restart: "a completion for a finished run no longer known is not emitted (it may be the run's)",
	},
	answeredRunTasks: {
		process: 'where deliveries and announcements arrive, and main',
		size: '5,000 runs, 200,000 ids in all (a run has at most 60,000): ~10 MB at worst',
		bound: 5_000,
		holds:
			"each known run's task ids as the run itself answered them: only these keep a completion routed to a finished run by id alone from being emitted (trigger/relay/knownRuns.ts)",
		restart:
			'a completion whose address a person replaced, reaching its finished run by id, is emitted as an ordinary one',
	},
	waitingRuns: {
		process: 'where deliveries and announcements arrive, and main',
		size: '5,000 short strings',
		bound: 5_000,
		holds:
			"runs heard to wait on a queue and not seen to end, named when the queue's last trigger is deactivated (trigger/relay/knownRuns.ts)",
		restart: 'runs that waited before the restart are named once heard from again',
	},
	settledCompletions: {
		process: 'where deliveries arrive, and main (the check)',
		size: '10,000 keys: ~0.5 MB',
		bound: 10_000,
		holds:
			'completions whose forward was settled here, so a check does not pass them on again (trigger/relay/checkLostCompletions.ts)',
		restart:
			'the first check passes on again the completions after the point kept in static data: those of the last round before the restart, and those completed while n8n was down',
	},
	owedCompletions: {
		process: 'written where deliveries arrive, read by the check on main: apart in queue mode',
		size: '10,000 tasks with their data (a few KB each: tens of MB)',
		bound: 10_000,
		holds:
			'delivered completions no run could take yet: emitted if none takes them (trigger/relay/checkLostCompletions.ts)',
		restart: 'such a completion is passed on by the first check, not emitted if no run has it',
	},
	retryCompletions: {
		process: 'main (the check)',
		size: '10,000 tasks with their data',
		bound: 10_000,
		holds:
			'completions a check could not settle (n8n or the service unreachable), tried again next check (trigger/relay/checkLostCompletions.ts)',
		restart: 'none: the first check looks back 24 hours',
	},
	completionConsumers: {
		process: 'where deliveries and nudges arrive, and main (the check, the Poll Trigger)',
		size: '1,000 cursors, each with a place in the list and its turn in progress',
		bound: 1_000,
		holds:
			"per consumer of a queue's completions (a trigger's Catch Up, a listener, its check, a Poll Trigger), where it stands and the read in progress, so reads of one consumer run one at a time (helpers/reader.ts)",
		restart:
			'none: each consumer goes on from the cursor its static data (or the check record) holds; a backlog read looks for its place again',
	},
	lostCompletionRecords: {
		process: 'main (the check)',
		size: '200 short strings',
		bound: 200,
		holds:
			"the point each trigger's static data holds for its check, as this process last sent it (trigger/relay/checkLostCompletions.ts)",
		restart: 'the first check that moves sends it again',
	},
	heldCheckRecords: {
		process: 'where the address of the trigger is answered',
		size: '200 records of at most 1,000 ids',
		bound: 200,
		holds:
			"a check's record that waits for the trigger's next delivery that writes static data (trigger/relay/checkRecord.ts)",
		restart: 'the record is sent again by the first check that moves',
	},
	writingDeliveries: {
		process: 'where deliveries arrive',
		size: '200 counters',
		bound: 200,
		holds:
			'per trigger registration, deliveries under way that write static data, and when the last ended (trigger/relay/checkRecord.ts)',
		restart: 'none',
	},
	resumingRuns: {
		process: 'where waiting addresses are answered (main; webhook processes in queue mode)',
		size: '10,000 run ids',
		bound: 10_000,
		holds:
			'runs a call of this process resumed in the last minute: n8n 1.x starts a resume for each of several calls that arrive before the first is under way (waiting/resume.ts)',
		restart: 'none: a call arriving after the restart finds the run resumed (n8n answers it)',
	},
	liveTargets: {
		process: 'wherever the address of a listener is answered',
		size: '200 URLs',
		bound: 200,
		holds:
			"per trigger, the queue's live webhook target as a nudge to look last read it, so that callers cannot make it read more than once every 2 s (trigger/liveTarget.ts)",
		restart: "one read of the queue's webhook at the next nudge to look",
	},
	nudgesUnderWay: {
		process: 'where deliveries arrive (the holder of a queue)',
		size: '200 addresses with two promises',
		bound: 200,
		holds:
			'per listener address, the nudge under way and the one that follows it, shared by the deliveries that arrive meanwhile (trigger/holder.ts)',
		restart: 'none (nothing is under way in a process that restarted)',
	},
	freshRegistrations: {
		process: 'main (activation and the check)',
		size: '200 short strings',
		bound: 200,
		holds:
			'triggers registered by this process whose first Check for Lost Completions has not run: n8n 2.x runs it while activating, before it saves the registration, so it is left to the next round (trigger/webhookRegistration.ts)',
		restart: 'none: after a restart the registration is saved, and the first check runs',
	},
	queueAddressFields: {
		process: 'where deliveries arrive, and main',
		size: '200 small sets',
		bound: 200,
		holds:
			"per queue, its read-only text and link fields, where a completion's resume address can be (read again after a minute; trigger/relay/forward.ts)",
		restart: 'one read of the queue at its first completion that carries an address',
	},
	confirmationIndexes: {
		process: 'where waiting addresses are answered',
		size: '200 queues × 20,000 tasks with their data: 4 million tasks at worst',
		bound: 200,
		holds:
			'per queue, the completions the confirming reads listed (each at most 20,000; waiting/confirmation.ts)',
		restart: "the next confirming read of a queue goes down to its run's tasks' creation",
	},
	keptOutcomes: {
		process: 'where waiting addresses are answered',
		size: '100 runs, each with its completions (shared with the confirming index)',
		bound: 100,
		holds:
			'per run with Several People per Item, its last outcome and the generation of the list it was decided from: a call that finds the list unchanged reuses it (waiting/people/settle.ts)',
		restart: 'the next call of each run decides it again',
	},
	askedAgain: {
		process: 'where waiting addresses are answered',
		size: '10,000 short strings',
		bound: 10_000,
		holds:
			'further tasks this process created for an item of a waiting run (Several People per Item asking again), one per run, item and slot, claimed before the create so that calls at once do not ask twice (waiting/people/extraTasks.ts)',
		restart: 'a call after the restart that finds the slot unanswered asks once more (one task)',
	},
	progressLogged: {
		process: 'where waiting addresses are answered',
		size: '10,000 short strings',
		bound: 10_000,
		holds:
			'the last progress line logged for each waiting run with Several People per Item, so the log says each change once, not each call (waiting/resume.ts)',
		restart: "the first call after a restart logs the run's progress once more",
	},
	runDeadlines: {
		process: 'where runs answer forward calls or announce themselves, and main (the check)',
		size: '10,000 addresses with a time',
		bound: 10_000,
		holds:
			"waiting runs with a deadline (Several People per Item with Limit Wait Time), learnt from their answers and signed announcements: the trigger's check wakes each when its deadline has passed (trigger/relay/deadlines.ts)",
		restart:
			"none: the check's record keeps them (trigger/relay/checkRecord.ts) and its first round after the restart reads them back; a run nothing wakes is ended by n8n 5 minutes after its deadline, with the node's input (waiting/waitLimit.ts)",
	},
} as const satisfies Record<
	string,
	{ process: string; size: string; bound: number; holds: string; restart: string }
>;

export type StoreName = keyof typeof PROCESS_MEMORY;

const made: Array<Map<unknown, unknown> | Set<unknown>> = [];

export function rememberedMap<K, V>(name: StoreName): BoundedMap<K, V> {
	const store = new BoundedMap<K, V>(PROCESS_MEMORY[name].bound);
	made.push(store as Map<unknown, unknown>);
	return store;
}

export function rememberedSet<T>(name: StoreName): BoundedSet<T> {
	const store = new BoundedSet<T>(PROCESS_MEMORY[name].bound);
	made.push(store as Set<unknown>);
	return store;
}

/** Everything listed above forgotten, as after a restart of the process (tests). */
export function forgetAsAfterRestart(): void {
	for (const store of made) store.clear();
}
