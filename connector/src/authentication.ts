/**
 * Custom (API key) authentication (spec "Authentication"; CONTRACT "Responses": GET /v1/ext/me for the test and the
 * connection label). The key travels in `x-api-key` (added by middleware.ts); "Server URL" serves self-hosted
 * installs and defaults to the hosted API.
 */
import type { Authentication, Bundle, ZObject } from 'zapier-platform-core';
import type { Me } from '@stageline/shared';
import { DEFAULT_SERVER_URL, apiPath, getJson } from './client';
import { API_KEYS_LOCATION } from './problem-messages';

/** The console page where keys are created (the Stageline console lives at `<server>/console/`). */
export const API_KEYS_PAGE_PATH = '/console/api-keys';

/** The API Keys page of the hosted service, linked from the API key's help text (integration check D002). */
export const API_KEYS_PAGE_URL = `${DEFAULT_SERVER_URL}${API_KEYS_PAGE_PATH}`;

/**
 * The connection test: GET /v1/ext/me. Any valid key passes (no scope needed); 401/402 become the messages of
 * middleware.ts. The result (company and key) feeds the connection label.
 */
export async function testAuth(z: ZObject, _bundle: Bundle): Promise<Me> {
  return getJson<Me>(z, apiPath('me'));
}

/**
 * The connection label, e.g. "Acme Corp (Zapier key)": the company and key names from the test result. A string
 * template (not a function) so `zapier-platform invoke auth label` can render it locally too.
 */
export const CONNECTION_LABEL = '{{bundle.inputData.company.name}} ({{bundle.inputData.key.name}})';

const authentication: Authentication = {
  type: 'custom',
  fields: [
    {
      key: 'api_key',
      label: 'API Key',
      type: 'password',
      required: true,
      helpText: `Create a key on the [API Keys page](${API_KEYS_PAGE_URL}) of the Stageline console (${API_KEYS_LOCATION}; on a self-hosted server the page is \`${API_KEYS_PAGE_PATH}\` under your Server URL) and paste it here. The key is shown only once, when it is created. New keys have every scope this integration needs.`,
    },
    {
      key: 'server_url',
      label: 'Server URL',
      type: 'string',
      required: false,
      placeholder: DEFAULT_SERVER_URL,
      isNoSecret: true,
      helpText: `Only for self-hosted Stageline: the address of your server, e.g. \`https://stageline.example.com\` (https only). Leave empty to use [Stageline's hosted service](${DEFAULT_SERVER_URL}). The address is checked before any request, and the key is only ever sent to it.`,
    },
  ],
  test: testAuth,
  connectionLabel: CONNECTION_LABEL,
};

export default authentication;
