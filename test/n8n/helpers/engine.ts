/**
 * Runs the Stageline node inside n8n-core's real executor (N8N.md "Testing without the n8n server", level 2):
 * `WorkflowExecute.run` on a two-node workflow (an input node that emits the given items → Stageline), with a small
 * `INodeTypes`, a credentials helper that serves one `stagelineApi` credential and applies its generic
 * `x-api-key` header, and the n8n-core node contexts (`ExecuteContext`, `LoadOptionsContext`) doing the HTTP.
 * N8N_USER_FOLDER points at a temporary folder so n8n-core never writes ~/.n8n.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

process.env.N8N_USER_FOLDER ??= fs.mkdtempSync(path.join(os.tmpdir(), 'stageline-n8n-'));

import { ExecutionLifecycleHooks, LoadOptionsContext, PollContext, WorkflowExecute } from 'n8n-core';
import {
	ICredentialsHelper,
	NodeHelpers,
	Workflow,
	type ICredentialDataDecryptedObject,
	type ICredentials,
	type IDataObject,
	type IExecuteFunctions,
	type IHttpRequestOptions,
	type INode,
	type INodeExecutionData,
	type INodeParameters,
	type INodeProperties,
	type INodeType,
	type INodeTypes,
	type IRun,
	type IVersionedNodeType,
	type IWorkflowExecuteAdditionalData,
} from 'n8n-workflow';
import { StageLineOAuth2Api } from '../../../n8n/credentials/StageLineOAuth2Api.credentials';
import { StagelineApi } from '../../../n8n/credentials/StagelineApi.credentials';
import { Stageline } from '../../../n8n/nodes/Stageline/Stageline.node';
import { StagelinePollingTrigger } from '../../../n8n/nodes/StagelinePollingTrigger/StagelinePollingTrigger.node';

/** The credential values a run uses (`stagelineApi`). */
export interface StagelineCredential {
	apiKey: string;
	baseUrl: string;
}

/** The values of a run with Authentication OAuth2 (`stageLineOAuth2Api`); `apiKey` too when a test switches between both. */
export interface StagelineOAuthCredential {
	apiKey?: string;
	baseUrl: string;
	/**
	 * The values of a connected OAuth2 credential as n8n stores them (client, token URL, `oauthTokenData` with
	 * `access_token` and `refresh_token`); a token refresh replaces `oauthTokenData` here, as n8n's database would.
	 */
	oauth: IDataObject;
}

/** Either credential. */
export type AnyStagelineCredential = StagelineCredential | StagelineOAuthCredential;

/** The OAuth2 credential type's name (n8n/credentials/StageLineOAuth2Api.credentials.ts). */
export const OAUTH2_TYPE = new StageLineOAuth2Api().name;

/** A node that outputs the items of its `items` parameter (the workflow's start). */
class InputItems implements INodeType {
	description = {
		displayName: 'Input Items',
		name: 'inputItems',
		group: ['input'],
		version: 1,
		description: 'Emits the given items',
		defaults: { name: 'Input' },
		inputs: ['main'],
		outputs: ['main'],
		properties: [{ displayName: 'Items', name: 'items', type: 'json', default: '[]' }] as INodeProperties[],
	} as INodeType['description'];

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const raw = this.getNodeParameter('items', 0) as string | IDataObject[];
		const items = (typeof raw === 'string' ? JSON.parse(raw) : raw) as IDataObject[];
		return [items.map((json) => ({ json }))];
	}
}

/** The node types a test workflow may use. */
const NODE_TYPES: Record<string, INodeType> = {
	'n8n-nodes-stageline.stageline': new Stageline(),
	'n8n-nodes-stageline.stagelinePollingTrigger': new StagelinePollingTrigger(),
	'test.inputItems': new InputItems(),
};

export const nodeTypes: INodeTypes = {
	getByName: (name: string) => NODE_TYPES[name] as INodeType | IVersionedNodeType,
	getByNameAndVersion: (name: string, version?: number) => NodeHelpers.getVersionedNodeType(NODE_TYPES[name]!, version),
	getKnownTypes: () => ({}),
};

