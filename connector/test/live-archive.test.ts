/**
 * Archived pipelines against a REAL server (CONTRACT "Pipelines, blueprints, transitions": an archived pipeline
 * leaves every dropdown; creating an item in it is 422 `pipeline_archived`). Every Pipeline dropdown of the
 * integration is the hidden trigger `pipeline_list` (GET /v1/ext/pipelines); this checks that it no longer offers
 * an archived pipeline, offers it again once restored, and that Create Item explains the 422.
 */
import fs from 'node:fs';
import path from 'node:path';
import { perform as createItem } from '../src/creates/create-item';
import { listPipelines } from '../src/triggers/pipeline-list';
import { listStages } from '../src/triggers/stage-list';
import { App, appTester, thrown } from './helpers/app';
import { runAdminCli, startLiveServer, type LiveServer } from './helpers/live-server';

let server: LiveServer;
let authData: { api_key: string; server_url: string };

/** Runs the admin CLI with `--json` against the live server's database; fails with its output unless it exits 0. */
function admin(args: string[]): any {
  const run = runAdminCli(server, [...args, '--json']);
  if (run.status !== 0) throw new Error(`admin ${args.join(' ')} exited ${run.status}: ${run.stderr}${run.stdout}`);
  return JSON.parse(run.stdout);
}

beforeAll(async () => {
  server = await startLiveServer();
  authData = { api_key: server.apiKey, server_url: server.url };
}, 120_000);

afterAll(async () => {
  await server?.stop();
});

test('every Pipeline dropdown of the integration is the pipeline_list trigger', () => {
  const pipelineInputs: unknown[] = [];
  for (const group of [App.creates, App.searches, App.triggers] as Record<string, { operation: { inputFields?: unknown } }>[]) {
    for (const entry of Object.values(group)) {
      const fields = entry.operation.inputFields;
      if (!Array.isArray(fields)) continue;
      for (const field of fields) if ((field as { key?: string }).key === 'pipeline_id') pipelineInputs.push((field as { dynamic?: string }).dynamic);
    }
  }
  expect(pipelineInputs.length).toBeGreaterThan(0);
  expect(new Set(pipelineInputs)).toEqual(new Set(['pipeline_list.id.name']));
});

test('an archived pipeline leaves the dropdown, stays readable, refuses new items with a clear message, and comes back when restored', async () => {
  const me = (await (await fetch(`${server.url}/v1/ext/me`, { headers: { 'x-api-key': server.apiKey } })).json()) as { company: { id: string } };
  const file = path.join(server.dataDir, 'old-deals.json');
  fs.writeFileSync(file, JSON.stringify({ name: 'Old deals', stages: [{ name: 'Open' }] }));
  const imported = admin(['pipelines', 'import', '--company', me.company.id, '--file', file]);
  const id: string = imported.id;
  expect((await appTester(listPipelines, { authData })).map((p) => p.name)).toContain('Old deals');

  expect(admin(['pipelines', 'archive', id]).archived_at).not.toBeNull();
  const offered = await appTester(listPipelines, { authData });
  expect(offered.map((p) => p.name)).not.toContain('Old deals');
  expect(offered.map((p) => p.name)).toContain('Sales');
  // Its stages stay readable by id (a zap set up before the archive still shows its stage).
  expect((await appTester(listStages, { authData, inputData: { pipeline_id: id } })).map((s) => s.name)).toEqual(['Open']);

  const stageId = imported.stages[0].id as string;
  const error = await thrown(appTester(createItem, { authData, inputData: { pipeline_id: id, stage_id: stageId, name: 'Late lead' } }));
  expect(error).toMatchObject({ status: 422, code: 'pipeline_archived' });
  expect(error.message).toContain('The pipeline of this step is archived in Stageline');
  expect(error.message).toContain('Pipeline "Old deals" is archived');

  expect(admin(['pipelines', 'restore', id]).archived_at).toBeNull();
  expect((await appTester(listPipelines, { authData })).map((p) => p.name)).toContain('Old deals');
});
