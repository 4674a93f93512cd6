/**
 * Issue 32, `oauth` phase (CONTRACT "Connect with OAuth 2.1"; issue item 7: a request with an access token costs at
 * most 1.05x one with an API key, same run): the same requests sent with the demo API key (`x-api-key`) and with an
 * OAuth access token (`Authorization: Bearer`) of the same company, in alternating rounds:
 * - `GET /v1/ext/me`: the cheapest endpoint, so authentication is the largest share of its cost (the strictest test);
 * - `GET /v1/ext/items/{id}`: one seeded item, a typical read.
 * The token is written straight into `oauth_records` as the authorization server's adapter stores it
 * (docs/oauth-storage.md: Client, Grant, AccessToken with id base64url(sha256(token)), no jti), bound to the REST
 * API resource of the server's origin, with all API scopes; the server's per-grant limit is the raised
 * RATE_LIMIT_PER_MINUTE like the key's. Cost ratio = key req/s ÷ token req/s (1.000x: the same cost). Then, because
 * throughput on a shared machine swings with other work between rounds, a paired measure: `GET /v1/ext/me` one request
 * at a time, key and token alternating request by request (PAIRS timed pairs after 200 untimed), cost ratio = token
 * p50 latency ÷ key p50 latency (both see the same moment's load). PostgreSQL only
 * (the bench writes the records with SQL while the server runs; PGlite belongs to the server process).
 */
import crypto from "node:crypto";
import { ratio, rps } from "./format";
import type { Sql } from "./db";
import type { LoadOptions, LoadResult } from "./load";
import { combineRounds } from "./load";
import type { Figure } from "./report";

/** Figure group of the OAuth phase. */
const ITEM = 14;
/** Token request cost ÷ key request cost may be at most this (issue 32 item 7). */
const TARGET_RATIO = 1.05;

/** What the phase uses of the bench pass (lib/pass.ts). */
export interface OAuthHost {
  quick: boolean;
  rounds: number;
  serverUrl: string;
  /** The demo API key's headers. */
  headers: Record<string, string>;
  companyId: string;
  /** A seeded item of the demo company. */
  itemId: string;
  /** Direct SQL (PostgreSQL pass only). */
  sql?: Sql;
  load(label: string, options: Omit<LoadOptions, "connections" | "duration">, warm?: boolean): Promise<LoadResult>;
  latencyText(r: LoadResult): string;
  figures: Figure[];
  details: string[];
  notes: string[];
  log(line: string): void;
}

/**
 * Writes a Client, a Grant and an AccessToken for `companyId` bound to `resource`, granted by the company's first
 * user (the seeded owner: the resource side accepts a token only while its grant's user is in the company);
 * returns the raw token. @throws when the company has no user.
 */
async function issueToken(sql: Sql, companyId: string, resource: string): Promise<string> {
  const [user] = await sql.query<{ id: string }>(`SELECT id FROM users WHERE company_id = $1 ORDER BY created_at, id LIMIT 1`, [companyId]);
  if (!user) throw new Error(`the bench company ${companyId} has no user to grant the OAuth token`);
  const accountId = user.id;
  const token = crypto.randomBytes(32).toString("base64url");
  const grantId = crypto.randomBytes(16).toString("base64url");
  const clientId = `bench-client-${crypto.randomBytes(4).toString("hex")}`;
  const now = Math.floor(Date.now() / 1000);
  const scope = "items:read items:write tasks:read tasks:write hooks:manage offline_access";
  const insert = `INSERT INTO oauth_records (model, id, payload, grant_id, company_id, client_id, expires_at)
                  VALUES ($1, $2, $3::jsonb, $4, $5, $6, $7::timestamptz)`;
  await sql.query(insert, ["Client", clientId, JSON.stringify({ client_id: clientId, client_name: "Bench Agent" }), null, null, clientId, null]);
  await sql.query(insert, [
    "Grant", grantId, JSON.stringify({ jti: grantId, kind: "Grant", accountId, clientId, resources: { [resource]: scope } }),
    grantId, companyId, clientId, new Date(Date.now() + 86_400_000),
  ]);
  await sql.query(insert, [
    "AccessToken", crypto.createHash("sha256").update(token).digest("base64url"),
    JSON.stringify({ kind: "AccessToken", iat: now, exp: now + 3600, accountId, clientId, grantId, aud: resource, scope, gty: "authorization_code" }),
    grantId, companyId, clientId, new Date(Date.now() + 3_600_000),
  ]);
  return token;
}

