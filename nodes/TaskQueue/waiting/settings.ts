import type { IExecuteFunctions, IWebhookFunctions } from 'n8n-workflow';

/** Values to Send as "Map Each Field Below" holds them (none when mapped from the input automatically). */
function valuesToSend(taskData: unknown): Record<string, unknown> {
	const { mappingMode, value } = (taskData ?? {}) as { mappingMode?: unknown; value?: unknown };
	return mappingMode === 'autoMapInputData' || !value || typeof value !== 'object'
		? {}
		: (value as Record<string, unknown>);
}

/** The fields given a value in Values to Send. */
export function mappedFields(taskData: unknown): Set<string> {
	return new Set(
		Object.entries(valuesToSend(taskData))
			.filter(([, v]) => v !== null && v !== undefined && v !== '')
			.map(([field]) => field),
	);
}

/** Every field listed in Values to Send, mapped or left empty: what the editor shows there. */
export function fieldsInValuesToSend(taskData: unknown): Set<string> {
	return new Set(Object.keys(valuesToSend(taskData)));
}

/** The parameters of Create and Wait that its webhook reads again when a completion comes back. */
export interface WaitSettings {
	resumeField: string;
	waitFor: 'all' | 'first';
	responseType: 'values' | 'approval';
	approvalField: string;
	approveOption: string;
	feedbackField: string;
	messageField: string;
	routeBack: 'trigger' | 'pollTrigger';
}

export function readWaitSettings(context: IExecuteFunctions | IWebhookFunctions): WaitSettings {
	const read = (name: string, fallback: string): string => {
		const value =
			'getInputData' in context
				? (context as IExecuteFunctions).getNodeParameter(name, 0, fallback)
				: (context as IWebhookFunctions).getNodeParameter(name, fallback);
		return typeof value === 'string' ? value.trim() : fallback;
	};
	return {
		resumeField: read('resumeField', ''),
		waitFor: read('waitFor', 'all') === 'first' ? 'first' : 'all',
		responseType: read('responseType', 'values') === 'approval' ? 'approval' : 'values',
		approvalField: read('approvalField', ''),
		approveOption: read('approveOption', ''),
		feedbackField: read('feedbackField', ''),
		messageField: read('messageField', ''),
		routeBack: read('options.routeBack', 'trigger') === 'pollTrigger' ? 'pollTrigger' : 'trigger',
	};
}
