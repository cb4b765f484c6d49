import type {
	AllEntities,
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
} from 'n8n-workflow';

import type { AdaptiveConcurrency } from '../helpers/concurrency';
import type { QueueConfigCache } from '../helpers/queueConfig';

/** Each resource's operations, by the values the editor saves: the router and the maps below are checked against it. */
export type NodeMap = {
	task: 'create' | 'getCompleted' | 'sendAndWait';
	queue: 'get' | 'getMany' | 'getInsights' | 'flush';
	webhook: 'get' | 'set' | 'remove';
};

export type TaskQueueType = AllEntities<NodeMap>;
export type TaskQueueResource = TaskQueueType['resource'];

/** A resource's operation files, by operation value: every operation of NodeMap, and no other. */
export type OperationsOf<R extends keyof NodeMap> = Record<NodeMap[R], TaskQueueOperation>;

/**
 * What one execution of the node shares between its items. An operation with a `prepare` step
 * extends it with what that step sets up (create.operation.ts: CreateState), and declares its
 * steps with that type.
 */
export interface ExecutionState {
	queues: QueueConfigCache;
	/** Set by an operation that paces its requests by the service's answers. */
	concurrency?: AdaptiveConcurrency;
}

/** One file per operation exports this shape (its state: ExecutionState or an extension of it). */
export interface TaskQueueOperation {
	description: INodeProperties[];
	/** Runs for one input item; its result becomes one output item per object. */
	execute(
		this: IExecuteFunctions,
		itemIndex: number,
		state: ExecutionState,
	): Promise<IDataObject | IDataObject[]>;
	/** Work done once for all items before any is executed (reading and checking parameters). */
	prepare?(this: IExecuteFunctions, itemCount: number, state: ExecutionState): Promise<void>;
	/** How many items may be in flight at once (default 1), asked again as items finish. */
	concurrency?(this: IExecuteFunctions, state: ExecutionState): number | (() => number);
	/** Turns the items' results into the node's output (default: all of them, in item order). */
	finish?(
		this: IExecuteFunctions,
		results: INodeExecutionData[][],
		state: ExecutionState,
	): Promise<INodeExecutionData[][]>;
}
