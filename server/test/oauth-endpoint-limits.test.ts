/**
 * The authorization server's limits against floods (CONTRACT "Connect with OAuth 2.1": nothing anyone does may
 * exhaust the service; oauth/endpoint-limits.ts, oauth/purge.ts): the unauthenticated endpoints that write state
 * answer 429 with `Retry-After` and an OAuth JSON error after their per-IP limit, store nothing more, and leave other
 * addresses alone; the purge deletes clients from Dynamic Client Registration never used for 7 days, and nothing else.
 * The client IP is varied with X-Forwarded-For from the loopback peer (TRUST_PROXY `loopback`). Small limits come from
 * `config.oauthEndpointLimits` (tests only); every other test runs with the production limits.
 */
import { awayFromWindowEnd } from "./helpers/fixed-window";
import { startTestServer, type TestServer } from "./helpers/test-server";
import { OAUTH_ENDPOINT_LIMITS } from "../src/oauth/endpoint-limits";
import { startOAuthPurge, UNUSED_CLIENT_MAX_AGE_SECONDS } from "../src/oauth/purge";
import { purgeUnusedRegisteredClients } from "../src/db/oauth-records";

const REDIRECT = "http://127.0.0.1:9/callback";
// A day-long window: the counters' fixed windows are aligned to the clock, so a short one could reset mid-test; each
// test of the limits also starts at least 30 s before the day's end (00:00 UTC), for the same reason.
const DAY = 86_400;
const LIMITS = {
  registration: { perIp: 3, windowSeconds: DAY },
  authorization: { perIp: 2, windowSeconds: DAY },
  token: { perIp: 2, windowSeconds: DAY },
  revocation: { perIp: 2, windowSeconds: DAY },
};

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ trustProxy: "loopback", oauthEndpointLimits: LIMITS });
}, 60_000);
afterAll(() => t?.close());

const sql = () => t.server.db.sql;
const count = async (model: string) =>
  (await sql().query<{ n: number }>(`select count(*)::int as n from oauth_records where model = $1`, [model]))[0]!.n;

function register(ip: string): Promise<Response> {
  return fetch(`${t.url}/oauth/reg`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-forwarded-for": ip },
    body: JSON.stringify({ redirect_uris: [REDIRECT], token_endpoint_auth_method: "none", client_name: "Flood" }),
  });
}

/** Asserts the 429 of a limited endpoint: OAuth-style JSON, `Retry-After` in seconds, never HTML. */
async function expectRefused(res: Response): Promise<void> {
  expect(res.status).toBe(429);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  const retryAfter = Number(res.headers.get("retry-after"));
  expect(Number.isInteger(retryAfter) && retryAfter > 0 && retryAfter <= DAY).toBe(true);
  const body = (await res.json()) as Record<string, unknown>;
  expect(body.error).toBe("temporarily_unavailable");
  expect(body.error_description).toEqual(expect.stringContaining(`Retry after ${retryAfter} seconds`));
}

