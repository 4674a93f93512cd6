/**
 * The two ways a Stageline node authenticates (issue 32): an API key (`stagelineApi`, the `x-api-key` header) or OAuth2
 * (`stageLineOAuth2Api`, `Authorization: Bearer`, refreshed by n8n). Every node offers the same Authentication
 * option; a node saved before it existed has no value and keeps using its API key.
 */
import type { INodeCredentialDescription, INodeProperties } from 'n8n-workflow';

/** The API-key credential type's name. */
export const API_KEY_CREDENTIAL = 'stagelineApi';
/** The OAuth2 credential type's name. */
// eslint-disable-next-line @n8n/community-nodes/no-hardcoded-secrets -- a credential type's name, not a secret
export const OAUTH2_CREDENTIAL = 'stageLineOAuth2Api';

/** The node property "Authentication". */
export const AUTHENTICATION_PROPERTY: INodeProperties = {
	displayName: 'Authentication',
	name: 'authentication',
	type: 'options',
	options: [
		{ name: 'API Key', value: 'apiKey' },
		{ name: 'OAuth2', value: 'oAuth2' },
	],
	default: 'apiKey',
};

/**
 * The nodes' `credentials`: the one matching Authentication is shown and required. The API key's is hidden for OAuth2
 * rather than shown for API Key, so that parameters without an Authentication value (nodes saved before the option,
 * parameter lists that leave defaults out) still find it.
 */
export const NODE_CREDENTIALS: INodeCredentialDescription[] = [
	{ name: API_KEY_CREDENTIAL, required: true, displayOptions: { hide: { authentication: ['oAuth2'] } } },
	{ name: OAUTH2_CREDENTIAL, required: true, displayOptions: { show: { authentication: ['oAuth2'] } } },
];

/** What a node context needs to say which credential it uses. */
interface WithParameters {
	getNodeParameter: (...args: never[]) => unknown;
	getInputData?: unknown;
}

/**
 * The credential type of the node `context` runs for: `stageLineOAuth2Api` when Authentication is OAuth2, else
 * `stagelineApi` (also when the node has no Authentication value: nodes saved before the option existed).
 */
export function credentialTypeOf(context: WithParameters): string {
	// Only an execute context takes an item index; the others (hooks, webhooks, polls, load options) take a fallback.
	const read = context.getNodeParameter as unknown as (...args: unknown[]) => unknown;
	let value: unknown;
	try {
		value = 'getInputData' in context && typeof context.getInputData === 'function' ? read.call(context, 'authentication', 0, 'apiKey') : read.call(context, 'authentication', 'apiKey');
	} catch {
		value = 'apiKey';
	}
	return value === 'oAuth2' ? OAUTH2_CREDENTIAL : API_KEY_CREDENTIAL;
}
