/**
 * nock for the unit tests: a scope for the fake server that only matches requests carrying the API key, and the
 * jest hooks every nock-based test file uses. Kept apart from app.ts so the live tests never load nock.
 */
import './core-http-patch'; // before nock: see there
import nock from 'nock';
import { API_KEY, SERVER } from './app';

/** nock scope for SERVER that only matches requests carrying the API key. */
export function api(): nock.Scope {
  return nock(SERVER, { reqheaders: { 'x-api-key': API_KEY } });
}

/**
 * Standard jest hooks for nock: no real network, every mocked request used, nothing left over. Each test file has
 * its own nock module (jest's registry) but they share Node's http, so a file restores its interceptor when done.
 */
export function useNock(): void {
  beforeAll(() => {
    if (!nock.isActive()) nock.activate();
    nock.disableNetConnect();
  });
  afterEach(() => {
    const pending = nock.pendingMocks();
    nock.cleanAll();
    expect(pending).toEqual([]);
  });
  afterAll(() => {
    nock.enableNetConnect();
    nock.restore();
  });
}
