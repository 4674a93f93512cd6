/**
 * The API reference (CONTRACT "Reference", issue 12 "OpenAPI"): GET /v1/ext/openapi.json serves the OpenAPI 3.1 document
 * generated from the zod contract; it lints clean with Redocly's recommended rules; the committed snapshot
 * docs/openapi.json matches it; every route under /v1/ext is documented (and every documented operation is served);
 * the examples parse with the contract schemas; GET /docs serves a browsable reference from this host only; and the
 * response validator the API tests use (helpers/openapi-validator.ts) rejects a response the document does not allow.
 */
import fs from "node:fs";
import path from "node:path";
import { createConfig, lintFromString } from "@redocly/openapi-core";
import type { Router } from "express";
import { z } from "zod";
import type { AppContext } from "../src/context";
import { openApiDocument, openApiJson } from "../src/openapi/document";
import { API_OPERATIONS } from "../src/openapi/operations";
import { SNAPSHOT_PATH } from "../src/openapi/write-snapshot";
import { assertDocumentedResponse } from "./helpers/openapi-validator";
import { startTestServer, type TestServer } from "./helpers/test-server";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t?.close();
});

describe("GET /v1/ext/openapi.json", () => {
  it("serves the generated OpenAPI 3.1 document without a key and outside the per-key rate limit", async () => {
    const res = await fetch(`${t.url}/v1/ext/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.headers.get("ratelimit-limit")).toBeNull();
    const text = await res.text();
    expect(text).toBe(openApiJson());
    const doc = JSON.parse(text);
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.components.securitySchemes.ApiKeyAuth).toMatchObject({ type: "apiKey", in: "header", name: "x-api-key" });
  });

  it("documents every operation with an operationId, a summary, a 2xx and its problem responses", () => {
    const doc = openApiDocument() as any;
    const ids = new Set<string>();
    for (const op of API_OPERATIONS) {
      const o = doc.paths[op.path][op.method];
      expect(o.operationId).toBe(op.operationId);
      expect(ids.has(op.operationId)).toBe(false);
      ids.add(op.operationId);
      expect(o.summary).toBeTruthy();
      expect(Object.keys(o.responses)).toContain(String(op.success.status));
      if (op.access !== "public") {
        for (const status of ["400", "401", "402", "408", "413", "429", "500"]) expect(Object.keys(o.responses)).toContain(status);
        expect(o.responses["429"].$ref).toMatch(/RateLimited/);
      }
      if (Array.isArray(op.access)) expect(Object.keys(o.responses)).toContain("403");
    }
    // RateLimit-* on every keyed response, Retry-After on 429, Link on lists, Location on item/task creates.
    expect(Object.keys(doc.components.headers)).toEqual(expect.arrayContaining(["RateLimitLimit", "RateLimitRemaining", "RateLimitReset", "RetryAfter", "Link", "Location"]));
    expect(doc.components.responses.RateLimited.headers["Retry-After"].$ref).toBe("#/components/headers/RetryAfter");
    expect(doc.paths["/v1/ext/items"].get.responses["200"].headers.Link.$ref).toBe("#/components/headers/Link");
    expect(doc.paths["/v1/ext/items"].post.responses["201"].headers.Location.$ref).toBe("#/components/headers/Location");
    expect(doc.paths["/v1/ext/items"].post.responses["201"].headers["RateLimit-Limit"].$ref).toBe("#/components/headers/RateLimitLimit");
    for (const required of ["RateLimitLimit", "RateLimitRemaining", "RateLimitReset", "RetryAfter", "Location"]) expect(doc.components.headers[required].required).toBe(true);
    expect(doc.components.headers.Link.required).toBeUndefined();
    // A problem response names its codes.
    expect(doc.components.responses.InsufficientScope.content["application/problem+json"].schema.properties.code.enum).toEqual(["insufficient_scope"]);
  });

  it("matches the committed snapshot docs/openapi.json (npm run openapi:snapshot rewrites it)", () => {
    const committed = fs.readFileSync(SNAPSHOT_PATH, "utf8");
    if (committed !== openApiJson()) {
      throw new Error(`${path.relative(process.cwd(), SNAPSHOT_PATH)} is out of date with the contract: run \`npm run openapi:snapshot\` and commit it.`);
    }
  });

  it("lints clean with Redocly's recommended rules (offline)", async () => {
    const config = await createConfig({ extends: ["recommended"] });
    const problems = await lintFromString({ source: openApiJson(), absoluteRef: SNAPSHOT_PATH, config });
    const reported = problems
      // The one documented exception: the public document endpoint has no 4xx to answer (no key, no input).
      .filter((p) => !(p.ruleId === "operation-4xx-response" && p.location[0]?.pointer === "#/paths/~1v1~1ext~1openapi.json/get/responses"))
      .map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`);
    expect(reported).toEqual([]);
  });

  it("has examples that parse with their contract schemas", () => {
    let checked = 0;
    for (const op of API_OPERATIONS) {
      for (const part of [op.body, op.success.body]) {
        if (!part) continue;
        const result = (part.schema as z.ZodType).safeParse(part.example);
        if (!result.success) throw new Error(`${op.operationId}: example does not parse: ${result.error.message}`);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(20);
  });
});

describe("every route is documented", () => {
  /** `METHOD /v1/ext/path/{param}` of every route the API routers (server/src/routes/*.ts) register. */
  function servedRoutes(): string[] {
    const dir = path.join(__dirname, "..", "src", "routes");
    const out: string[] = [];
    for (const file of fs.readdirSync(dir).filter((f) => f.endsWith(".ts"))) {
      const mod = require(path.join(dir, file)) as Record<string, unknown>;
      for (const [name, factory] of Object.entries(mod)) {
        if (!name.endsWith("Router") || typeof factory !== "function") continue;
        const router = (factory as (ctx: AppContext) => Router)({} as AppContext);
        for (const layer of router.stack as { route?: { path: string; methods: Record<string, boolean> } }[]) {
          if (!layer.route) continue;
          const p = `/v1/ext${layer.route.path.replace(/:(\w+)/g, "{$1}")}`;
          for (const m of Object.keys(layer.route.methods)) if (m !== "_all") out.push(`${m.toUpperCase()} ${p}`);
        }
      }
    }
    return out.sort();
  }

  /** Does the served route template `served` cover the documented path `documented` (a param may stand for a literal)? */
  function covers(served: string, documented: string): boolean {
    const [sm, sp] = served.split(" ");
    const [dm, dp] = documented.split(" ");
    if (sm !== dm) return false;
    const a = sp!.split("/");
    const b = dp!.split("/");
    return a.length === b.length && a.every((seg, i) => seg === b[i] || (seg.startsWith("{") && !b[i]!.startsWith("{")));
  }

  it("documents every route under /v1/ext and serves every documented operation", () => {
    const served = servedRoutes();
    const documented = API_OPERATIONS.map((op) => `${op.method.toUpperCase()} ${op.path}`).sort();
    expect(served.length).toBeGreaterThan(15);
    const undocumented = served.filter((s) => !documented.some((d) => covers(s, d)));
    const unserved = documented.filter((d) => !served.some((s) => covers(s, d)));
    expect({ undocumented, unserved }).toEqual({ undocumented: [], unserved: [] });
  });
});

describe("the response validator used by the API tests", () => {
  const headers = (extra: Record<string, string> = {}) =>
    new Headers({ "content-type": "application/json", "request-id": "req_8Zq2xWmC1vR4nT7bY0kLdA", "ratelimit-limit": "60", "ratelimit-remaining": "59", "ratelimit-reset": "30", ...extra });

  it("accepts a documented response and rejects responses the document does not allow", async () => {
    const good = await t.request("GET", "/v1/ext/pipelines");
    expect(good.status).toBe(200);
    expect(() => assertDocumentedResponse({ method: "GET", url: "/v1/ext/pipelines", status: 200, headers: good.headers, body: good.body })).not.toThrow();
    // A body missing a required field.
    expect(() => assertDocumentedResponse({ method: "GET", url: "/v1/ext/pipelines", status: 200, headers: headers(), body: [{ id: "x" }] })).toThrow(/name/);
    // A status the operation does not document.
    expect(() => assertDocumentedResponse({ method: "GET", url: "/v1/ext/pipelines", status: 418, headers: headers(), body: {} })).toThrow(/418 is not documented/);
    // A missing RateLimit header.
    const noLimit = new Headers({ "content-type": "application/json", "request-id": "req_8Zq2xWmC1vR4nT7bY0kLdA" });
    expect(() => assertDocumentedResponse({ method: "GET", url: "/v1/ext/pipelines", status: 200, headers: noLimit, body: [] })).toThrow(/RateLimit-Limit/);
    // A missing Request-Id (CONTRACT "Request ids and the request log": every response carries one).
    const noId = headers();
    noId.delete("request-id");
    expect(() => assertDocumentedResponse({ method: "GET", url: "/v1/ext/pipelines", status: 200, headers: noId, body: [] })).toThrow(/Request-Id/);
    // A problem with a code its status does not carry.
    const problem = { type: "x", title: "x", status: 404, detail: "x", code: "internal" };
    const problemHeaders = headers({ "content-type": "application/problem+json" });
    expect(() => assertDocumentedResponse({ method: "GET", url: "/v1/ext/items/abc", status: 404, headers: problemHeaders, body: problem })).toThrow(/code/);
  });
});

describe("GET /docs", () => {
  it("serves a browsable reference whose assets all come from this host", async () => {
    const res = await fetch(`${t.url}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    const csp = res.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    const html = await res.text();
    expect(html).not.toMatch(/https?:\/\//);
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(assets).toEqual(["/docs/assets/swagger-ui.css", "/docs/assets/swagger-ui-bundle.js", "/docs/assets/init.js"]);
    for (const asset of assets) {
      const a = await fetch(t.url + asset);
      expect(a.status).toBe(200);
      expect(a.headers.get("content-type")).toMatch(asset.endsWith(".css") ? /^text\/css/ : /javascript/);
      expect((await a.text()).length).toBeGreaterThan(10);
    }
    const init = await (await fetch(`${t.url}/docs/assets/init.js`)).text();
    expect(init).toContain('"/v1/ext/openapi.json"');
    expect(init).toContain("validatorUrl: null");
  });
});
