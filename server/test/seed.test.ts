/**
 * The demo seed: `npm start` on an empty database creates "Demo Company" with the spec's sample Sales pipeline and an
 * all-scope "Demo key"; later starts reuse it. The last test runs the compiled server (`node server/dist/main.js`):
 * it assumes `server/dist` is current, which the root `npm test` guarantees (`pretest` runs `npm run build`; when
 * running jest directly, run `npx tsc -b` first).
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { SCOPES } from "@stageline/shared";
import type { AppContext } from "../src/context";
import { openDatabase } from "../src/db/database";
import { DEMO_USER_EMAIL, seedDemoIfEmpty } from "../src/seed/demo";
import { signInOverHttp } from "./helpers/console-browser";
import { startServer, type RunningServer } from "../src/server";
import { startTestServer, testConfig } from "./helpers/test-server";

const REPO_ROOT = path.resolve(__dirname, "../..");

async function get(server: RunningServer, urlPath: string, key: string) {
  const res = await fetch(server.url + urlPath, { headers: { "x-api-key": key } });
  return { status: res.status, body: (await res.json()) as any };
}

describe("demo seed on an empty database", () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer(testConfig({ seedDemo: true }));
  });
  afterAll(async () => {
    await server?.close();
  });

  it("returns an API key for the demo company on the first start", async () => {
    expect(server.demoApiKey).toMatch(/^sl_/);
    const me = await get(server, "/v1/ext/me", server.demoApiKey!);
    expect(me.status).toBe(200);
    expect(me.body.company.name).toBe("Demo Company");
  });

  it("creates one company named Demo Company with the slug demo", async () => {
    const companies = await server.ctx.prisma.company.findMany();
    expect(companies).toHaveLength(1);
    expect(companies[0]).toMatchObject({ name: "Demo Company", slug: "demo", subscriptionActive: true });
  });

  it("gives the demo key the name Demo key and every scope", async () => {
    const keys = await server.ctx.prisma.apiKey.findMany();
    expect(keys).toHaveLength(1);
    expect(keys[0]!.name).toBe("Demo key");
    expect([...keys[0]!.scopes].sort()).toEqual([...SCOPES].sort());
    expect(keys[0]!.expiresAt).toBeNull();
  });

  it("creates the Sales pipeline with prefix SALES, stages in order and statuses Open, Won, Lost on each", async () => {
    const pipelines = await server.ctx.prisma.pipeline.findMany({
      include: { stages: { orderBy: { position: "asc" }, include: { statuses: { orderBy: { position: "asc" } } } } },
    });
    expect(pipelines).toHaveLength(1);
    const sales = pipelines[0]!;
    expect(sales.name).toBe("Sales");
    expect(sales.shortIdPrefix).toBe("SALES");
    expect(sales.stages.map((s) => s.name)).toEqual(["Lead", "Qualified", "Proposal", "Closed"]);
    for (const stage of sales.stages) expect(stage.statuses.map((s) => s.name)).toEqual(["Open", "Won", "Lost"]);
  });

  it("stores the blueprint: email and deal_value custom fields, duplicate detection on email (any)", async () => {
    const sales = await server.ctx.prisma.pipeline.findFirstOrThrow();
    expect(sales.blueprint).toEqual({
      custom_fields: [
        { key: "email", label: "Email", type: "email" },
        { key: "deal_value", label: "Deal value", type: "number" },
      ],
      duplicate_detection: { fields: ["email"], match: "any" },
    });
  });

  it("shows the demo pipeline to the demo key", async () => {
    const res = await get(server, "/v1/ext/pipelines", server.demoApiKey!);
    expect(res.status).toBe(200);
    expect(res.body.map((p: { name: string }) => p.name)).toEqual(["Sales"]);
  });

  it("returns null and changes nothing when seeding again", async () => {
    expect(await seedDemoIfEmpty(server.ctx)).toBeNull();
    expect(await server.ctx.prisma.company.count()).toBe(1);
    expect(await server.ctx.prisma.apiKey.count()).toBe(1);
    expect(await server.ctx.prisma.pipeline.count()).toBe(1);
    expect(await server.ctx.prisma.user.count()).toBe(1);
  });

  it("creates the demo console owner with a random password, who can sign in", async () => {
    expect(server.demoUser).toEqual({ email: DEMO_USER_EMAIL, password: expect.stringMatching(/^[A-Za-z0-9_-]{20}$/) });
    const owner = await server.ctx.prisma.user.findUniqueOrThrow({ where: { email: DEMO_USER_EMAIL } });
    expect(owner.role).toBe("owner");
    expect((await signInOverHttp(server.url, DEMO_USER_EMAIL, server.demoUser!.password)).status).toBe(303);
  });
});

describe("demo seed on a database that already has a company", () => {
  it("returns null and creates no demo company", async () => {
    const t = await startTestServer();
    try {
      expect(await seedDemoIfEmpty(t.server.ctx)).toBeNull();
      expect(await t.server.ctx.prisma.company.findUnique({ where: { slug: "demo" } })).toBeNull();
    } finally {
      await t.close();
    }
  });
});

describe("demo seed started twice at once", () => {
  it("seeds exactly one demo company and hands out exactly one key", async () => {
    const server = await startServer(testConfig({ seedDemo: false }));
    // On PostgreSQL the second seeder uses its own connection pool, as a second server process would.
    const second = server.db.kind === "postgres" ? await openDatabase({ databaseUrl: server.ctx.config.databaseUrl, dataDir: "memory://" }) : null;
    const otherCtx: AppContext = second ? { ...server.ctx, db: second, prisma: second.prisma } : server.ctx;
    try {
      const results = await Promise.all([seedDemoIfEmpty(server.ctx), seedDemoIfEmpty(otherCtx), seedDemoIfEmpty(server.ctx)]);
      expect(results.filter((key) => key !== null)).toHaveLength(1);
      expect(await server.ctx.prisma.company.count()).toBe(1);
      expect(await server.ctx.prisma.pipeline.count()).toBe(1);
      expect(await server.ctx.prisma.apiKey.count()).toBe(1);
    } finally {
      await second?.close();
      await server.close();
    }
  });
});

describe("npm start (compiled server)", () => {
  /** Starts `node server/dist/main.js` on `dataDir`, waits for "listening", stops it; returns its stdout. */
  async function startAndStop(dataDir: string): Promise<string> {
    const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "silent", NODE_ENV: "test" };
    delete env.DATABASE_URL;
    const child = spawn(process.execPath, [path.join(REPO_ROOT, "server/dist/main.js")], { cwd: REPO_ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code, signal) => { if (code === null) stderr += `signal ${signal}`; resolve(code); }));
    await new Promise<void>((resolve, reject) => {
      child.stdout.on("data", (chunk) => {
        stdout += chunk;
        if (stdout.includes("Stageline listening")) resolve();
      });
      void exited.then((code) => reject(new Error(`server exited with ${code}: ${stderr}`)));
    });
    // main.ts installs its SIGTERM handler right after printing; one answered request proves it has run.
    const url = /listening on (\S+)/.exec(stdout)![1]!;
    expect((await fetch(`${url}/health`)).status).toBe(200);
    child.kill("SIGTERM");
    const code = await exited;
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
    return stdout;
  }

  it("prints the demo API key, the console URL and the demo user and password on the first start only", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "stageline-seed-"));
    try {
      const first = await startAndStop(dataDir);
      expect(first).toMatch(/^Demo API key: sl_\S+$/m);
      const port = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(first)![1];
      expect(first).toContain(`\nConsole: http://127.0.0.1:${port}/console/\nDemo user: ${DEMO_USER_EMAIL}\nDemo password: `);
      expect(first).toMatch(/^Demo password: [A-Za-z0-9_-]{20}$/m);
      const second = await startAndStop(dataDir);
      expect(second).not.toMatch(/Demo API key|Demo user|Demo password/);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000); // two process starts, the first one creating the PGlite database
});
