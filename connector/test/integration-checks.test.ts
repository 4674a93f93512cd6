/**
 * Zapier's published integration checks that the definition alone decides (platform docs, "Integration check
 * reference"), re-checked here offline on the whole definition, because `zapier-platform validate` runs them only
 * on zapier.com:
 * - D002: the API key's help text links to where keys are made.
 * - D004: ID inputs are dynamic dropdowns (the exceptions, explained in README.md, are listed here with reasons).
 * - D008: no bare URL in help texts or descriptions: links are markdown links, examples are in backticks.
 * - D026: the Server URL is validated before any request (and the key never sent over plain http to another host).
 * - D028: input data is cleaned (`flags.cleanInputData`).
 * Plus the schema check (`validate`) and D021 (visible trigger descriptions start with "Triggers when").
 */
import { serverUrlOf } from '../src/client';
import { testAuth } from '../src/authentication';
import { App, appTester, thrown } from './helpers/app';
import { useNock } from './helpers/nock';

useNock(); // no request may leave: a rejected Server URL must stop before the network

interface Field {
  key: string;
  label?: string;
  helpText?: string;
  dynamic?: string;
}
interface Operation {
  key: string;
  display: { label: string; description: string; hidden?: boolean };
  operation: { inputFields?: unknown[] };
}

/** Every trigger, create and search of the app as [kind.key, definition]. */
function operations(): [string, Operation][] {
  const out: [string, Operation][] = [];
  for (const kind of ['triggers', 'creates', 'searches'] as const) {
    for (const [key, op] of Object.entries((App as unknown as Record<string, Record<string, Operation>>)[kind] ?? {})) out.push([`${kind}.${key}`, op]);
  }
  return out;
}

/** The static (non-function) input fields of an operation. */
function staticFields(op: Operation): Field[] {
  return (op.operation.inputFields ?? []).filter((f): f is Field => typeof f === 'object' && f !== null);
}

/** Text with markdown links and code spans removed: what is left must hold no URL (D008). */
function withoutLinksAndCode(text: string): string {
  return text.replace(/`[^`]*`/g, '').replace(/\[[^\]]*\]\((https?:\/\/[^)\s]+)\)/g, '');
}

/** ID inputs that stay free text, with the reason README.md gives for each remaining D004 warning. */
const ID_INPUTS_WITHOUT_DROPDOWN: Record<string, string> = {
  contact_id: 'contacts live in the customer\'s CRM, not in Stageline: there is nothing to list',
  short_id: 'Find Item by short ID takes the text users have (e.g. SALES-42 from an email); choosing from a list is what the Item ID input is for',
};

describe('integration checks decided by the definition', () => {
  test('schema validation passes (what zapier-platform validate checks offline)', async () => {
    // core's handler (untyped in its .d.ts): the same `validate` command the CLI sends
    const { createAppHandler } = require('zapier-platform-core') as { createAppHandler: (app: unknown) => (event: object) => Promise<{ results: unknown[] }> };
    const result = await createAppHandler(App)({ command: 'validate' });
    expect(result.results).toEqual([]);
  });

  test('D002: the API key help text links to the API Keys page of the console', () => {
    const apiKey = App.authentication!.fields!.find((f) => f.key === 'api_key')!;
    expect(apiKey.helpText).toMatch(/\[API Keys page\]\(https:\/\/[^)]+\/console\/api-keys\)/);
  });

  test('D008: no bare URL in any description or help text', () => {
    const texts: [string, string][] = [];
    for (const field of App.authentication!.fields!) if (field.helpText) texts.push([`authentication.${field.key}`, field.helpText]);
    for (const [where, op] of operations()) {
      texts.push([`${where}.description`, op.display.description]);
      for (const field of staticFields(op)) if (field.helpText) texts.push([`${where}.${field.key}`, field.helpText]);
    }
    for (const [where, so] of Object.entries(App.searchOrCreates ?? {})) texts.push([`searchOrCreates.${where}`, so.display.description ?? '']);
    const bare = texts.filter(([, text]) => /https?:\/\//i.test(withoutLinksAndCode(text))).map(([where]) => where);
    expect(bare).toEqual([]);
    expect(texts.length).toBeGreaterThan(40);
  });

  test('D004: every ID input is a dynamic dropdown, except the explained ones', () => {
    const missing: string[] = [];
    for (const [where, op] of operations()) {
      for (const field of staticFields(op)) {
        const looksLikeId = /_id$/.test(field.key) || /\bID$/.test(field.label ?? '');
        if (looksLikeId && !field.dynamic && !(field.key in ID_INPUTS_WITHOUT_DROPDOWN)) missing.push(`${where}.${field.key}`);
      }
    }
    expect(missing).toEqual([]);
  });

  test('D021: visible triggers say "Triggers when ..."', () => {
    for (const [where, op] of operations()) {
      if (where.startsWith('triggers.') && !op.display.hidden) expect([where, op.display.description]).toEqual([where, expect.stringMatching(/^Triggers when .+\.$/)]);
    }
  });

  test('D028: Zapier cleans input data before perform', () => {
    expect(App.flags).toMatchObject({ cleanInputData: true });
  });

  test('D026: the Server URL is validated; a bad one fails the connection test before any request', async () => {
    expect(serverUrlOf({ server_url: ' stageline.example.com/v1/ext/ ' })).toBe('https://stageline.example.com');
    expect(serverUrlOf({ server_url: 'http://localhost:3000' })).toBe('http://localhost:3000');
    expect(serverUrlOf({ server_url: 'http://127.0.0.1:8080/' })).toBe('http://127.0.0.1:8080');
    expect(() => serverUrlOf({ server_url: 'http://stageline.example.com' })).toThrow(/must start with https:\/\//);
    expect(() => serverUrlOf({ server_url: 'ftp://stageline.example.com' })).toThrow(/must start with https:\/\//);
    expect(() => serverUrlOf({ server_url: 'https://user:pw@stageline.example.com' })).toThrow(/user name or password/);
    expect(() => serverUrlOf({ server_url: 'https://stageline.example.com/?next=evil' })).toThrow(/query string or fragment/);
    expect(() => serverUrlOf({ server_url: 'https://stageline.example.com/#x' })).toThrow(/query string or fragment/);
    expect(() => serverUrlOf({ server_url: 'https://' })).toThrow(/not a valid URL/);

    // what the user typed is never echoed: a password, or a key pasted into the wrong field, would be kept in task history
    for (const secretive of ['http://admin:s3cret@stageline.example.com', 'ftp://admin:s3cret@x.example/?token=sl_abc',
      'https://stageline.example.com/?api_key=sl_abc', 'sl_abc def', 'http://x.example/#sl_abc']) {
      let message = '';
      try { serverUrlOf({ server_url: secretive }); } catch (e) { message = (e as Error).message; }
      expect(message).not.toBe('');
      expect(message).not.toMatch(/s3cret|sl_abc|admin/);
    }

    const error = await thrown(appTester(testAuth, { authData: { api_key: 'sl_x', server_url: 'http://stageline.example.com' } }));
    expect(error).toMatchObject({ code: 'InvalidServerUrl', status: 400 });
    expect(error.message).toContain('must start with https://');
  });
});
