import type {
	IAuthenticateGeneric,
	IAuthenticateRuleResponseCode,
	IAuthenticateRuleResponseSuccessBody,
	ICredentialTestRequest,
	ICredentialType,
	INodeProperties,
} from 'n8n-workflow';

/**
 * The base URL a credential test sends to when Base URL breaks the rule of `serverBaseUrl` (nodes/shared/server-url.ts):
 * a reserved `.invalid` host (RFC 6761), so the test fails at once, without a request, and the error names the fix.
 */
const REJECTED_URL = 'https://base-url-must-start-with-https.invalid';

/** The trimmed Base URL, in the test's expression. */
const RAW = 'String($credentials.baseUrl ?? "").trim()';

/** The Base URL with `https://` added when it has no scheme (as `serverBaseUrl` does). */
const WITH_SCHEME = `(/^[a-z][a-z0-9+.-]*:\\/\\//i.test(${RAW}) ? ${RAW} : "https://" + ${RAW})`;

/**
 * `serverBaseUrl`'s rule as two regular expressions: `https://` and a host without user info, or plain `http://` and
 * a loopback host; an optional port and path; no query string, no fragment, no spaces.
 */
const ALLOWED = [
	String.raw`/^https:\/\/[^\s\/?#@]+(\/[^\s?#]*)?$/i`,
	String.raw`/^http:\/\/(localhost|127(\.\d{1,3}){3}|\[::1\])(:\d+)?(\/[^\s?#]*)?$/i`,
];

/** The credential test's `baseURL` expression: the base URL the nodes would use, or REJECTED_URL. */
export const TEST_BASE_URL_EXPRESSION = `={{ (${ALLOWED.map((re) => `${re}.test(${WITH_SCHEME})`).join(' || ')}) ? ${WITH_SCHEME}.replace(/\\/+$/, "").replace(/\\/v1\\/ext$/, "") : "${REJECTED_URL}" }}`;

/** What the credential dialog says about Base URL (the rule of nodes/shared/server-url.ts). */
export const BASE_URL_RULE =
	'Base URL: https:// only (a missing scheme becomes https://; plain http:// only for localhost, 127.x.x.x or [::1]); no user name or password, query string or fragment. A trailing /v1/ext is ignored.';

/**
 * Credential type `stagelineApi` (issue 18; spec "Authentication"): an API key sent in the `x-api-key` header and the
 * Stageline server's base URL. The test calls GET /v1/ext/me (CONTRACT "Responses": Who am I); a 401 or 403 says to
 * make a new key on the console's API keys page. The base URL rule (https, plain http for localhost only, as the
 * Zapier connector's Server URL) is enforced by every node request (nodes/shared/server-url.ts); the test's
 * `baseURL` expression mirrors it (test/n8n/units.test.ts compares both on the same inputs), and a 200 whose body
 * has no `company.id` (not Stageline's Who am I) fails the test.
 */
export class StagelineApi implements ICredentialType {
	name = 'stagelineApi';

	displayName = 'Stageline API';

	icon = { light: 'file:../nodes/Stageline/stageline.svg', dark: 'file:../nodes/Stageline/stageline.dark.svg' } as const;

	documentationUrl = 'https://github.com/stageline/stageline/tree/main/n8n#credentials';

	properties: INodeProperties[] = [
		{
			displayName: BASE_URL_RULE,
			name: 'baseUrlNotice',
			type: 'notice',
			default: '',
		},
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
			baseURL: TEST_BASE_URL_EXPRESSION,
			url: '/v1/ext/me',
			headers: { accept: 'application/json' },
		},
		// n8n's type allows one kind of rule per test, but its credential tester reads both kinds from one list
		// (responseCode rules when the request fails, responseSuccessBody rules after a 2xx): see
		// n8n/dist/services/credentials-tester.service.js (2.41.1), `testCredentials`.
		rules: [
			{
				// a 200 without Stageline's Who am I body (another server, a proxy's page) fails the test
				type: 'responseSuccessBody',
				properties: {
					key: 'company.id',
					value: undefined,
					message:
						'The server at this Base URL answered, but not as a Stageline API. Enter the address of your Stageline server (e.g. https://stageline.example.com).',
				},
			},
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
		] as Array<IAuthenticateRuleResponseCode | IAuthenticateRuleResponseSuccessBody> as IAuthenticateRuleResponseCode[],
	};
}
