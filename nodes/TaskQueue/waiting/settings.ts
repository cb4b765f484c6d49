import type { IExecuteFunctions, IWebhookFunctions } from 'n8n-workflow';

/** Field kinds that can carry a resume address: free text, or a link (n8n's address is a URL). */
export const RESUME_FIELD_KINDS = new Set(['text', 'link']);

/** The fields "Map Each Field Below" gives a value (none when the values are mapped from the input automatically). */
export function mappedFields(taskData: unknown): Set<string> {
	const { mappingMode, value } = (taskData ?? {}) as { mappingMode?: unknown; value?: unknown };
	if (mappingMode === 'autoMapInputData' || !value || typeof value !== 'object') return new Set();
	return new Set(Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== null && v !== undefined && v !== '').map(([field]) => field));
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
