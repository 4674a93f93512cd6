/**
 * CONTRACT "HTTP semantics" and "HTTP semantics, order of checks" (issue 21, gaps 4 and 5): every method a path of the
 * served document does not list answers `405 method_not_allowed` with the right `Allow`, before authentication,
 * rate limiting or any lookup (valid key, bad key, no key, unknown ids alike), and without counting against the rate
 * limit; `OPTIONS` answers `204` with the same `Allow`; a literal segment (`/items/check-duplicates`) is never an id.
 * And over HTTP, the query rules the document states (gap 3): values trimmed, blank = absent, lengths after trimming.
 */
import { PROBLEM_CONTENT_TYPE } from "@stageline/shared";
import { startTestServer, type TestServer } from "./helpers/test-server";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t?.close();
});

/** Methods a client can send that the walk tries on every path. */
const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"] as const;

/** The expected `Allow` of a path item, written out here independently of the server's route table. */
function expectedAllow(documented: string[]): string {
  const set = new Set(documented.map((m) => m.toUpperCase()));
  if (set.has("GET")) set.add("HEAD");
  set.add("OPTIONS");
  return [...set].sort().join(", ");
}

/** Every hit counted so far, over all rate-limit counters (per key and per client IP). */
async function countedHits(): Promise<number> {
  const sum = await t.server.ctx.prisma.rateLimitWindow.aggregate({ _sum: { hits: true } });
  return Number(sum._sum.hits ?? 0);
}

describe("405 Method Not Allowed on every path of the served document", () => {
  it("answers every undocumented method with 405, the right Allow and a problem body, with any key, counting nothing", async () => {
    const doc = (await (await fetch(`${t.url}/v1/ext/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    const before = await countedHits();
    let checked = 0;
    for (const [template, item] of Object.entries(doc.paths)) {
      const documented = Object.keys(item);
      const allow = expectedAllow(documented);
      const path = template.replace(/\{[^}]+\}/g, "no-such-id");
      for (const method of METHODS) {
        if (documented.includes(method.toLowerCase()) || (method === "HEAD" && documented.includes("get"))) continue;
        for (const key of [t.apiKey, "sk_live_not_a_key", null]) {
          const res = await fetch(t.url + path, {
            method,
            headers: { ...(key ? { "x-api-key": key } : {}), "content-type": "application/json" },
            ...(method === "GET" || method === "HEAD" ? {} : { body: "{}" }),
          });
          const context = `${method} ${path} (key: ${key === null ? "none" : key === t.apiKey ? "valid" : "bad"})`;
          expect({ context, status: res.status, allow: res.headers.get("allow") }).toEqual({ context, status: 405, allow });
          expect(res.headers.get("ratelimit-remaining")).toBeNull();
          if (method === "HEAD") continue;
          expect(res.headers.get("content-type")).toMatch(new RegExp(`^${PROBLEM_CONTENT_TYPE.replace("+", "\\+")}`));
          expect(await res.json()).toMatchObject({ status: 405, code: "method_not_allowed", title: "Method not allowed" });
          checked++;
        }
      }
      const options = await fetch(t.url + path, { method: "OPTIONS", headers: { "x-api-key": "sk_live_not_a_key" } });
      expect({ template, status: options.status, allow: options.headers.get("allow") }).toEqual({ template, status: 204, allow });
    }
    expect(checked).toBeGreaterThan(100);
    expect(await countedHits()).toBe(before);
  });

  it("never takes a literal segment for an id: GET and PATCH /items/check-duplicates are 405", async () => {
    for (const method of ["GET", "PATCH"]) {
      const res = await t.request(method, "/v1/ext/items/check-duplicates", method === "PATCH" ? { name: "x" } : undefined);
      expect(res.status).toBe(405);
      expect(res.headers.get("allow")).toBe("OPTIONS, POST");
      expect(res.body.detail).not.toMatch(/was not found/);
    }
    // The id route still serves ids, and the literal route its own method.
    expect((await t.request("GET", "/v1/ext/items/no-such-item")).status).toBe(404);
    expect((await t.request("POST", "/v1/ext/items/check-duplicates", { pipeline_id: t.pipeline.id })).status).toBe(200);
  });

  it("matches paths as Express does (case-insensitive literals, a trailing slash) and leaves unknown paths at 404", async () => {
    const upper = await fetch(`${t.url}/V1/EXT/ITEMS/`, { method: "PUT" });
    expect(upper.status).toBe(405);
    expect(upper.headers.get("allow")).toBe("GET, HEAD, OPTIONS, POST");
    expect((await t.request("PUT", "/v1/ext/no-such-path")).status).toBe(404);
    expect((await t.request("GET", "/v1/ext/items/a/b")).status).toBe(404);
  });
});

describe("query values over HTTP (trimmed, blank = absent, lengths after trimming)", () => {
  it("answers the reported cases as the document says", async () => {
    expect((await t.request("GET", "/v1/ext/items?pipeline_id=&created_after=")).status).toBe(200);
    expect((await t.request("GET", "/v1/ext/items?pipeline_id=%20%20")).status).toBe(200);
    const q = await t.request("GET", "/v1/ext/items?q=%20a");
    expect(q.status).toBe(400);
    expect(q.body.errors[0].path).toBe("q");
    expect((await t.request("GET", "/v1/ext/items?q=%20ab%20")).status).toBe(200);
  });

  it("trims every parameter: a padded id filters like the id, a padded limit is the number, and limit takes digits only", async () => {
    const created = await t.request("POST", "/v1/ext/items", { name: "Trim probe", pipeline_id: t.pipeline.id, stage_id: t.pipeline.stages[0]!.id });
    expect(created.status).toBe(201);
    const padded = await t.request("GET", `/v1/ext/items?pipeline_id=%20${t.pipeline.id}%09&limit=%201%20`);
    expect(padded.status).toBe(200);
    expect(padded.body.map((i: { item_id: string }) => i.item_id)).toEqual([created.body.item_id]);
    for (const bad of ["0x10", "1e2", "5.0", "0", "501"]) {
      expect({ bad, status: (await t.request("GET", `/v1/ext/items?limit=${bad}`)).status }).toEqual({ bad, status: 400 });
    }
    expect((await t.request("GET", "/v1/ext/tasks?is_completed=%20true%20&limit=")).status).toBe(200);
  });
});
