/**
 * The admin CLI end to end. Most commands run in this process through the CLI's own entry point `runCli(argv, io)`
 * (server/src/admin/cli.ts: the same parsing, connection choice and output as `node server/dist/admin/cli.js`,
 * with the environment and the working directory passed in), which spares a cold Node and PGlite per command; a few
 * tests run the built CLI as a real child process (`runCliProcess`): help, a command through a running server, the
 * default ./data of the working directory, and the first --init on a database of its own. Commands run (a) while a
 * server runs on the embedded PGlite database of its DATA_DIR (they go over the server's admin API), and (b) with no
 * server running (the CLI opens the database itself: PGlite in DATA_DIR, or PostgreSQL when TEST_DATABASE_URL is set).
 *
 * The child-process tests bring `server/dist` up to date first (`tsc -b server`, helpers/server-process.ts).
 */
import { execFile, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { CompanyCreatedSchema, KeyCreatedSchema, KeySummarySchema, SCOPES } from "@stageline/shared";
import { ImportedPipelineSchema, TwoFactorResetSchema, UserCreatedSchema, UserSummarySchema } from "../src/admin/admin-api";
import { beginSetup, confirmSetup, pendingSetup, twoFactorStatus } from "../src/services/two-factor";
import { Secret, TOTP } from "otpauth";
import { runCliInProcess } from "./helpers/cli-server";
import { ensureServerBuilt } from "./helpers/server-process";
import { signInOverHttp } from "./helpers/console-browser";
import { startServer, type RunningServer } from "../src/server";
import { testConfig } from "./helpers/test-server";

// A child-process command is a fresh Node process that may open PGlite (WebAssembly start, initdb on a new DATA_DIR).
jest.setTimeout(120_000);

const REPO_ROOT = path.resolve(__dirname, "../..");
const CLI = path.join(REPO_ROOT, "server/dist/admin/cli.js");

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The CLI's environment: DATA_DIR / DATABASE_URL as given (nothing else of the database environment leaks in). */
function cliEnv(db: { dataDir: string | undefined; databaseUrl?: string }): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_ENV: "test" };
  delete env.DATA_DIR;
  delete env.DATABASE_URL;
  delete env.INIT_CWD;
  if (db.dataDir !== undefined) env.DATA_DIR = db.dataDir;
  if (db.databaseUrl) env.DATABASE_URL = db.databaseUrl;
  return env;
}

/** Runs one CLI command in this process (helpers/cli-server.ts `runCliInProcess`) with the environment of `cliEnv`. */
function runCli(args: string[], db: { dataDir: string | undefined; databaseUrl?: string }): Promise<CliResult> {
  return runCliInProcess(args, cliEnv(db), REPO_ROOT);
}

/**
 * Runs `node server/dist/admin/cli.js ...args` as a child process with the environment of `cliEnv`; with `dataDir`
 * undefined DATA_DIR is unset (then give `cwd`, where the default ./data is looked for).
 */
function runCliProcess(args: string[], db: { dataDir: string | undefined; databaseUrl?: string }, cwd: string = REPO_ROOT): Promise<CliResult> {
  ensureServerBuilt();
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { cwd, env: cliEnv(db) }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === "number" ? error.code : null) : 0, stdout, stderr });
    });
  });
}

/** What every command that reached the data prints first on stderr: which database, and how. */
const DATABASE_LINE = /^Database: [^\n]+\.\n/;
/** stderr of a command that succeeded: the database line alone. */
const ONLY_DATABASE_LINE = /^Database: [^\n]+\.\n$/;

function tempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), "stageline-cli-"));
}

const SALES_FILE = {
  name: "Sales",
  short_id_prefix: "SALES",
  stages: [{ name: "Lead" }, { name: "Qualified" }, { name: "Closed", statuses: ["Won", "Lost"] }],
  custom_fields: [{ key: "email", label: "Email", type: "email" }],
  duplicate_detection: { fields: ["email"], match: "any" },
};

async function apiGet(server: RunningServer, urlPath: string, key: string) {
  const res = await fetch(server.url + urlPath, { headers: { "x-api-key": key } });
  return { status: res.status, body: (await res.json()) as any };
}

