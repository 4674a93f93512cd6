import type { ICredentialType, INodeProperties } from 'n8n-workflow';
import { BASE_URL_RULE } from './StagelineApi.credentials';

/** The Base URL as the nodes use it (https:// added when no scheme; trailing slashes and /v1/ext dropped), in a `$self` expression. */
const BASE = String.raw`(((s) => (/^[a-z][a-z0-9+.-]*:\/\//i.test(s) ? s : "https://" + s).replace(/\/+$/, "").replace(/\/v1\/ext$/, ""))(String($self["baseUrl"] ?? "").trim()))`;

/** The API scopes (CONTRACT "Scopes") and `offline_access` (a refresh token, so n8n renews the 1-hour access token). */
export const DEFAULT_OAUTH_SCOPES = 'items:read items:write tasks:read tasks:write hooks:manage offline_access';

/**
 * Credential type `stageLineOAuth2Api` (issue 32; CONTRACT "Connect with OAuth 2.1"): n8n's OAuth2 credential with
 * the authorization code flow and PKCE, against the Stageline server at Base URL: authorization at `/oauth/auth`,
 * tokens at `/oauth/token`, the access token bound to the REST API (`resource=<Base URL>/v1/ext`, RFC 8707), and
 * `prompt=consent` so that `offline_access` yields a refresh token (the server drops it otherwise). Register
 * the app in the Stageline console (Developer apps) with n8n's OAuth Redirect URL, then paste its client ID (and, for a
 * confidential app, its secret). n8n sends the access token as `Authorization: Bearer` and refreshes it itself.
 */
export class StageLineOAuth2Api implements ICredentialType {
	name = 'stageLineOAuth2Api';

	extends = ['oAuth2Api'];

	displayName = 'Stageline OAuth2 API';

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
			displayName: 'Base URL',
			name: 'baseUrl',
			type: 'string',
			required: true,
			default: 'https://api.stageline.dev',
			placeholder: 'https://stageline.example.com',
			description:
				'Address of your Stageline server. Must start with https:// (plain http:// only for localhost, e.g. http://localhost:3000).',
		},
		{
			displayName: 'Grant Type',
			name: 'grantType',
			type: 'hidden',
			default: 'pkce',
		},
		{
			displayName: 'Authorization URL',
			name: 'authUrl',
			type: 'hidden',
			default: `={{ ${BASE} + "/oauth/auth" }}`,
			required: true,
		},
		{
			displayName: 'Access Token URL',
			name: 'accessTokenUrl',
			type: 'hidden',
			default: `={{ ${BASE} + "/oauth/token" }}`,
			required: true,
		},
		{
			displayName: 'Scope',
			name: 'scope',
			type: 'string',
			default: DEFAULT_OAUTH_SCOPES,
			description:
				'Space-separated: items:read, items:write, tasks:read, tasks:write, hooks:manage (the triggers need it), and offline_access so n8n can refresh the token. You may untick scopes on the consent page.',
		},
		{
			displayName: 'Auth URI Query Parameters',
			name: 'authQueryParameters',
			type: 'hidden',
			// `prompt=consent`: the server issues a refresh token for `offline_access` only then (OpenID Connect Core 11).
			default: `={{ "resource=" + encodeURIComponent(${BASE} + "/v1/ext") + "&prompt=consent" }}`,
		},
		{
			displayName: 'Authentication',
			name: 'authentication',
			type: 'options',
			options: [
				{ name: 'Body (public app: client ID only)', value: 'body' },
				{ name: 'Header (confidential app: client ID and secret)', value: 'header' },
			],
			default: 'body',
			description:
				'How n8n sends the client credentials to the token endpoint: Body for an app registered as public (leave Client Secret empty), Header for a confidential one',
		},
	];
}
