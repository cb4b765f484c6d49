import type {
	INodeExecutionData,
	INodeType,
	INodeTypeDescription,
	IPollFunctions,
} from 'n8n-workflow';
import { NodeConnectionTypes } from 'n8n-workflow';

import { queueLocator } from './helpers/descriptions';
import { searchQueues } from './methods/listSearch';
import { pollCompletions } from './trigger/pollTrigger';

export class TaskQueuePollTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Task Queue Poll Trigger',
		name: 'taskQueuePollTrigger',
		icon: { light: 'file:../../icons/taskQueue.svg', dark: 'file:../../icons/taskQueue.dark.svg' },
		group: ['trigger'],
		version: 1,
		subtitle: '={{"Task completed"}}',
		description:
			'Starts the workflow for each task completed in a queue, by asking the service on a schedule (no webhook needed)',
		defaults: { name: 'Task Queue Poll Trigger' },
		polling: true,
		inputs: [],
		outputs: [NodeConnectionTypes.Main],
		credentials: [{ name: 'taskQueueApi', required: true }],
		properties: [
			{
				displayName:
					'Asks the service for completed tasks at each poll time and emits each new completion once, oldest first, including those completed while n8n was down. Use it when the service cannot reach n8n; otherwise the Task Queue Trigger reacts at once.',
				name: 'notice',
				type: 'notice',
				default: '',
			},
			queueLocator,
			{
				displayName: 'Options',
				name: 'options',
				type: 'collection',
				placeholder: 'Add Option',
				default: {},
				options: [
					{
						displayName: 'Include Existing',
						name: 'includeExisting',
						type: 'boolean',
						default: false,
						description:
							'Whether the first poll after activation emits every task completed so far. Off: it starts from the moment of activation.',
					},
					{
						displayName: 'Output Data Only',
						name: 'dataOnly',
						type: 'boolean',
						default: false,
						description:
							"Whether to output only the task's data (the values filled in) instead of the whole task",
					},
				],
			},
		],
	};

	methods = {
		listSearch: { searchQueues },
	};

	async poll(this: IPollFunctions): Promise<INodeExecutionData[][] | null> {
		return await pollCompletions.call(this);
	}
}