describe("per-IP limits of the OAuth endpoints", () => {
  beforeEach(() => awayFromWindowEnd(DAY * 1000, 30_000), 60_000);

  it("the production table keeps room for big MCP hosts", () => {
    expect(OAUTH_ENDPOINT_LIMITS).toEqual({
      registration: { perIp: 60, windowSeconds: 600 },
      authorization: { perIp: 300, windowSeconds: 600 },
      token: { perIp: 600, windowSeconds: 60 },
      revocation: { perIp: 120, windowSeconds: 60 },
    });
  });

  it("a registration flood is refused after the limit and stores nothing more; another IP still registers", async () => {
    const before = await count("Client");
    const tokensBefore = await count("RegistrationAccessToken");
    for (let i = 0; i < 3; i++) expect((await register("203.0.113.5")).status).toBe(201);
    for (let i = 0; i < 5; i++) await expectRefused(await register("203.0.113.5"));
    expect(await count("Client")).toBe(before + 3);
    expect(await count("RegistrationAccessToken")).toBe(tokensBefore + 3);

    const other = await register("203.0.113.6");
    expect(other.status).toBe(201);
    expect(((await other.json()) as { client_id: string }).client_id).toEqual(expect.any(String));
    expect(await count("Client")).toBe(before + 4);
  });

  // POST /oauth/auth is off in the provider (oidc-provider's enableHttpPostMethods) but limited alike.
  it("the authorization endpoint is refused with JSON, not the provider's HTML, and starts no interaction", async () => {
    const client = ((await (await register("203.0.113.7")).json()) as { client_id: string }).client_id;
    const query = new URLSearchParams({
      client_id: client,
      redirect_uri: REDIRECT,
      response_type: "code",
      code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWSY4pwmCf8sE",
      code_challenge_method: "S256",
    });
    const auth = (method: "GET" | "POST", ip: string) =>
      fetch(method === "GET" ? `${t.url}/oauth/auth?${query}` : `${t.url}/oauth/auth`, {
        method,
        redirect: "manual",
        headers: { "x-forwarded-for": ip, ...(method === "POST" ? { "content-type": "application/x-www-form-urlencoded" } : {}) },
        body: method === "POST" ? query : undefined,
      });
    expect((await auth("GET", "198.51.100.1")).status).toBe(303);
    expect((await auth("GET", "198.51.100.1")).status).toBe(303);
    const interactions = await count("Interaction");
    await expectRefused(await auth("GET", "198.51.100.1"));
    await expectRefused(await auth("POST", "198.51.100.1"));
    expect(await count("Interaction")).toBe(interactions);
    // Another address is not affected.
    expect((await auth("GET", "198.51.100.2")).status).toBe(303);
    expect(await count("Interaction")).toBe(interactions + 1);
  });

  it("the token and revocation endpoints are refused with JSON after their limits, per IP", async () => {
    const post = (path: string, ip: string) =>
      fetch(`${t.url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", "x-forwarded-for": ip },
        body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: "nope", token: "nope", client_id: "unknown" }),
      });
    for (const path of ["/oauth/token", "/oauth/token/revocation"]) {
      for (let i = 0; i < 2; i++) {
        const res = await post(path, "192.0.2.10");
        expect(res.status).not.toBe(429);
        expect(res.status).toBeGreaterThanOrEqual(400);
      }
      await expectRefused(await post(path, "192.0.2.10"));
      expect((await post(path, "192.0.2.11")).status).not.toBe(429);
    }
  });

  it("an IPv6 flood is counted per /56, so rotating addresses inside one prefix does not help", async () => {
    for (let i = 0; i < 3; i++) expect((await register(`2001:db8:0:1::${i + 1}`)).status).toBe(201);
    await expectRefused(await register("2001:db8:0:2::99"));
    expect((await register("2001:db8:1::1")).status).toBe(201);
  });
});

describe("purge of unused clients from Dynamic Client Registration", () => {
  const insert = (id: string, payload: object, opts: { companyId?: string; ageDays: number; model?: string; clientId?: string; expiresInDays?: number }) =>
    sql().query(
      `insert into oauth_records (model, id, payload, company_id, client_id, created_at, expires_at)
       values ($1, $2, $3::jsonb, $4, $5, now() - make_interval(days => $6::int),
               case when $7::int is null then null else now() + make_interval(days => $7::int) end)`,
      [opts.model ?? "Client", id, JSON.stringify(payload), opts.companyId ?? null, opts.clientId ?? id, opts.ageDays, opts.expiresInDays ?? null],
    );
  const clientIds = async () =>
    (await sql().query<{ id: string }>(`select id from oauth_records where model = 'Client' order by id`)).map((r) => r.id);

  it("deletes exactly the old DCR clients without a grant, with their registration access tokens", async () => {
    expect(UNUSED_CLIENT_MAX_AGE_SECONDS).toBe(7 * 24 * 3600);
    // A real registration over HTTP, then aged past 7 days: deleted with its RegistrationAccessToken.
    const res = await register("100.64.0.1");
    const real = ((await res.json()) as { client_id: string }).client_id;
    await sql().query(`update oauth_records set created_at = now() - interval '8 days' where model = 'Client' and id = $1`, [real]);
    expect((await sql().query(`select 1 from oauth_records where model = 'RegistrationAccessToken' and client_id = $1`, [real])).length).toBe(1);
    // Written as the adapter and the console write them.
    await insert("dcr-old", { client_id: "dcr-old", redirect_uris: [REDIRECT] }, { ageDays: 8 });
    await insert("dcr-old-claims-owner", { client_id: "dcr-old-claims-owner", stageline_owner: true }, { ageDays: 30 });
    await insert("dcr-recent", { client_id: "dcr-recent" }, { ageDays: 6 });
    await insert("dcr-granted", { client_id: "dcr-granted" }, { ageDays: 20 });
    await insert("grant-1", { clientId: "dcr-granted", accountId: "u" }, { model: "Grant", clientId: "dcr-granted", ageDays: 20, expiresInDays: 10 });
    await insert("sl_app_console", { client_id: "sl_app_console", stageline_owner: true }, { companyId: t.companyId, ageDays: 90 });
    await insert("https://app.example/cimd.json", { client_id: "https://app.example/cimd.json", client_name: "Doc", stageline_metadata_document: true }, { ageDays: 20, expiresInDays: 10 });
    const before = await clientIds();

    const deleted = await purgeUnusedRegisteredClients(sql(), UNUSED_CLIENT_MAX_AGE_SECONDS, 500);
    expect(deleted).toBe(3);
    const gone = ["dcr-old", "dcr-old-claims-owner", real];
    expect(await clientIds()).toEqual(before.filter((id) => !gone.includes(id)));
    for (const id of ["dcr-recent", "dcr-granted", "sl_app_console", "https://app.example/cimd.json"]) expect(await clientIds()).toContain(id);
    expect((await sql().query(`select 1 from oauth_records where model = 'RegistrationAccessToken' and client_id = $1`, [real])).length).toBe(0);
    expect((await sql().query(`select 1 from oauth_records where model = 'Grant' and id = 'grant-1'`)).length).toBe(1);
    expect(await purgeUnusedRegisteredClients(sql(), UNUSED_CLIENT_MAX_AGE_SECONDS, 500)).toBe(0);
  });

  it("deletes at most one batch per statement, oldest first", async () => {
    await insert("dcr-older", { client_id: "dcr-older" }, { ageDays: 12 });
    await insert("dcr-old-too", { client_id: "dcr-old-too" }, { ageDays: 10 });
    expect(await purgeUnusedRegisteredClients(sql(), UNUSED_CLIENT_MAX_AGE_SECONDS, 1)).toBe(1);
    expect(await clientIds()).not.toContain("dcr-older");
    expect(await clientIds()).toContain("dcr-old-too");
    expect(await purgeUnusedRegisteredClients(sql(), UNUSED_CLIENT_MAX_AGE_SECONDS, 1)).toBe(1);
    expect(await clientIds()).not.toContain("dcr-old-too");
  });

  it("the periodic purge job runs it after the expiry sweep", async () => {
    for (let i = 0; i < 3; i++) await insert(`dcr-batch-${i}`, { client_id: `dcr-batch-${i}` }, { ageDays: 9 });
    await insert("expired-session", { uid: "x" }, { model: "Session", ageDays: 2, expiresInDays: -1 });
    const job = startOAuthPurge(sql(), (err) => {
      throw err;
    }, 3_600_000);
    try {
      await job.runNow();
    } finally {
      await job.stop();
    }
    const left = await sql().query(`select id from oauth_records where id like 'dcr-batch-%' or id = 'expired-session'`);
    expect(left).toEqual([]);
  });
});
