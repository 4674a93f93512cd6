/**
 * The OAuth2 credential (`stageLineOAuth2Api`, issue 32) through n8n-core's real executor: with Authentication
 * OAuth2, the Stageline node and the Polling Trigger send `Authorization: Bearer <access token>` (n8n-core's
 * `requestOAuth2` signs the request) and no API key; a `401` with `WWW-Authenticate: Bearer error="invalid_token"`
 * makes n8n refresh the token at `<Base URL>/oauth/token` and the request is sent again with the new token; the
 * credential's hidden URLs follow the Base URL. Against the scripted Stageline (helpers/fake-stageline.ts).
 */
import { activePollingWorkflow, runStageline, type StagelineOAuthCredential } from './helpers/engine';
import { startFakeStageline, type FakeStageline } from './helpers/fake-stageline';
import { DEFAULT_OAUTH_SCOPES, StageLineOAuth2Api } from '../../n8n/credentials/StageLineOAuth2Api.credentials';

let api: FakeStageline;

/** A connected OAuth2 credential as n8n stores it after the authorization code flow with PKCE. */
const oauthCredential = (): StagelineOAuthCredential => ({
	baseUrl: api.url,
	oauth: {
		baseUrl: api.url,
		grantType: 'pkce',
		clientId: 'sl_app_n8n',
		clientSecret: '',
		authUrl: `${api.url}/oauth/auth`,
		accessTokenUrl: `${api.url}/oauth/token`,
		scope: DEFAULT_OAUTH_SCOPES,
		authentication: 'body',
		oauthTokenData: { access_token: 'at-1', refresh_token: 'rt-1', token_type: 'Bearer', expires_in: 3600, scope: DEFAULT_OAUTH_SCOPES },
	},
});
const PIPELINES = [{ id: 'p1', name: 'Sales', created_at: '2026-01-01T00:00:00Z' }];
const INVALID_TOKEN = {
	status: 401,
	body: { type: 'about:blank', title: 'Unauthorized', status: 401, detail: 'The access token expired.', code: 'invalid_token' },
	headers: { 'www-authenticate': 'Bearer error="invalid_token", error_description="The access token expired"' },
};

beforeAll(async () => {
	api = await startFakeStageline();
});
afterAll(() => api.close());
beforeEach(() => api.reset());
afterEach(() => expect(api.violations).toEqual([]));

it('the Stageline node with Authentication OAuth2 sends Authorization: Bearer <access token> and no API key', async () => {
	api.on('GET /v1/ext/pipelines', { body: PIPELINES });
	const result = await runStageline(oauthCredential(), { authentication: 'oAuth2', resource: 'pipeline', operation: 'getMany' });
	expect(result.error).toBeUndefined();
	expect(result.output).toEqual(PIPELINES);
	expect(api.requests).toHaveLength(1);
	expect(api.requests[0]!.headers.authorization).toBe('Bearer at-1');
	expect(api.requests[0]!.headers['x-api-key']).toBeUndefined();
});

it('with Authentication API Key (and on nodes saved before the option) it keeps sending the key', async () => {
	api.on('GET /v1/ext/pipelines', { body: PIPELINES });
	const both = { ...oauthCredential(), apiKey: 'sk_test' };
	await runStageline(both, { authentication: 'apiKey', resource: 'pipeline', operation: 'getMany' });
	await runStageline(both, { resource: 'pipeline', operation: 'getMany' });
	expect(api.requests.map((r) => [r.headers['x-api-key'], r.headers.authorization])).toEqual([
		['sk_test', undefined],
		['sk_test', undefined],
	]);
});

it('a 401 invalid_token makes n8n refresh the token at <Base URL>/oauth/token and the request is sent again with the new one', async () => {
	api.on('GET /v1/ext/pipelines', (req) => (req.headers.authorization === 'Bearer at-2' ? { body: PIPELINES } : INVALID_TOKEN));
	api.on('POST /oauth/token', { body: { access_token: 'at-2', refresh_token: 'rt-2', token_type: 'Bearer', expires_in: 3600 } });
	const credential = oauthCredential();
	const result = await runStageline(credential, { authentication: 'oAuth2', resource: 'pipeline', operation: 'getMany' });
	expect(result.error).toBeUndefined();
	expect(result.output).toEqual(PIPELINES);
	expect(api.requests.map((r) => `${r.method} ${r.path} ${r.headers.authorization ?? ''}`)).toEqual([
		'GET /v1/ext/pipelines Bearer at-1',
		'POST /oauth/token ',
		'GET /v1/ext/pipelines Bearer at-2',
	]);
	const refresh = new URLSearchParams(String(api.requests[1]!.body));
	expect(refresh.get('grant_type')).toBe('refresh_token');
	expect(refresh.get('refresh_token')).toBe('rt-1');
	// The rotated refresh token is what n8n keeps for the next refresh.
	expect(credential.oauth!.oauthTokenData).toMatchObject({ access_token: 'at-2', refresh_token: 'rt-2' });
});

it('the Polling Trigger with Authentication OAuth2 reads the events feed with the Bearer token', async () => {
	api.on('GET /v1/ext/events', { body: [] });
	const active = activePollingWorkflow(oauthCredential(), { authentication: 'oAuth2', events: ['item.created'] });
	expect(await active.poll()).toBeNull();
	expect(api.requests.length).toBeGreaterThan(0);
	for (const r of api.requests) {
		expect(r.headers.authorization).toBe('Bearer at-1');
		expect(r.headers['x-api-key']).toBeUndefined();
	}
});

describe('the credential type', () => {
	const type = new StageLineOAuth2Api();
	const property = (name: string) => type.properties.find((p) => p.name === name)!;
	/** Evaluates a hidden property's `={{ ... }}` default with `$self` (what n8n does with the credential's values). */
	const evaluate = (name: string, baseUrl: string): unknown => {
		const expression = String(property(name).default).replace(/^=\{\{\s*/, '').replace(/\s*\}\}$/, '');
		return new Function('$self', `return ${expression};`)({ baseUrl });
	};

	it('extends oAuth2Api with PKCE and takes its URLs from the Base URL', () => {
		expect(type.name).toBe('stageLineOAuth2Api');
		expect(type.extends).toEqual(['oAuth2Api']);
		expect(property('grantType')).toMatchObject({ type: 'hidden', default: 'pkce' });
		expect(property('scope').default).toBe('items:read items:write tasks:read tasks:write hooks:manage offline_access');
		for (const base of ['https://stageline.example.com', 'https://stageline.example.com/', 'stageline.example.com', ' https://stageline.example.com/v1/ext ']) {
			expect(evaluate('authUrl', base)).toBe('https://stageline.example.com/oauth/auth');
			expect(evaluate('accessTokenUrl', base)).toBe('https://stageline.example.com/oauth/token');
			expect(evaluate('authQueryParameters', base)).toBe('resource=https%3A%2F%2Fstageline.example.com%2Fv1%2Fext&prompt=consent');
		}
		expect(evaluate('accessTokenUrl', 'http://localhost:3000')).toBe('http://localhost:3000/oauth/token');
	});
});