/**
 * Serves one credential: `stagelineApi` (`authenticate` applies the credential type's generic headers) or, with
 * `oauth`, `stageLineOAuth2Api`, whose parent type `oAuth2Api` sends n8n-core's requests through its OAuth2 path
 * (`requestOAuth2`: the Bearer header, token refresh).
 */
class TestCredentialsHelper extends ICredentialsHelper {
	constructor(private readonly credential: AnyStagelineCredential) {
		super();
	}
	getParentTypes(name: string): string[] {
		return name === OAUTH2_TYPE ? ['oAuth2Api'] : [];
	}
	isCredentialUsableByNode(): boolean {
		return true;
	}
	async authenticate(credentials: ICredentialDataDecryptedObject, _type: string, options: IHttpRequestOptions): Promise<IHttpRequestOptions> {
		const headers: Record<string, string> = {};
		const generic = new StagelineApi().authenticate.properties.headers ?? {};
		for (const [name, template] of Object.entries(generic)) {
			headers[name] = String(template).replace(/^=\{\{\s*\$credentials\.(\w+)\s*\}\}$/, (_m, key: string) => String(credentials[key] ?? ''));
		}
		return { ...options, headers: { ...options.headers, ...headers } };
	}
	async preAuthentication(): Promise<undefined> {
		return undefined;
	}
	async runPreAuthentication(): Promise<undefined> {
		return undefined;
	}
	async getCredentials(): Promise<ICredentials> {
		throw new Error('not used by these tests');
	}
	async getDecrypted(_data: unknown, _node: unknown, type: string): Promise<ICredentialDataDecryptedObject> {
		const { oauth, ...rest } = this.credential as StagelineOAuthCredential;
		return type === OAUTH2_TYPE ? { baseUrl: rest.baseUrl, ...structuredClone(oauth ?? {}) } : { ...rest };
	}
	async updateCredentials(): Promise<void> {}
	async updateCredentialsOauthTokenData(_node: unknown, _type: string, data: ICredentialDataDecryptedObject): Promise<void> {
		const credential = this.credential as StagelineOAuthCredential;
		credential.oauth = { ...credential.oauth, oauthTokenData: data.oauthTokenData as IDataObject };
	}
	getCredentialsProperties(type: string): INodeProperties[] {
		return type === OAUTH2_TYPE ? new StageLineOAuth2Api().properties : new StagelineApi().properties;
	}
}

/** Additional data for one run (`runStageline` adds the lifecycle hooks n8n-core requires). */
export function additionalDataFor(credential: AnyStagelineCredential, executionId = 'exec-1'): IWorkflowExecuteAdditionalData {
	return {
		credentialsHelper: new TestCredentialsHelper(credential),
		executeWorkflow: async () => {
			throw new Error('sub-workflows are not used');
		},
		getRunExecutionData: async () => undefined,
		getRuntimeCredential: async () => undefined,
		executionId,
		currentNodeExecutionIndex: 0,
		restApiUrl: 'http://127.0.0.1/rest',
		instanceBaseUrl: 'http://127.0.0.1/',
		formBaseUrl: 'http://127.0.0.1/formBaseUrl',
		formWaitingBaseUrl: 'http://127.0.0.1/formWaitingBaseUrl',
		formTestBaseUrl: 'http://127.0.0.1/formTestBaseUrl',
		webhookBaseUrl: 'http://127.0.0.1/webhookBaseUrl',
		webhookWaitingBaseUrl: 'http://127.0.0.1/webhookWaitingBaseUrl',
		webhookTestBaseUrl: 'http://127.0.0.1/webhookTestBaseUrl',
		mcpBaseUrl: 'http://127.0.0.1/mcpBaseUrl',
		mcpTestBaseUrl: 'http://127.0.0.1/mcpTestBaseUrl',
		variables: {},
		userId: 'test-user',
	} as unknown as IWorkflowExecuteAdditionalData;
}