describe("admin CLI usage", () => {
  const db = { dataDir: path.join(os.tmpdir(), "stageline-cli-never-created") };

  it("prints the command list on --help and exits 0 (the built CLI, a real process)", async () => {
    const res = await runCliProcess(["--help"], db);
    expect(res.code).toBe(0);
    for (const command of [
      "companies create",
      "companies set-subscription",
      "keys create",
      "keys list",
      "keys rename",
      "keys revoke",
      "users create",
      "users list",
      "users reset-password",
      "users reset-2fa",
      "users remove",
      "pipelines import",
    ]) {
      expect(res.stdout).toContain(command);
    }
  });

  it.each([
    ["companies", "create"],
    ["companies", "set-subscription"],
    ["keys", "create"],
    ["keys", "list"],
    ["keys", "rename"],
    ["keys", "revoke"],
    ["users", "create"],
    ["users", "list"],
    ["users", "reset-password"],
    ["users", "reset-2fa"],
    ["users", "remove"],
    ["pipelines", "import"],
  ])("prints help for %s %s and exits 0", async (group, name) => {
    const res = await runCli([group, name, "--help"], db);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain(`Usage: npm run admin -- ${group} ${name}`);
  });

  it("exits 2 with the usage on stderr when no command is given", async () => {
    const res = await runCli([], db);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain("Usage: npm run admin --");
    expect(res.stdout).toBe("");
  });

  it("exits 2 on an unknown command", async () => {
    const res = await runCli(["companies", "delete"], db);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('Unknown command "companies delete"');
  });

  it("exits 2 on an unknown option", async () => {
    const res = await runCli(["companies", "create", "--name", "X", "--colour", "red"], db);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain("--colour");
  });

  it("exits 2 when a required option is missing", async () => {
    const res = await runCli(["keys", "create", "--name", "X"], db);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain("Missing --company");
  });

  it("exits 2 unless exactly one of --active and --inactive is given", async () => {
    const res = await runCli(["companies", "set-subscription", "some-id", "--active", "--inactive"], db);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain("--active");
  });

  it("exits 1 naming the file when the pipeline file does not exist", async () => {
    const res = await runCli(["pipelines", "import", "--company", "c", "--file", "/nonexistent/pipeline.json"], db);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain("/nonexistent/pipeline.json");
  });
});

