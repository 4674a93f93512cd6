/**
 * Test harness: a real Stageline server on an ephemeral port with a fresh database, plus a company, an all-scope
 * API key and a "Sales" pipeline (stages Lead, Qualified, Proposal, Closed; statuses Open, Won, Lost; custom fields
 * email and deal_value; duplicate detection on email).
 *
 * Database: in-memory PGlite by default, loaded from the migrated template (pglite-template.ts) instead of initdb
 * and every migration; when TEST_DATABASE_URL is set (CI's PostgreSQL pass) a fresh schema on that server per test
 * server.
 */
import crypto from "node:crypto";
import { SCOPES, type Blueprint, type Scope } from "@stageline/shared";
import type { Config } from "../../src/config/config";
import { startServer, type RunningServer } from "../../src/server";
import { createApiKey } from "../../src/services/api-keys";
import { assertDocumentedResponse } from "./openapi-validator";
import { pgliteTemplate } from "./pglite-template";

export const SALES_BLUEPRINT: Blueprint = {
  custom_fields: [
    { key: "email", label: "Email", type: "email" },
    { key: "deal_value", label: "Deal value", type: "number" },
  ],
  duplicate_detection: { fields: ["email"], match: "any" },
} as Blueprint;

export interface TestPipeline {
  id: string;
  name: string;
  stages: { id: string; name: string; statuses: { id: string; name: string }[] }[];
}

export interface TestServer {
  server: RunningServer;
  url: string;
  companyId: string;
  apiKey: string;
  keyId: string;
  pipeline: TestPipeline;
  /** Creates another key of the same company. */
  newKey(scopes?: Scope[], opts?: { expiresAt?: Date }): Promise<{ key: string; id: string }>;
  /** Creates another company with its own key and Sales pipeline (tenant-isolation tests). */
  newCompany(name?: string): Promise<{ companyId: string; apiKey: string; pipeline: TestPipeline }>;
  /**
   * fetch() against the server with `x-api-key` (default: the main key), a JSON body and any extra `headers`.
   * @throws Error when the response under /v1/ext is not one the OpenAPI document allows (openapi-validator.ts).
   */
  request(method: string, path: string, body?: unknown, key?: string | null, headers?: Record<string, string>): Promise<TestResponse>;
  close(): Promise<void>;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  body: any;
}

/**
 * Config for a test server: ephemeral port, loopback, test mode, a fresh database (in memory from the migrated
 * template, or a new schema on TEST_DATABASE_URL). An `overrides.dataDir` on disk gets no template.
 */
export function testConfig(overrides: Partial<Config> = {}): Partial<Config> {
  const pgUrl = process.env.TEST_DATABASE_URL;
  const inMemory = (overrides.dataDir ?? "memory://") === "memory://";
  const schema = `t_${Date.now().toString(36)}_${crypto.randomBytes(4).toString("hex")}`;
  const databaseUrl = pgUrl ? `${pgUrl}${pgUrl.includes("?") ? "&" : "?"}schema=${schema}` : undefined;
  return {
    port: 0,
    host: "127.0.0.1",
    dataDir: "memory://",
    databaseUrl,
    mode: "test",
    logLevel: process.env.TEST_LOG_LEVEL ?? "silent",
    seedDemo: false,
    databaseTemplate: !pgUrl && inMemory ? pgliteTemplate() : undefined,
    ...overrides,
  };
}

/** Creates a Sales pipeline for a company directly in the database. */
export async function createSalesPipeline(server: RunningServer, companyId: string, name = "Sales"): Promise<TestPipeline> {
  const prisma = server.ctx.prisma;
  const pipeline = await prisma.pipeline.create({
    data: { companyId, name, shortIdPrefix: name.toUpperCase().replace(/[^A-Z0-9]/g, "").slice(0, 10) || "P", blueprint: SALES_BLUEPRINT as object },
  });
  const stages: TestPipeline["stages"] = [];
  for (const [i, stageName] of ["Lead", "Qualified", "Proposal", "Closed"].entries()) {
    const stage = await prisma.stage.create({ data: { pipelineId: pipeline.id, name: stageName, position: i } });
    const statuses = [];
    for (const [j, statusName] of ["Open", "Won", "Lost"].entries()) {
      statuses.push(await prisma.status.create({ data: { stageId: stage.id, name: statusName, position: j }, select: { id: true, name: true } }));
    }
    stages.push({ id: stage.id, name: stage.name, statuses });
  }
  return { id: pipeline.id, name: pipeline.name, stages };
}

/** Starts a test server with one company, key and pipeline. Call `close()` in afterAll. */
export async function startTestServer(overrides: Partial<Config> = {}): Promise<TestServer> {
  const server = await startServer(testConfig(overrides));
  const prisma = server.ctx.prisma;
  const makeCompany = async (name: string) => {
    const company = await prisma.company.create({ data: { name } });
    const { key } = await createApiKey(prisma, { companyId: company.id, name: "Test key" });
    const pipeline = await createSalesPipeline(server, company.id);
    return { companyId: company.id, apiKey: key, pipeline };
  };
  const main = await makeCompany("Acme Test");
  const keyRow = await prisma.apiKey.findFirstOrThrow({ where: { companyId: main.companyId } });
  const request = async (
    method: string,
    path: string,
    body?: unknown,
    key: string | null = main.apiKey,
    extraHeaders: Record<string, string> = {},
  ): Promise<TestResponse> => {
    const headers: Record<string, string> = { ...extraHeaders };
    if (key !== null) headers["x-api-key"] = key;
    let payload: string | undefined;
    if (body !== undefined) {
      headers["content-type"] = "application/json";
      payload = typeof body === "string" ? body : JSON.stringify(body);
    }
    const res = await fetch(server.url + path, { method, headers, body: payload });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      /* keep the raw text */
    }
    // Every response the API tests receive must be one the OpenAPI document describes (so the document cannot lie).
    assertDocumentedResponse({ method, url: path, status: res.status, headers: res.headers, body: parsed });
    return { status: res.status, headers: res.headers, body: parsed };
  };
  return {
    server,
    url: server.url,
    companyId: main.companyId,
    apiKey: main.apiKey,
    keyId: keyRow.id,
    pipeline: main.pipeline,
    newKey: async (scopes: Scope[] = [...SCOPES], opts = {}) => {
      const { key, row } = await createApiKey(prisma, { companyId: main.companyId, name: "Extra key", scopes, expiresAt: opts.expiresAt });
      return { key, id: row.id };
    },
    newCompany: (name = "Other Co") => makeCompany(name),
    request,
    close: () => server.close(),
  };
}

/**
 * `startTestServer` with the per-key rate limit raised to `perMinute` (the server reads RATE_LIMIT_PER_MINUTE at
 * start), for tests that send thousands of requests with one key: fuzzing, the access matrix.
 */
export async function startTestServerWithRateLimit(perMinute: number, overrides: Partial<Config> = {}): Promise<TestServer> {
  process.env.RATE_LIMIT_PER_MINUTE = String(perMinute);
  try {
    return await startTestServer(overrides);
  } finally {
    delete process.env.RATE_LIMIT_PER_MINUTE;
  }
}