/** The Stageline node of a test workflow with `parameters`. */
export function stagelineNode(parameters: INodeParameters, options: RunOptions = {}): INode {
	return {
		id: 'node-stageline-1',
		name: 'Stageline',
		type: 'n8n-nodes-stageline.stageline',
		typeVersion: 1,
		position: [200, 0],
		parameters,
		credentials: { stagelineApi: { id: 'cred-1', name: 'Stageline account' }, [OAUTH2_TYPE]: { id: 'cred-2', name: 'Stageline OAuth2 account' } },
		...(options.continueOnFail ? { onError: 'continueRegularOutput' as const, continueOnFail: true } : {}),
		...(options.onError ? { onError: options.onError } : {}),
		...(options.retryOnFail ? { retryOnFail: true, maxTries: 2, waitBetweenTries: 0 } : {}),
	};
}

/** How a test runs the node: its input items and node settings. */
export interface RunOptions {
	inputItems?: IDataObject[];
	/** Items of a second input node run after the first (Input → Input 2 → Stageline): the node then runs twice. */
	secondInputItems?: IDataObject[];
	continueOnFail?: boolean;
	onError?: 'continueRegularOutput' | 'continueErrorOutput';
	retryOnFail?: boolean;
	executionId?: string;
	/** The workflow's time zone (Settings → Timezone). */
	timezone?: string;
}

/** A workflow Input → Stageline (and Input → Input 2 → Stageline when `secondInputItems` is given). */
export function workflowOf(node: INode, inputItems: IDataObject[] = [{}], options: RunOptions = {}): Workflow {
	const input: INode = {
		id: 'node-input-1',
		name: 'Input',
		type: 'test.inputItems',
		typeVersion: 1,
		position: [0, 0],
		parameters: { items: JSON.stringify(inputItems) },
	};
	const nodes = [input, node];
	const connections: Record<string, { main: Array<Array<{ node: string; type: 'main'; index: number }>> }> = {
		Input: { main: [[{ node: node.name, type: 'main', index: 0 }]] },
	};
	if (options.secondInputItems !== undefined) {
		nodes.push({ ...input, id: 'node-input-2', name: 'Input 2', position: [0, 200], parameters: { items: JSON.stringify(options.secondInputItems) } });
		connections.Input!.main[0]!.push({ node: 'Input 2', type: 'main', index: 0 });
		connections['Input 2'] = { main: [[{ node: node.name, type: 'main', index: 0 }]] };
	}
	return new Workflow({
		id: 'wf-1',
		name: 'Stageline test',
		nodes,
		connections,
		active: false,
		nodeTypes,
		settings: { executionOrder: 'v1', ...(options.timezone ? { timezone: options.timezone } : {}) },
	});
}

/** What a run of the Stageline node gave: its output items' JSON, or the error that stopped the workflow. */
export interface NodeRun {
	output: IDataObject[];
	/** The error output's items (On Error → Continue (using error output)). */
	errorOutput: IDataObject[];
	error?: { message: string; description?: string | null; httpCode?: string | null; name?: string };
	run: IRun;
}

/**
 * Runs Input → Stageline through `WorkflowExecute` and returns the Stageline node's output (first run, main output 0)
 * or the workflow's error.
 */
export async function runStageline(
	credential: AnyStagelineCredential,
	parameters: INodeParameters,
	options: RunOptions = {},
): Promise<NodeRun> {
	const node = stagelineNode(parameters, options);
	const workflow = workflowOf(node, options.inputItems, options);
	const executionId = options.executionId ?? 'exec-1';
	const additionalData = additionalDataFor(credential, executionId);
	additionalData.hooks = manualHooks(workflow, executionId);
	const execute = new WorkflowExecute(additionalData, 'manual');
	const run = await execute.run({ workflow, startNode: workflow.getNode('Input')! });
	const taskData = run.data.resultData.runData.Stageline?.[0];
	const output = (taskData?.data?.main?.[0] ?? []).map((item) => item.json);
	const errorOutput = (taskData?.data?.main?.[1] ?? []).map((item) => item.json);
	const error = run.data.resultData.error as NodeRun['error'] | undefined;
	return { output, errorOutput, error, run };
}