describe("admin CLI while a server runs on the embedded database", () => {
  let dataDir: string;
  let server: RunningServer;
  let companyId: string;
  const db = () => ({ dataDir });

  beforeAll(async () => {
    dataDir = tempDir();
    server = await startServer({ ...testConfig(), dataDir, databaseUrl: undefined });
    companyId = (await server.ctx.prisma.company.create({ data: { name: "Acme" } })).id;
  });
  afterAll(async () => {
    await server?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it("finds the server through admin.json (pid, url, token), readable by its owner only", () => {
    const file = path.join(dataDir, "admin.json");
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(fs.readFileSync(file, "utf8"))).toEqual({ pid: process.pid, url: server.url, token: server.ctx.adminToken });
  });

  it("says on stderr that it went through the running server, and which database that server uses (a real process)", async () => {
    const res = await runCliProcess(["users", "list", "--company", companyId, "--json"], db());
    expect(res.code).toBe(0);
    expect(res.stderr).toBe(`Database: the embedded database in ${path.join(dataDir, "pglite")}, through the running server at ${server.url} (pid ${process.pid}).\n`);
  });

  it("run with another DATA_DIR than the server's, creates nothing there and exits 1 naming --init (issue 19 item 6)", async () => {
    const elsewhere = path.join(tempDir(), "data");
    const res = await runCli(["users", "create", "--company", companyId, "--email", "lost@acme.example", "--role", "owner"], { dataDir: elsewhere });
    expect(res.code).toBe(1);
    expect(res.stdout).toBe("");
    expect(res.stderr).toBe(
      `Error: There is no Stageline database in ${path.join(elsewhere, "pglite")} (DATA_DIR=${elsewhere}), and no server is running there. ` +
        `Run this command with the DATA_DIR (or DATABASE_URL) the server uses. To create a new, empty embedded database here, run it again with --init.\n`,
    );
    expect(fs.existsSync(elsewhere)).toBe(false);
    expect(await server.ctx.prisma.user.count({ where: { email: "lost@acme.example" } })).toBe(0);
    fs.rmSync(path.dirname(elsewhere), { recursive: true, force: true });
  });

  it("run without DATA_DIR, looks in ./data of the working directory, and refuses there too without creating it", async () => {
    const cwd = tempDir();
    try {
      const res = await runCliProcess(["companies", "create", "--name", "Lost"], { dataDir: undefined }, cwd);
      expect(res.code).toBe(1);
      expect(res.stderr).toContain(`(DATA_DIR is not set, so the default ./data in ${cwd})`);
      expect(res.stderr).toContain("--init");
      expect(fs.readdirSync(cwd)).toEqual([]);
    } finally {
      fs.rmSync(cwd, { recursive: true, force: true });
    }
  });

  it("companies create --json prints only { id, name }, and the running server knows the company", async () => {
    const res = await runCli(["companies", "create", "--name", "Acme via server", "--json"], db());
    expect(res).toMatchObject({ code: 0, stderr: expect.stringMatching(ONLY_DATABASE_LINE) });
    const company = CompanyCreatedSchema.strict().parse(JSON.parse(res.stdout));
    expect(company.name).toBe("Acme via server");
    expect(await server.ctx.prisma.company.findUnique({ where: { id: company.id } })).not.toBeNull();
  });

  it("companies create without --json prints just the id", async () => {
    const res = await runCli(["companies", "create", "--name", "Plain"], db());
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^[0-9a-f-]{36}\n$/);
  });

  it("keys create --json prints { id, name, scopes, key } with every scope, and the key works on the server", async () => {
    const res = await runCli(["keys", "create", "--company", companyId, "--name", "Zapier", "--json"], db());
    expect(res.code).toBe(0);
    const created = KeyCreatedSchema.strict().parse(JSON.parse(res.stdout));
    expect([...created.scopes].sort()).toEqual([...SCOPES].sort());
    const me = await apiGet(server, "/v1/ext/me", created.key);
    expect(me.status).toBe(200);
    expect(me.body.company.id).toBe(companyId);
  });

  it("keys create --scopes gives exactly those scopes", async () => {
    const res = await runCli(["keys", "create", "--company", companyId, "--name", "Reader", "--scopes", "items:read, tasks:read", "--json"], db());
    expect(KeyCreatedSchema.parse(JSON.parse(res.stdout)).scopes).toEqual(["items:read", "tasks:read"]);
  });

  it("keys create exits 1 naming an unknown scope", async () => {
    const res = await runCli(["keys", "create", "--company", companyId, "--name", "Bad", "--scopes", "items:read,root"], db());
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('Unknown scope "root"');
    expect(res.stdout).toBe("");
  });

  it("keys create exits 1 for an unknown company", async () => {
    const res = await runCli(["keys", "create", "--company", "01900000-0000-7000-8000-000000000000", "--name", "X"], db());
    expect(res.code).toBe(1);
    expect(res.stderr).toContain("Company 01900000-0000-7000-8000-000000000000 was not found.");
  });

  it("keys list shows a table with id, name and prefix, never the key", async () => {
    const created = KeyCreatedSchema.parse(JSON.parse((await runCli(["keys", "create", "--company", companyId, "--name", "Listed", "--json"], db())).stdout));
    const res = await runCli(["keys", "list", "--company", companyId], db());
    expect(res.code).toBe(0);
    const [header, ...rows] = res.stdout.trimEnd().split("\n");
    expect(header!.split(/\s{2,}/)).toEqual(["ID", "NAME", "PREFIX", "SCOPES", "EXPIRES", "REVOKED", "LAST USED"]);
    const row = rows.find((r) => r.startsWith(created.id));
    expect(row).toContain("Listed");
    expect(row).toContain(created.key.split("_").slice(0, 2).join("_"));
    expect(res.stdout).not.toContain(created.key);
    // --json: one JSON object (docs/operations.md "Admin CLI"), the keys under "keys", never a key value.
    const asJson = await runCli(["keys", "list", "--company", companyId, "--json"], db());
    const listed = JSON.parse(asJson.stdout);
    expect(Object.keys(listed).sort()).toEqual(["company_id", "keys"]);
    expect(listed.company_id).toBe(companyId);
    expect(KeySummarySchema.array().parse(listed.keys).find((k) => k.id === created.id)).toMatchObject({ name: "Listed", prefix: created.prefix });
    expect(asJson.stdout).not.toContain(created.key);
  });

  it("keys create --json prints the key with its prefix, scopes, expiry and creation time", async () => {
    const expiresAt = new Date(Date.now() + 30 * 24 * 3600 * 1000).toISOString();
    const res = await runCli(["keys", "create", "--company", companyId, "--name", "Expiring", "--expires-at", expiresAt, "--json"], db());
    expect(res.code).toBe(0);
    const created = KeyCreatedSchema.strict().parse(JSON.parse(res.stdout));
    expect(created.expires_at).toBe(expiresAt);
    expect(created.key.startsWith(`${created.prefix}_`)).toBe(true);
    const never = KeyCreatedSchema.parse(JSON.parse((await runCli(["keys", "create", "--company", companyId, "--name", "Forever", "--json"], db())).stdout));
    expect(never.expires_at).toBeNull();
  });

  it("keys rename and keys revoke: the revoked key gets 401", async () => {
    const created = KeyCreatedSchema.parse(JSON.parse((await runCli(["keys", "create", "--company", companyId, "--name", "Old name", "--json"], db())).stdout));
    const renamed = await runCli(["keys", "rename", created.id, "--name", "New name"], db());
    expect(renamed.code).toBe(0);
    expect((await apiGet(server, "/v1/ext/me", created.key)).body.key.name).toBe("New name");
    const revoked = await runCli(["keys", "revoke", created.id, "--json"], db());
    expect(revoked.code).toBe(0);
    expect(KeySummarySchema.parse(JSON.parse(revoked.stdout)).revoked_at).not.toBeNull();
    expect((await apiGet(server, "/v1/ext/pipelines", created.key)).status).toBe(401);
  });

  it("pipelines import prints the pipeline id and stages; the API lists them in order", async () => {
    const file = path.join(dataDir, "sales.json");
    fs.writeFileSync(file, JSON.stringify(SALES_FILE));
    const res = await runCli(["pipelines", "import", "--company", companyId, "--file", file], db());
    expect(res.code).toBe(0);
    const id = /\(id (\S+)\);/.exec(res.stdout)![1]!;
    expect(res.stdout).toContain("1. Lead");
    expect(res.stdout).toContain("3. Closed");
    const key = KeyCreatedSchema.parse(JSON.parse((await runCli(["keys", "create", "--company", companyId, "--name", "Check", "--json"], db())).stdout)).key;
    const stages = await apiGet(server, `/v1/ext/pipelines/${id}/stages`, key);
    expect(stages.body.map((s: { name: string }) => s.name)).toEqual(["Lead", "Qualified", "Closed"]);
  });

  it("pipelines import exits 1 listing the failing fields of an invalid file", async () => {
    const file = path.join(dataDir, "broken.json");
    fs.writeFileSync(file, JSON.stringify({ name: "Broken", stages: [], custom_fields: [{ key: "x", label: "X", type: "colour" }] }));
    const res = await runCli(["pipelines", "import", "--company", companyId, "--file", file], db());
    expect(res.code).toBe(1);
    expect(res.stderr).toContain("stages:");
    expect(res.stderr).toContain("custom_fields[0].type:");
  });

  it("companies set-subscription --inactive makes the company's keys get 402", async () => {
    const created = KeyCreatedSchema.parse(JSON.parse((await runCli(["keys", "create", "--company", companyId, "--name", "Paused", "--json"], db())).stdout));
    const res = await runCli(["companies", "set-subscription", companyId, "--inactive"], db());
    expect(res.code).toBe(0);
    expect(res.stdout).toContain("inactive");
    expect((await apiGet(server, "/v1/ext/me", created.key)).status).toBe(402);
    expect((await runCli(["companies", "set-subscription", companyId, "--active"], db())).code).toBe(0);
    expect((await apiGet(server, "/v1/ext/me", created.key)).status).toBe(200);
  });

  it("users create --json prints exactly { id, email, role, company_id, password }; the user signs in to the console", async () => {
    const res = await runCli(["users", "create", "--company", companyId, "--email", "Ada@Acme.Example", "--role", "owner", "--json"], db());
    expect(res).toMatchObject({ code: 0, stderr: expect.stringMatching(ONLY_DATABASE_LINE) });
    const user = UserCreatedSchema.strict().parse(JSON.parse(res.stdout));
    expect(Object.keys(JSON.parse(res.stdout))).toEqual(["id", "email", "role", "company_id", "password"]);
    expect(user).toMatchObject({ email: "ada@acme.example", role: "owner", company_id: companyId });
    expect(user.password.length).toBeGreaterThanOrEqual(12);
    expect((await signInOverHttp(server.url, "ada@acme.example", user.password)).status).toBe(303);
    expect((await signInOverHttp(server.url, "ada@acme.example", "not the password")).status).toBe(401);
    const stored = await server.ctx.prisma.user.findUniqueOrThrow({ where: { id: user.id } });
    expect(stored.passwordHash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(stored.passwordHash).not.toContain(user.password);
  });

  it("users create without --json prints the password on its own line; a taken email or an unknown role exits 1", async () => {
    const res = await runCli(["users", "create", "--company", companyId, "--email", "member@acme.example", "--role", "member"], db());
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^Created member member@acme\.example \(id [0-9a-f-]{36}\) in company .*\nThe password is shown only now.*\n[A-Za-z0-9_-]{20}\n$/);
    const taken = await runCli(["users", "create", "--company", companyId, "--email", "MEMBER@acme.example", "--role", "admin"], db());
    expect(taken.code).toBe(1);
    expect(taken.stderr).toContain("member@acme.example already has a Stageline account.");
    const badRole = await runCli(["users", "create", "--company", companyId, "--email", "x@acme.example", "--role", "boss"], db());
    expect(badRole.code).toBe(1);
    expect(badRole.stderr).toContain("role must be owner, admin or member.");
  });

  it("users list, users reset-password and users remove; the last owner cannot be removed; changes are audited as cli", async () => {
    const list = await runCli(["users", "list", "--company", companyId, "--json"], db());
    const listed = JSON.parse(list.stdout);
    expect(listed.company_id).toBe(companyId);
    const users = UserSummarySchema.array().parse(listed.users);
    const owner = users.find((u) => u.role === "owner")!;
    const member = users.find((u) => u.email === "member@acme.example")!;
    const table = await runCli(["users", "list", "--company", companyId], db());
    expect(table.stdout.split("\n")[0]!.split(/\s{2,}/)).toEqual(["ID", "EMAIL", "ROLE", "CREATED"]);
    expect(table.stdout).toContain("member@acme.example");

    const reset = await runCli(["users", "reset-password", member.id, "--json"], db());
    expect(reset.code).toBe(0);
    const fresh = UserCreatedSchema.strict().parse(JSON.parse(reset.stdout));
    expect((await signInOverHttp(server.url, "member@acme.example", fresh.password)).status).toBe(303);

    const lastOwner = await runCli(["users", "remove", owner.id], db());
    expect(lastOwner.code).toBe(1);
    expect(lastOwner.stderr).toContain("last owner");
    const removed = await runCli(["users", "remove", member.id], db());
    expect(removed).toMatchObject({ code: 0, stdout: `Removed user member@acme.example (id ${member.id}).\n` });
    expect((await signInOverHttp(server.url, "member@acme.example", fresh.password)).status).toBe(401);
    const unknown = await runCli(["users", "remove", member.id], db());
    expect(unknown.code).toBe(1);
    expect(unknown.stderr.replace(DATABASE_LINE, "")).toBe(`Error: User ${member.id} was not found.\n`);

    const events = await server.ctx.prisma.auditEvent.findMany({ where: { companyId, actorType: "cli" }, orderBy: { createdAt: "asc" } });
    expect(events.map((e) => e.action)).toEqual(expect.arrayContaining(["api_key.created", "user.created", "user.password_reset", "user.removed"]));
    expect(events.every((e) => e.actorLabel === "cli")).toBe(true);
    expect(JSON.stringify(events)).not.toContain(fresh.password);
  });

  it("users reset-2fa turns off a user's two-factor sign-in, ends their sessions and is audited as cli", async () => {
    const prisma = server.ctx.prisma;
    const created = UserCreatedSchema.parse(JSON.parse((await runCli(["users", "create", "--company", companyId, "--email", "lost@acme.example", "--role", "admin", "--json"], db())).stdout));
    await beginSetup(prisma, created.id);
    const { secret } = (await pendingSetup(prisma, created.id))!;
    const code = new TOTP({ secret: Secret.fromBase32(secret) }).generate();
    await confirmSetup(prisma, created.id, code, { actor: { type: "cli" } });
    expect((await signInOverHttp(server.url, created.email, created.password)).status).toBe(303); // pending the second step
    expect(await prisma.consoleSession.count({ where: { userId: created.id } })).toBe(1);

    const res = await runCli(["users", "reset-2fa", created.id, "--json"], db());
    expect(res.code).toBe(0);
    expect(res.stderr).toMatch(ONLY_DATABASE_LINE);
    expect(TwoFactorResetSchema.strict().parse(JSON.parse(res.stdout))).toEqual({ id: created.id, email: "lost@acme.example", company_id: companyId });
    expect((await twoFactorStatus(prisma, created.id)).enabled).toBe(false);
    expect(await prisma.consoleSession.count({ where: { userId: created.id } })).toBe(0);
    const text = await runCli(["users", "reset-2fa", created.id], db());
    expect(text.stdout).toBe(`Reset two-factor sign-in of lost@acme.example (id ${created.id}); their sessions ended.\n`);
    const unknown = await runCli(["users", "reset-2fa", "00000000-0000-7000-8000-000000000000"], db());
    expect(unknown.code).toBe(1);
    const resets = await prisma.auditEvent.findMany({ where: { targetId: created.id, action: "two_factor.reset" } });
    expect(resets.map((e) => e.actorLabel)).toEqual(["cli", "cli"]);
  });

  it("goes through the server: an admin.json with a wrong token makes the command fail", async () => {
    const file = path.join(dataDir, "admin.json");
    const original = fs.readFileSync(file, "utf8");
    fs.writeFileSync(file, JSON.stringify({ ...JSON.parse(original), token: "wrong" }), { mode: 0o600 });
    try {
      const res = await runCli(["companies", "create", "--name", "Refused"], db());
      expect(res.code).toBe(1);
      expect(res.stderr).toContain("admin token is not valid");
    } finally {
      fs.writeFileSync(file, original, { mode: 0o600 });
    }
  });
});

