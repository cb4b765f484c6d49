import type {
	IDataObject,
	IExecuteFunctions,
	IPollFunctions,
	IRunExecutionData,
	IWebhookFunctions,
} from 'n8n-workflow';

// Everything the package reads of n8n that its typings do not promise on every version it supports
// (1.123.x and 2.41.x, checked in real n8n by the e2e suites). Each probe says which versions have
// it and what happens without it, so a new n8n release is this one file to read.

type SigningContext = IExecuteFunctions & {
	getSignedResumeUrl?: (parameters?: Record<string, string>) => string;
	setSignatureValidationRequired?: () => void;
};

/** `getSignedResumeUrl`: n8n 1.100 and later. Without it Create and Wait refuses to run (checked first). */
export function canSignResumeUrls(context: IExecuteFunctions): boolean {
	return typeof (context as SigningContext).getSignedResumeUrl === 'function';
}

/** n8n's resume URL of the waiting node with `query` added, signed with n8n's secret (`&signature=`). */
export function signedResumeUrl(context: IExecuteFunctions, query: Record<string, string>): string {
	const sign = (context as SigningContext).getSignedResumeUrl as (
		parameters?: Record<string, string>,
	) => string;
	return sign.call(context, query);
}

/**
 * `setSignatureValidationRequired`: n8n 1.x checks the signature of calls to a resume address only
 * when told. n8n 2.x checks by itself for a node whose saved operation is sendAndWait, and no longer
 * has the function (calling it would throw): nothing to do there.
 */
export function requireSignedCalls(context: IExecuteFunctions): void {
	const set = (context as SigningContext).setSignatureValidationRequired;
	if (typeof set === 'function') set.call(context);
}

/**
 * `evaluateExpression` on every context of n8n-core (the poll context's typings do not say so):
 * `$execution.resumeUrl` gives n8n's waiting-webhook base, `…/webhook-waiting`.
 */
export function waitingBaseUrl(context: object): string {
	const evaluate = (
		context as { evaluateExpression?: (expression: string, itemIndex: number) => unknown }
	).evaluateExpression;
	if (typeof evaluate !== 'function')
		throw new Error('this n8n does not tell its resume addresses');
	const resumeUrl = new URL(String(evaluate.call(context, '{{ $execution.resumeUrl }}', 0)));
	resumeUrl.search = '';
	resumeUrl.hash = '';
	return resumeUrl.toString().replace(/\/[^/]*$/, '');
}

/**
 * Whether n8n refuses a second resume of a waiting execution by itself: 2.x does (40 parallel calls
 * to a completed run's address resume it once in 2.41.1), 1.x does not (26 of 40 did in 1.123.81).
 * Told apart by the webhook context's `logHitlResponse`, which 2.x has and 1.123 does not.
 */
export function refusesSecondResume(context: IWebhookFunctions): boolean {
	return typeof (context as { logHitlResponse?: unknown }).logHitlResponse === 'function';
}

/** `getPollBudgetMs`: n8n 2.x tells a poll how long it may take; 1.x has no budget (undefined). */
export function pollBudgetMs(context: IPollFunctions): number | undefined {
	return typeof context.getPollBudgetMs === 'function' ? context.getPollBudgetMs() : undefined;
}

/** `getWorkflowSettings`: present in 1.123 and 2.41; an empty object where it is missing. */
export function workflowSettings(context: IExecuteFunctions): IDataObject {
	return (
		typeof context.getWorkflowSettings === 'function' ? context.getWorkflowSettings() : {}
	) as IDataObject;
}

/**
 * The node's context data of the waiting execution, in a call to its resume address. n8n-core keeps
 * the execution's stored data on the webhook context as the private `runExecutionData` (1.123 and
 * 2.41); undefined when it does not, and the run then matches its tasks by their addresses.
 */
export function waitingNodeContext(context: IWebhookFunctions): IDataObject | undefined {
	const data = (context as unknown as { runExecutionData?: IRunExecutionData | null })
		.runExecutionData;
	return data?.executionData?.contextData?.[`node:${context.getNode().name}`] as
		| IDataObject
		| undefined;
}
