import type {
	IAuthenticateGeneric,
	ICredentialTestRequest,
	ICredentialType,
	INodeProperties,
} from 'n8n-workflow';

/**
 * The base URL a credential test sends to when Base URL breaks the rule of `serverBaseUrl` (nodes/shared/server-url.ts):
 * a reserved `.invalid` host (RFC 6761), so the test fails at once, without a request, and the error names the fix.
 */
const REJECTED_URL = 'https://base-url-must-start-with-https.invalid';

/**
 * Credential type `stagelineApi` (issue 18; spec "Authentication"): an API key sent in the `x-api-key` header and the
 * Stageline server's base URL. The test calls GET /v1/ext/me (CONTRACT "Responses": Who am I); a 401 or 403 says to
 * make a new key on the console's API keys page. The base URL rule (https, plain http for localhost only, as the
 * Zapier connector's Server URL) is enforced by every node request (nodes/shared/server-url.ts); the test's
 * `baseURL` expression mirrors it.
 */
export class StagelineApi implements ICredentialType {
	name = 'stagelineApi';

	displayName = 'Stageline API';

	icon = { light: 'file:../nodes/Stageline/stageline.svg', dark: 'file:../nodes/Stageline/stageline.dark.svg' } as const;

	documentationUrl = 'https://github.com/stageline/stageline/tree/main/n8n#credentials';

	properties: INodeProperties[] = [
		{
			displayName: 'API Key',
			name: 'apiKey',
			type: 'string',
			typeOptions: { password: true },
			required: true,
			default: '',
			description:
				'A Stageline API key. Create one in the Stageline console under Company Settings → API Keys (owners and admins).',
		},
		{
			displayName: 'Base URL',
			name: 'baseUrl',
			type: 'string',
			required: true,
			default: 'https://api.stageline.dev',
			placeholder: 'https://stageline.example.com',
			description:
				'Address of your Stageline server. Must start with https:// (plain http:// only for localhost, e.g. http://localhost:3000).',
		},
	];

	authenticate: IAuthenticateGeneric = {
		type: 'generic',
		properties: {
			headers: {
				'x-api-key': '={{$credentials.apiKey}}',
			},
		},
	};

	test: ICredentialTestRequest = {
		request: {
			baseURL: `={{ (/^https:\\/\\/[^\\s/?#@]+/i.test(String($credentials.baseUrl).trim()) || /^http:\\/\\/(localhost|127(\\.\\d{1,3}){3}|\\[::1\\])(:\\d+)?(\\/|$)/i.test(String($credentials.baseUrl).trim())) ? String($credentials.baseUrl).trim().replace(/\\/+$/, '').replace(/\\/v1\\/ext$/, '') : '${REJECTED_URL}' }}`,
			url: '/v1/ext/me',
			headers: { accept: 'application/json' },
		},
		rules: [
			{
				type: 'responseCode',
				properties: {
					value: 401,
					message:
						'Stageline did not accept the API key (it is missing, wrong, revoked or expired). Create a new key in the Stageline console under Company Settings → API Keys and paste it here.',
				},
			},
			{
				type: 'responseCode',
				properties: {
					value: 402,
					message:
						"Your company's Stageline subscription is not active, so the API is unavailable. Ask a Stageline admin of your company to reactivate it.",
				},
			},
			{
				type: 'responseCode',
				properties: {
					value: 404,
					message:
						'No Stageline API at this Base URL. Enter the address of your Stageline server only (e.g. https://stageline.example.com), without /v1/ext.',
				},
			},
		],
	};
}