describe("admin CLI with no server running", () => {
  let dataDir: string;
  let databaseUrl: string | undefined;
  beforeAll(() => {
    dataDir = tempDir();
    databaseUrl = testConfig().databaseUrl; // a fresh PostgreSQL schema when TEST_DATABASE_URL is set, else PGlite in dataDir
  });
  afterAll(() => {
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it("opens the database itself; a key it creates authenticates once the server starts", async () => {
    const db = { dataDir, databaseUrl };
    const first = await runCliProcess(["companies", "create", "--name", "Offline Co", "--json", "--init"], db); // a real process
    expect(first.stderr).toMatch(databaseUrl ? /^Database: the PostgreSQL database postgresql:\/\/[^\n]+, created now \(--init\)\.\n$/ : /^Database: the embedded database in [^\n]+, created now \(--init\)\.\n$/);
    const company = CompanyCreatedSchema.strict().parse(JSON.parse(first.stdout));
    const keyRes = await runCli(["keys", "create", "--company", company.id, "--name", "Offline key", "--scopes", "items:read", "--json"], db);
    expect(keyRes).toMatchObject({ code: 0, stderr: expect.stringMatching(/^Database: [^\n]+, opened directly \(no server in between\)\.\n$/) });
    const created = KeyCreatedSchema.strict().parse(JSON.parse(keyRes.stdout));
    const file = path.join(dataDir, "sales.json");
    fs.writeFileSync(file, JSON.stringify(SALES_FILE));
    const imported = await runCli(["pipelines", "import", "--company", company.id, "--file", file, "--json"], db);
    const pipeline = ImportedPipelineSchema.parse(JSON.parse(imported.stdout));

    const server = await startServer({ ...testConfig(), dataDir, databaseUrl });
    try {
      const me = await apiGet(server, "/v1/ext/me", created.key);
      expect(me.status).toBe(200);
      expect(me.body).toMatchObject({ company: { id: company.id, name: "Offline Co" }, key: { name: "Offline key", scopes: ["items:read"] } });
      const pipelines = await apiGet(server, "/v1/ext/pipelines", created.key);
      expect(pipelines.body.map((p: { id: string }) => p.id)).toEqual([pipeline.id]);
    } finally {
      await server.close();
    }
  });

  it("refuses a database that holds no Stageline schema unless given --init, and creates nothing then", async () => {
    const empty = { dataDir: path.join(tempDir(), "data"), databaseUrl: testConfig().databaseUrl };
    try {
      const refused = await runCli(["keys", "list", "--company", "01900000-0000-7000-8000-000000000000"], empty);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(empty.databaseUrl ? /holds no Stageline schema.*--init\.\n$/ : /There is no Stageline database in .*--init\.\n$/);
      // Nothing was created: the run with --init is the one that creates the database.
      const init = await runCli(["keys", "list", "--company", "01900000-0000-7000-8000-000000000000", "--init"], empty);
      expect(init.code).toBe(1); // the company is unknown, but the database now exists
      expect(init.stderr).toMatch(/^Database: [^\n]+, created now \(--init\)\.\nError: Company 01900000-0000-7000-8000-000000000000 was not found\.\n$/);
      const again = await runCli(["keys", "list", "--company", "01900000-0000-7000-8000-000000000000"], empty);
      expect(again.stderr).toMatch(/^Database: [^\n]+, opened directly/);
    } finally {
      fs.rmSync(path.dirname(empty.dataDir), { recursive: true, force: true });
    }
  });

  it("ignores an admin.json left behind by a server that is no longer running", async () => {
    const deadPid = await new Promise<number>((resolve) => {
      const child = spawn(process.execPath, ["-e", ""]);
      child.once("exit", () => resolve(child.pid!));
    });
    const staleDir = tempDir();
    try {
      fs.writeFileSync(path.join(staleDir, "admin.json"), JSON.stringify({ pid: deadPid, url: "http://127.0.0.1:9", token: "stale" }));
      const res = await runCli(["companies", "create", "--name", "After a crash", "--json", "--init"], { dataDir: staleDir });
      expect(res.code).toBe(0);
      expect(CompanyCreatedSchema.parse(JSON.parse(res.stdout)).name).toBe("After a crash");
    } finally {
      fs.rmSync(staleDir, { recursive: true, force: true });
    }
  });

  it("creates a console user on the database itself; the user signs in once the server starts", async () => {
    const db = { dataDir, databaseUrl };
    const company = CompanyCreatedSchema.parse(JSON.parse((await runCli(["companies", "create", "--name", "Offline Users Co", "--json"], db)).stdout));
    const res = await runCli(["users", "create", "--company", company.id, "--email", "offline@acme.example", "--role", "admin", "--json"], db);
    expect(res).toMatchObject({ code: 0, stderr: expect.stringMatching(ONLY_DATABASE_LINE) });
    const user = UserCreatedSchema.strict().parse(JSON.parse(res.stdout));
    const list = await runCli(["users", "list", "--company", company.id, "--json"], db);
    expect(UserSummarySchema.array().parse(JSON.parse(list.stdout).users).map((u) => u.email)).toEqual(["offline@acme.example"]);
    const server = await startServer({ ...testConfig(), dataDir, databaseUrl });
    try {
      expect((await signInOverHttp(server.url, "offline@acme.example", user.password)).status).toBe(303);
    } finally {
      await server.close();
    }
  });

  it("exits 1 for an unknown key id", async () => {
    const res = await runCli(["keys", "revoke", "01900000-0000-7000-8000-000000000000"], { dataDir, databaseUrl });
    expect(res.code).toBe(1);
    expect(res.stderr.replace(DATABASE_LINE, "")).toBe("Error: API key 01900000-0000-7000-8000-000000000000 was not found.\n");
  });
});
