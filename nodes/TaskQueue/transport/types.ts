import type {
	IDataObject,
	IExecuteFunctions,
	IHookFunctions,
	IHttpRequestMethods,
	ILoadOptionsFunctions,
	IPollFunctions,
	IWebhookFunctions,
} from 'n8n-workflow';

// The shapes every part of the transport shares: a request as the endpoints describe it, and the
// answer as the request loop hands it back.

export type TaskQueueContext =
	| IExecuteFunctions
	| ILoadOptionsFunctions
	| IHookFunctions
	| IPollFunctions
	| IWebhookFunctions;

export const CREDENTIAL_TYPE = 'taskQueueApi';

export interface TaskQueueCredentials {
	baseUrl: string;
	apiKey: string;
	/** While the key changes: the one used before, still accepted for what it signed (docs/operating.md). */
	previousApiKey: string;
	organizationId: number;
	apiPaths: 'queues' | 'workflows';
	ignoreSslIssues: boolean;
}

/**
 * How a failed request may be sent again.
 * - `idempotent`: reads and writes that give the same result twice (get, list, flush, set webhook).
 * - `ifNotProcessed`: creates; only where the service cannot have stored anything (429, 503 with
 *   Retry-After, connection refused), so a retry never creates a task twice.
 */
export type RetryMode = 'idempotent' | 'ifNotProcessed';

/** Told how each attempt went, to pace the requests that follow (helpers/concurrency.ts). */
export interface ConcurrencyFeedback {
	/** An attempt is being sent; returns its ticket. */
	sending(): number;
	/** Its answer came after `elapsedMs`; `overloaded`: 429, 503 or no connection. */
	answered(ticket: number, elapsedMs: number, overloaded: boolean): void;
}

export interface TaskQueueRequest {
	method: IHttpRequestMethods;
	/** Path below `/orgs/{organization}/{queues|workflows}`: '' lists queues, `/101/flush` flushes. */
	path: string;
	body?: IDataObject;
	qs?: IDataObject;
	retry: RetryMode;
	/** What the request does, for error messages: "create a task in queue 101". */
	action: string;
	itemIndex?: number;
	feedback?: ConcurrencyFeedback;
}

export interface TaskQueueResponse {
	statusCode: number;
	headers: Record<string, string | string[] | undefined>;
	body: unknown;
}