/** Timed pairs of the paired measure (quick: fewer). */
const PAIRS = 3000;
const QUICK_PAIRS = 300;
const UNTIMED_PAIRS = 200;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** One GET, read to the end; its latency in ms. @throws when it is not 200. */
async function timedGet(url: string, headers: Record<string, string>): Promise<number> {
  const started = process.hrtime.bigint();
  const res = await fetch(url, { headers });
  await res.arrayBuffer();
  const elapsed = Number(process.hrtime.bigint() - started) / 1e6;
  if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status} in the paired measure`);
  return elapsed;
}

/** The paired measure: sequential key / token requests alternating, p50 latency of each. */
async function measurePaired(h: OAuthHost, tokenHeaders: Record<string, string>): Promise<void> {
  const url = `${h.serverUrl}/v1/ext/me`;
  const pairs = h.quick ? QUICK_PAIRS : PAIRS;
  const key: number[] = [];
  const token: number[] = [];
  for (let i = 0; i < UNTIMED_PAIRS + pairs; i++) {
    let k: number;
    let t: number;
    if (i % 2) {
      k = await timedGet(url, h.headers);
      t = await timedGet(url, tokenHeaders);
    } else {
      t = await timedGet(url, tokenHeaders);
      k = await timedGet(url, h.headers);
    }
    if (i < UNTIMED_PAIRS) continue;
    key.push(k);
    token.push(t);
  }
  const k50 = median(key);
  const t50 = median(token);
  h.figures.push(
    { item: ITEM, metric: "OAuth: GET /v1/ext/me one at a time, key / token alternating: p50 with the API key", value: k50, display: `${k50.toFixed(3)} ms` },
    { item: ITEM, metric: "OAuth: the same, p50 with the access token", value: t50, display: `${t50.toFixed(3)} ms` },
    {
      item: ITEM,
      metric: "OAuth: paired cost, token p50 / key p50",
      value: t50 / k50,
      display: ratio(t50 / k50),
      ...(h.quick ? {} : { target: { op: "<=" as const, limit: TARGET_RATIO, text: `≤ ${TARGET_RATIO.toFixed(2)}x` } }),
    },
  );
  h.details.push("", `Paired measure: ${pairs} timed pairs of GET /v1/ext/me after ${UNTIMED_PAIRS} untimed, one request at a time, the order within a pair alternating.`, "");
}

/** Runs the phase and pushes its figures. */
export async function runOAuthPhase(h: OAuthHost): Promise<void> {
  if (!h.sql) {
    h.notes.push("OAuth (issue 32): PostgreSQL only (the bench writes the token records with SQL while the server runs).");
    return;
  }
  const resource = `${new URL(h.serverUrl).origin}/v1/ext`;
  const token = await issueToken(h.sql, h.companyId, resource);
  const tokenHeaders = { authorization: `Bearer ${token}` };
  const probe = await fetch(`${h.serverUrl}/v1/ext/me`, { headers: tokenHeaders });
  const me = (await probe.json()) as { credential?: { type: string } };
  if (probe.status !== 200 || me.credential?.type !== "oauth") throw new Error(`GET /v1/ext/me with the bench token answered ${probe.status}: ${JSON.stringify(me).slice(0, 200)}`);

  for (const [name, path] of [
    ["GET /v1/ext/me", "/v1/ext/me"],
    ["GET /v1/ext/items/{id}", `/v1/ext/items/${encodeURIComponent(h.itemId)}`],
  ] as const) {
    const keyRounds: LoadResult[] = [];
    const tokenRounds: LoadResult[] = [];
    for (let r = 0; r < h.rounds; r++) {
      keyRounds.push(await h.load(`${name} with the API key, round ${r + 1}`, { url: h.serverUrl, path, headers: h.headers }, r === 0));
      tokenRounds.push(await h.load(`${name} with the access token, round ${r + 1}`, { url: h.serverUrl, path, headers: tokenHeaders }, r === 0));
    }
    const k = combineRounds(keyRounds);
    const t = combineRounds(tokenRounds);
    const cost = k.reqPerSec / t.reqPerSec;
    h.figures.push(
      { item: ITEM, metric: `OAuth: ${name} with an API key`, value: k.reqPerSec, display: `${rps(k.reqPerSec)} (${h.latencyText(k)})` },
      { item: ITEM, metric: `OAuth: ${name} with an access token`, value: t.reqPerSec, display: `${rps(t.reqPerSec)} (${h.latencyText(t)})` },
      {
        item: ITEM,
        metric: `OAuth: ${name} cost, token / key (key req/s ÷ token req/s)`,
        value: cost,
        display: ratio(cost),
        ...(h.quick ? {} : { target: { op: "<=" as const, limit: TARGET_RATIO, text: `≤ ${TARGET_RATIO.toFixed(2)}x` } }),
      },
    );
    const row = (who: string, r: LoadResult, i: number) =>
      `| ${name} | ${who} | ${i + 1} | ${Math.round(r.reqPerSec)} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.ok} | ${r.non2xx + r.errors} |`;
    h.details.push(
      "",
      `${name} rounds (alternating key / token; the token's AccessToken + Grant + Client lookup and its grant's rate-limit hit in one statement):`,
      "",
      "| Measure | Credential | Round | req/s | p50 ms | p99 ms | 2xx | failed |",
      "|---|---|---|---|---|---|---|---|",
      ...keyRounds.flatMap((kr, i) => [row("API key", kr, i), row("access token", tokenRounds[i]!, i)]),
      "",
    );
  }
  await measurePaired(h, tokenHeaders);
}
