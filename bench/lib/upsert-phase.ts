/**
 * Issue 25, `upsert` phase: POST /v1/ext/items/upsert throughput against the bare baseline's `POST /upsert`
 * (lib/baseline-server.ts: the same match SELECT and the same INSERT or UPDATE, without auth, validation, locks,
 * transaction or outbox), on both paths, in alternating rounds; the figures sit beside create's (item 2) so the
 * ratios of one run can be compared.
 * - created path: every request carries a new email (`bench-<id>@example.com`), so every upsert matches nothing and
 *   creates;
 * - updated path: every request carries the email of a random seeded item (`lead<g>@example.com`, g in 1..10,000)
 *   and a new random `deal_value`, so every upsert matches one item and really changes it (version + 1 and an
 *   `item.updated` event on the server).
 */
import type autocannon from "autocannon";
import { ratio, rps } from "./format";
import type { LoadOptions, LoadResult } from "./load";
import { combineRounds } from "./load";
import type { Figure } from "./report";

/** What the phase uses of the bench pass (lib/pass.ts). */
export interface UpsertHost {
  rounds: number;
  serverUrl: string;
  baselineUrl: string;
  headers: Record<string, string>;
  /** The create body template of the create phase (`[<id>]` replaced per request). */
  createBody: string;
  /** Seeded items to pick from for the updated path (their emails are `lead<g>@example.com`). */
  seeded: number;
  pipelineId: string;
  stageId: string;
  load(label: string, options: Omit<LoadOptions, "connections" | "duration">, warm?: boolean): Promise<LoadResult>;
  latencyText(r: LoadResult): string;
  roundsTable(name: string, bare: LoadResult[], server: LoadResult[], note: string): void;
  figures: Figure[];
  /** Asserts one request on the server: status and `Stageline-Upsert` header. */
  probe(body: unknown, status: number, result: string): Promise<void>;
}

/** Runs the phase and pushes its figures (item 2). */
export async function runUpsertPhase(h: UpsertHost): Promise<void> {
  const pool = Math.max(1, Math.min(h.seeded, 10_000));
  const updateBody = () =>
    JSON.stringify({
      name: "Bench upsert",
      pipeline_id: h.pipelineId,
      stage_id: h.stageId,
      metadata: { email: `lead${1 + Math.floor(Math.random() * pool)}@example.com`, deal_value: 1 + Math.floor(Math.random() * 1e9) },
    });
  const randomMatch = (req: autocannon.Request) => ({ ...req, body: updateBody() });
  await h.probe(JSON.parse(h.createBody.replace(/\[<id>\]/g, `upsert-probe-${Date.now()}`)), 201, "created");
  await h.probe(JSON.parse(updateBody()), 200, "updated");

  const paths = [
    { name: "created", note: "each request a new email: matches nothing, creates (with its item.created outbox event on the server)", body: h.createBody, uniqueIds: true },
    { name: "updated", note: `each request a random seeded item's email (1..${pool}) and a new deal_value: matches one item, changes it (item.updated on the server)`, body: updateBody(), setupRequest: randomMatch },
  ] as const;
  for (const p of paths) {
    const bareRounds: LoadResult[] = [];
    const serverRounds: LoadResult[] = [];
    const common = { method: "POST" as const, body: p.body, ...("uniqueIds" in p ? { uniqueIds: true } : { setupRequest: p.setupRequest }) };
    for (let r = 0; r < h.rounds; r++) {
      bareRounds.push(await h.load(`bare upsert (${p.name}), round ${r + 1}`, { ...common, url: h.baselineUrl, path: "/upsert" }, r === 0));
      serverRounds.push(await h.load(`server upsert (${p.name}), round ${r + 1}`, { ...common, url: h.serverUrl, path: "/v1/ext/items/upsert", headers: h.headers }, r === 0));
    }
    const b = combineRounds(bareRounds);
    const s = combineRounds(serverRounds);
    h.figures.push(
      { item: 2, metric: `Upsert, ${p.name} path: server`, value: s.reqPerSec, display: `${rps(s.reqPerSec)} (${h.latencyText(s)})` },
      { item: 2, metric: `Upsert, ${p.name} path: bare Express + match SELECT + ${p.name === "created" ? "INSERT" : "UPDATE"}, no auth`, value: b.reqPerSec, display: `${rps(b.reqPerSec)} (${h.latencyText(b)})` },
      { item: 2, metric: `Upsert, ${p.name} path: server / bare throughput`, value: s.reqPerSec / b.reqPerSec, display: ratio(s.reqPerSec / b.reqPerSec) },
    );
    h.roundsTable(`Upsert (${p.name})`, bareRounds, serverRounds, p.note);
  }
}
