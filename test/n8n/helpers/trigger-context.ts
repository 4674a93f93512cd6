/**
 * Hand-built n8n contexts for the Stageline Trigger's tests (as n8n's own HubspotTrigger.node.test.ts does): an
 * `IHookFunctions` for `webhookMethods.default.*` whose HTTP goes for real (fetch) to a Stageline server or a stand-in,
 * with the credential's `x-api-key` header; and an `IWebhookFunctions` for `webhook()` built from one delivery.
 */
import type { IDataObject, IHookFunctions, IHttpRequestOptions, IWebhookFunctions } from 'n8n-workflow';

/** What a hook context is made of. */
export interface HookSetup {
	baseUrl: string;
	apiKey: string;
	events: string[];
	webhookUrl: string;
	/** The filter parameters (pipelineId, stageId, changedFields); none when absent. */
	parameters?: Record<string, unknown>;
	/** The workflow's static data for this node (shared with the webhook context, as in n8n). */
	staticData: IDataObject;
}

const node = { id: 'trigger-1', name: 'Stageline Trigger', type: 'CUSTOM.stagelineTrigger', typeVersion: 1, position: [0, 0], parameters: {} };

/** n8n's `httpRequestWithAuthentication` for the transport: full response, no throw on HTTP errors, JSON parsed. */
async function request(setup: HookSetup, options: IHttpRequestOptions): Promise<{ statusCode: number; headers: Record<string, string>; body: unknown }> {
	const url = new URL(options.url);
	for (const [k, v] of Object.entries((options.qs ?? {}) as IDataObject)) url.searchParams.set(k, String(v));
	const res = await fetch(url, {
		method: options.method ?? 'GET',
		headers: {
			...(options.headers as Record<string, string>),
			'x-api-key': setup.apiKey,
			...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
		},
		body: options.body === undefined ? undefined : JSON.stringify(options.body),
	});
	const text = await res.text();
	let body: unknown = text;
	try {
		body = text === '' ? '' : JSON.parse(text);
	} catch {
		// keep the text
	}
	return { statusCode: res.status, headers: Object.fromEntries(res.headers.entries()), body };
}

/** An `IHookFunctions` as n8n hands it to `checkExists`, `create` and `delete`. */
export function hookContext(setup: HookSetup): IHookFunctions {
	const context = {
		getNode: () => node,
		getNodeParameter: (name: string, fallback?: unknown) => (name === 'events' ? setup.events : (setup.parameters?.[name] ?? fallback)),
		getNodeWebhookUrl: () => setup.webhookUrl,
		getWorkflowStaticData: () => setup.staticData,
		getCredentials: async () => ({ apiKey: setup.apiKey, baseUrl: setup.baseUrl }),
		helpers: {
			httpRequestWithAuthentication: (_type: string, options: IHttpRequestOptions) => request(setup, options),
		},
	};
	return context as unknown as IHookFunctions;
}

/** One delivery as n8n's webhook server hands it over: headers (lower-case), exact body bytes, parsed body. */
export interface IncomingDelivery {
	headers: Record<string, string>;
	rawBody: Buffer;
}

/** The answer `webhook()` wrote directly (401 or an ignored 200), if any. */
export interface WrittenResponse {
	status?: number;
	body?: unknown;
}

/** An `IWebhookFunctions` for one delivery; `written` receives what the node answered through the response object. */
export function webhookContext(
	delivery: IncomingDelivery,
	parameters: { events: string[]; pipelineId?: string },
	staticData: IDataObject,
	written: WrittenResponse,
): IWebhookFunctions {
	const response = {
		status(code: number) {
			written.status = code;
			return response;
		},
		json(body: unknown) {
			written.body = body;
			return response;
		},
	};
	const context = {
		getNode: () => node,
		getRequestObject: () => ({ rawBody: delivery.rawBody, headers: delivery.headers }),
		getHeaderData: () => delivery.headers,
		getBodyData: () => JSON.parse(delivery.rawBody.toString('utf8')) as IDataObject,
		getResponseObject: () => response,
		getWorkflowStaticData: () => staticData,
		getNodeParameter: (name: string, fallback?: unknown) => (parameters as Record<string, unknown>)[name] ?? fallback,
	};
	return context as unknown as IWebhookFunctions;
}