/** An ExecutionLifecycleHooks for a manual run of `workflow` (n8n-core requires one). */
function manualHooks(workflow: Workflow, executionId: string): ExecutionLifecycleHooks {
	return new ExecutionLifecycleHooks('manual', executionId, {
		id: workflow.id,
		name: workflow.name ?? 'test',
		active: false,
		isArchived: false,
		createdAt: new Date(),
		updatedAt: new Date(),
		nodes: Object.values(workflow.nodes),
		connections: workflow.connectionsBySourceNode,
		activeVersionId: null,
	});
}

/** The name of the Stageline Polling Trigger node in test workflows. */
export const POLLING_TRIGGER_NAME = 'Stageline Polling Trigger';

/**
 * An active workflow with one Stageline Polling Trigger (`parameters`), as n8n keeps it between polls: its static
 * data lives on the Workflow, `poll()` runs each tick in a fresh n8n-core PollContext (mode `trigger`, as n8n's
 * poll scheduler runs it), and `staticData()` shows the node's static data (the cursor).
 */
export function activePollingWorkflow(credential: AnyStagelineCredential, parameters: INodeParameters) {
	const node: INode = {
		id: 'node-polling-1',
		name: POLLING_TRIGGER_NAME,
		type: 'n8n-nodes-stageline.stagelinePollingTrigger',
		typeVersion: 1,
		position: [0, 0],
		parameters,
		credentials: { stagelineApi: { id: 'cred-1', name: 'Stageline account' }, [OAUTH2_TYPE]: { id: 'cred-2', name: 'Stageline OAuth2 account' } },
	};
	const workflow = new Workflow({ id: 'wf-poll', name: 'Polling test', nodes: [node], connections: {}, active: true, nodeTypes, staticData: {}, settings: { executionOrder: 'v1' } });
	const nodeType = NODE_TYPES[node.type]!;
	return {
		workflow,
		/** One poll: the items it emits (main output 0), or null. */
		async poll(): Promise<IDataObject[] | null> {
			const context = new PollContext(workflow, node, additionalDataFor(credential), 'trigger', 'activate');
			const result = await nodeType.poll!.call(context);
			return result === null ? null : (result[0] ?? []).map((item) => item.json);
		},
		staticData: () => workflow.getStaticData('node', node),
		/** Replaces a member of the node's static data (e.g. an expired cursor). */
		setStatic(name: string, value: unknown) {
			(workflow.getStaticData('node', node) as IDataObject)[name] = value as IDataObject[string];
		},
	};
}

/**
 * "Fetch Test Event" of a Stageline Polling Trigger with `parameters`: a manual run through WorkflowExecute.
 * @returns the trigger's output items, or the error that stopped the run.
 */
export async function fetchTestEvent(credential: AnyStagelineCredential, parameters: INodeParameters): Promise<{ output: IDataObject[]; error?: { message: string; description?: string | null } }> {
	const { workflow } = activePollingWorkflow(credential, parameters);
	const additionalData = additionalDataFor(credential, 'exec-manual-poll');
	additionalData.hooks = manualHooks(workflow, 'exec-manual-poll');
	const run = await new WorkflowExecute(additionalData, 'manual').run({ workflow, startNode: workflow.getNode(POLLING_TRIGGER_NAME)! });
	const taskData = run.data.resultData.runData[POLLING_TRIGGER_NAME]?.[0];
	return {
		output: (taskData?.data?.main?.[0] ?? []).map((item) => item.json),
		error: run.data.resultData.error as { message: string; description?: string | null } | undefined,
	};
}

/** A LoadOptionsContext of the Stageline node with `parameters` (what the editor sends for dropdowns and pickers). */
export function loadOptionsContext(credential: AnyStagelineCredential, parameters: INodeParameters, path = 'parameters'): LoadOptionsContext {
	const node = stagelineNode(parameters);
	const workflow = workflowOf(node);
	const additionalData = additionalDataFor(credential);
	additionalData.currentNodeParameters = parameters;
	return new LoadOptionsContext(workflow, node, additionalData, path);
}
