import { CONNECTION_LABEL, testAuth } from '../src/authentication';
import { DEFAULT_SERVER_URL } from '../src/client';
import { API_KEY, App, ME, SERVER, appTester, authData, thrown } from './helpers/app';
import { api, useNock } from './helpers/nock';
import nock from 'nock';

useNock();

/** Renders a `{{a.b.c}}` connection-label template the way Zapier does: the test result is `bundle.inputData`. */
function renderLabel(template: string, context: Record<string, unknown>): string {
  return template.replace(/{{\s*([\w.]+)\s*}}/g, (_m, path: string) => {
    const value = path.split('.').reduce<unknown>((obj, key) => (obj as Record<string, unknown> | undefined)?.[key], context);
    if (value === undefined) throw new Error(`label path ${path} is not in the test result`);
    return String(value);
  });
}

describe('connecting a Stageline account', () => {
  test('the connection test reads GET /v1/ext/me with the API key and returns the company and key', async () => {
    api().get('/v1/ext/me').reply(200, ME);
    const result = await appTester(testAuth, { authData });
    expect(result).toEqual(ME);
  });

  test('the connection label names the company and the key', async () => {
    api().get('/v1/ext/me').reply(200, ME);
    const result = await appTester(testAuth, { authData });
    expect(App.authentication!.connectionLabel).toBe(CONNECTION_LABEL);
    expect(renderLabel(CONNECTION_LABEL, { bundle: { inputData: result, authData } })).toBe('Acme Corp (Zapier key)');
  });

  test('a wrong key is reported as an authentication error that says where to create a key', async () => {
    api()
      .get('/v1/ext/me')
      .reply(401, { type: 'x', title: 'Invalid API key', status: 401, detail: 'The API key is not valid.', code: 'invalid_api_key' }, {
        'content-type': 'application/problem+json',
      });
    const error = await thrown(appTester(testAuth, { authData }));
    expect(error.code).toBe('AuthenticationError');
    expect(error.status).toBe(401);
    expect(error.message).toContain('The API key is not valid.');
    expect(error.message).toContain('Company Settings → API Keys');
  });

  test('the hosted API is used when Server URL is left empty', async () => {
    nock(DEFAULT_SERVER_URL, { reqheaders: { 'x-api-key': API_KEY } }).get('/v1/ext/me').reply(200, ME);
    await appTester(testAuth, { authData: { api_key: API_KEY, server_url: '' } });
  });

  test('a self-hosted Server URL is respected, with or without a trailing slash, scheme or /v1/ext', async () => {
    for (const serverUrl of [`${SERVER}/`, 'stageline.test', `${SERVER}/v1/ext/`, `  ${SERVER}  `]) {
      api().get('/v1/ext/me').reply(200, ME);
      await appTester(testAuth, { authData: { api_key: API_KEY, server_url: serverUrl } });
    }
  });

  test('a Server URL under a path prefix keeps the prefix', async () => {
    nock('https://tools.example', { reqheaders: { 'x-api-key': API_KEY } }).get('/stageline/v1/ext/me').reply(200, ME);
    await appTester(testAuth, { authData: { api_key: API_KEY, server_url: 'https://tools.example/stageline/' } });
  });

  test('a Server URL that is not a web address gets a clear message', async () => {
    const error = await thrown(appTester(testAuth, { authData: { api_key: API_KEY, server_url: 'ftp://files.example' } }));
    expect(error.message).toMatch(/Server URL ftp:\/\/files.example must start with https:\/\//);
  });

  test('the API key is sent in x-api-key on every request to the server, and to no other host', async () => {
    api().get('/v1/ext/pipelines').reply(200, []);
    nock('https://elsewhere.example', { badheaders: ['x-api-key'] }).get('/file').reply(200, {});
    await appTester(
      async (z) => {
        await z.request({ url: '/v1/ext/pipelines' });
        await z.request({ url: 'https://elsewhere.example/file' });
        return null;
      },
      { authData },
    );
  });
});
