/**
 * CONTRACT "Versioning and compatibility" (issue 21 part 5): one flag on an operation of the registry marks it
 * `deprecated: true` in the document and adds `Deprecation: @<unix seconds>` (RFC 9745), `Sunset` (RFC 8594, when set)
 * and `Link: <changelog entry>; rel="deprecation"` to every response of it, errors included. Nothing real is
 * deprecated, so the operations here exist only in this test: the document is built from the registry plus them, and
 * a small Express app serves them behind the same middleware the API mounts (http/method-not-allowed.ts).
 */
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import express from "express";
import pino from "pino";
import { z } from "zod";
import { API_CHANGELOG_URL } from "@stageline/shared";
import { routeSemantics } from "../src/http/method-not-allowed";
import { renderProblem } from "../src/http/problem";
import { buildOpenApiDocument } from "../src/openapi/document";
import { API_OPERATIONS, type ApiOperation } from "../src/openapi/operations";
import { buildRouteTable } from "../src/openapi/route-table";
import { domainError } from "../src/services/errors";

const widget = z.object({ id: z.string() });
const legacyList: ApiOperation = {
  method: "get", path: "/v1/ext/legacy-widgets", operationId: "listLegacyWidgets", summary: "List legacy widgets", tag: "Items", access: "any",
  success: { status: 200, description: "Widgets.", body: { schema: z.array(widget), example: [{ id: "w1" }] }, link: true },
  deprecated: { since: "2026-11-24", sunset: "2027-06-01", changelogEntry: "2026-11-24" },
};
const legacyGet: ApiOperation = {
  method: "get", path: "/v1/ext/legacy-widgets/{widget_id}", operationId: "getLegacyWidget", summary: "Get a legacy widget", tag: "Items", access: "any",
  path_params: z.object({ widget_id: z.string().min(1) }),
  success: { status: 200, description: "The widget.", body: { schema: widget, example: { id: "w1" } } },
  errors: ["not_found"],
  deprecated: { since: "2026-11-24", changelogEntry: "2026-11-24" },
};

const DEPRECATION = `@${Date.UTC(2026, 10, 24) / 1000}`;
const LINK = `<${API_CHANGELOG_URL}#2026-11-24>; rel="deprecation"; type="text/html"`;

let server: Server;
let base: string;
beforeAll(async () => {
  const app = express();
  app.use(routeSemantics(buildRouteTable([legacyList, legacyGet])));
  app.get("/v1/ext/legacy-widgets", (_req, res) => {
    res.append("Link", '</v1/ext/legacy-widgets?cursor=abc>; rel="next"');
    res.json([{ id: "w1" }]);
  });
  app.get("/v1/ext/legacy-widgets/:widget_id", () => {
    throw domainError("not_found", "Widget was not found.");
  });
  app.use(renderProblem(pino({ level: "silent" })));
  server = app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

describe("a deprecated operation", () => {
  it("is deprecated: true in the document, with its headers documented; no real operation is", () => {
    const doc = buildOpenApiDocument([...API_OPERATIONS, legacyList, legacyGet]) as any;
    const list = doc.paths["/v1/ext/legacy-widgets"].get;
    expect(list.deprecated).toBe(true);
    expect(Object.keys(list.responses["200"].headers)).toEqual(expect.arrayContaining(["Deprecation", "Sunset", "Link"]));
    expect(list.description).toMatch(/Deprecated\*\* since 2026-11-24/);
    const one = doc.paths["/v1/ext/legacy-widgets/{widget_id}"].get;
    expect(one.deprecated).toBe(true);
    expect(Object.keys(one.responses["200"].headers)).not.toContain("Sunset");
    const real = buildOpenApiDocument(API_OPERATIONS) as any;
    for (const item of Object.values(real.paths) as any[]) for (const op of Object.values(item) as any[]) expect(op.deprecated).toBeUndefined();
  });

  it("answers with Deprecation, Sunset and Link rel=deprecation beside its own Link rel=next", async () => {
    const res = await fetch(`${base}/v1/ext/legacy-widgets`);
    expect(res.status).toBe(200);
    expect(res.headers.get("deprecation")).toBe(DEPRECATION);
    expect(res.headers.get("sunset")).toBe("Tue, 01 Jun 2027 00:00:00 GMT");
    expect(res.headers.get("link")).toBe(`${LINK}, </v1/ext/legacy-widgets?cursor=abc>; rel="next"`);
  });

  it("carries the headers on its error responses too, and Sunset only once a date is set", async () => {
    const res = await fetch(`${base}/v1/ext/legacy-widgets/w9`);
    expect(res.status).toBe(404);
    expect(res.headers.get("deprecation")).toBe(DEPRECATION);
    expect(res.headers.get("link")).toBe(LINK);
    expect(res.headers.get("sunset")).toBeNull();
  });

  it("does not mark a 405 for a method the path lacks (that is no response of the operation)", async () => {
    const res = await fetch(`${base}/v1/ext/legacy-widgets`, { method: "DELETE" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
    expect(res.headers.get("deprecation")).toBeNull();
  });
});
