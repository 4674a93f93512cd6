/**
 * How the admin CLI reaches the data. PGlite is single-process, so while a server runs on the embedded database
 * the CLI must go through that server: the server writes `${DATA_DIR}/admin.json` ({ pid, url, token }) and the CLI
 * sends its commands to the /admin API. Otherwise (no server, or PostgreSQL, which many processes share) the CLI
 * opens the database itself. Both paths run the same admin-service functions.
 */
import fs from "node:fs";
import path from "node:path";
import type { z } from "zod";
import { CompanyCreatedSchema, KeyCreatedSchema, KeySummarySchema, ProblemSchema } from "@stageline/shared";
import { loadConfig } from "../config/config";
import { embeddedDatabaseExists, openDatabase, pgliteDirectory, type Database } from "../db/database";
import { applyMigrations, hasMigrations } from "../db/migrations";
import type { PrismaClient } from "../generated/prisma/client";
import { DomainError } from "../services/errors";
import { adminHandshakePath } from "../server";
import {
  ADMIN_BASE_PATH,
  ADMIN_TOKEN_HEADER,
  CompanySubscriptionSchema,
  ImportedPipelineSchema,
  PipelineArchiveStateSchema,
  TwoFactorResetSchema,
  UserCreatedSchema,
  UserSummarySchema,
  adminPaths,
  type AdminApi,
} from "./admin-api";
import * as admin from "./admin-service";

/** The handshake a running server leaves in its data directory. */
export interface AdminHandshake {
  pid: number;
  url: string;
  token: string;
}

/** An open way to the admin operations; `close()` must be called (it closes the database of the direct path). */
export interface AdminConnection {
  api: AdminApi;
  /** `server`: over the running server's admin API; `database`: the CLI opened the database itself. */
  via: "server" | "database";
  /** Where: the server URL, or the database (PostgreSQL URL without password, or the PGlite directory). */
  target: string;
  /** Which database was used and how, as a phrase: "the embedded database in /abs/data/pglite, through ...". */
  description: string;
  close(): Promise<void>;
}

/** The admin operations run directly on an open database. */
export function directAdmin(prisma: PrismaClient): AdminApi {
  return {
    createCompany: (body) => admin.createCompany(prisma, body),
    setSubscription: (companyId, body) => admin.setSubscription(prisma, companyId, body),
    createKey: (body) => admin.createKey(prisma, body),
    listKeys: (companyId) => admin.listKeys(prisma, companyId),
    renameKey: (keyId, body) => admin.renameKey(prisma, keyId, body),
    revokeKey: (keyId) => admin.revokeKey(prisma, keyId),
    importPipeline: (companyId, body) => admin.importPipeline(prisma, companyId, body),
    archivePipeline: (pipelineId) => admin.archivePipeline(prisma, pipelineId),
    restorePipeline: (pipelineId) => admin.restorePipeline(prisma, pipelineId),
    createUser: (body) => admin.createUser(prisma, body),
    listUsers: (companyId) => admin.listUsers(prisma, companyId),
    resetPassword: (userId) => admin.resetPassword(prisma, userId),
    removeUser: (userId) => admin.removeUser(prisma, userId),
    resetTwoFactor: (userId) => admin.resetTwoFactor(prisma, userId),
  };
}

/** Raised when the running server named by the handshake file does not answer. */
export class ServerUnreachableError extends Error {
  override name = "ServerUnreachableError";
}

/**
 * The admin operations over a running server's admin API. Problem answers are rethrown as DomainErrors, so
 * callers see the same errors as on the direct path.
 */
export function httpAdmin(baseUrl: string, token: string, timeoutMs = 30_000): AdminApi {
  const call = async <T>(method: string, path: string, schema: z.ZodType<T>, body?: unknown): Promise<T> => {
    const url = baseUrl + ADMIN_BASE_PATH + path;
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        headers: { [ADMIN_TOKEN_HEADER]: token, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
        body: body !== undefined ? JSON.stringify(body) : undefined,
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      const reason = err instanceof Error ? ((err.cause as Error | undefined)?.message ?? err.message) : String(err);
      throw new ServerUnreachableError(`The running Stageline server at ${baseUrl} did not answer (${reason}).`);
    }
    const text = await res.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    if (!res.ok) {
      const parsed = ProblemSchema.safeParse(json);
      if (parsed.success) {
        const { code, detail, errors, status } = parsed.data;
        throw new DomainError(code, detail, errors ? { errors } : {}, status);
      }
      throw new Error(`The server answered ${method} ${path} with HTTP ${res.status}: ${text.slice(0, 200)}`);
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) throw new Error(`The server answered ${method} ${path} with an unexpected body: ${text.slice(0, 200)}`);
    return parsed.data;
  };
  return {
    createCompany: (body) => call("POST", adminPaths.companies(), CompanyCreatedSchema, body),
    setSubscription: (companyId, body) => call("PUT", adminPaths.subscription(companyId), CompanySubscriptionSchema, body),
    createKey: (body) => call("POST", adminPaths.keys(), KeyCreatedSchema, body),
    listKeys: (companyId) => call("GET", adminPaths.companyKeys(companyId), KeySummarySchema.array()),
    renameKey: (keyId, body) => call("PATCH", adminPaths.key(keyId), KeySummarySchema, body),
    revokeKey: (keyId) => call("POST", adminPaths.keyRevoke(keyId), KeySummarySchema),
    importPipeline: (companyId, body) => call("POST", adminPaths.companyPipelines(companyId), ImportedPipelineSchema, body),
    archivePipeline: (pipelineId) => call("POST", adminPaths.pipelineArchive(pipelineId), PipelineArchiveStateSchema),
    restorePipeline: (pipelineId) => call("POST", adminPaths.pipelineRestore(pipelineId), PipelineArchiveStateSchema),
    createUser: (body) => call("POST", adminPaths.users(), UserCreatedSchema, body),
    listUsers: (companyId) => call("GET", adminPaths.companyUsers(companyId), UserSummarySchema.array()),
    resetPassword: (userId) => call("POST", adminPaths.userResetPassword(userId), UserCreatedSchema),
    removeUser: (userId) => call("DELETE", adminPaths.user(userId), UserSummarySchema),
    resetTwoFactor: (userId) => call("POST", adminPaths.userResetTwoFactor(userId), TwoFactorResetSchema),
  };
}

/** Reads `${dataDir}/admin.json`; null when absent or not a handshake. */
export function readHandshake(dataDir: string): AdminHandshake | null {
  let raw: string;
  try {
    raw = fs.readFileSync(adminHandshakePath(dataDir), "utf8");
  } catch {
    return null;
  }
  try {
    const value = JSON.parse(raw) as Partial<AdminHandshake>;
    if (Number.isInteger(value.pid) && typeof value.url === "string" && typeof value.token === "string") {
      return { pid: value.pid!, url: value.url, token: value.token };
    }
  } catch {
    /* not JSON: treated as absent */
  }
  return null;
}

/** True when a process with `pid` exists (signal 0 only checks; EPERM means it exists but belongs to another user). */
export function processIsAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Raised when the CLI finds no Stageline database where the environment points and `--init` was not given: it
 * creates nothing then (issue 19 item 6: a CLI run without the server's DATA_DIR must not "succeed" in a new,
 * unused database).
 */
export class NoDatabaseError extends Error {
  override name = "NoDatabaseError";
}

/** Options of `connectAdmin`. */
export interface ConnectOptions {
  /** Create and migrate a new database when none exists there (`--init`). Default false: refuse. */
  init?: boolean;
}

/** How DATA_DIR was chosen, for messages: `DATA_DIR=/abs` or `DATA_DIR is not set: ./data = /abs`. */
function dataDirOrigin(env: NodeJS.ProcessEnv): string {
  return env.DATA_DIR !== undefined ? `DATA_DIR=${env.DATA_DIR}` : `DATA_DIR is not set, so the default ./data in ${process.cwd()}`;
}

/**
 * Chooses the path (see the file comment) from the environment, as `npm start` reads it: with DATABASE_URL set,
 * always the database; otherwise the running server named by `${DATA_DIR:-./data}/admin.json` when its process is
 * alive, else the PGlite database in DATA_DIR. The database opened directly must already hold Stageline's schema
 * (a server started on it, or an earlier `--init`); with `options.init` a missing one is created and every
 * migration applied, as the server does at start. Pending migrations of an existing database are applied too.
 * The connection's `description` says which database was used and how (the CLI prints it).
 * @throws NoDatabaseError when there is no database and `init` is not set (nothing is created: no directory, no
 * table); the driver's error when the database cannot be opened or migrated.
 */
export async function connectAdmin(env: NodeJS.ProcessEnv = process.env, options: ConnectOptions = {}): Promise<AdminConnection> {
  const config = loadConfig(env);
  const dataDir = path.resolve(config.dataDir);
  if (!config.databaseUrl) {
    const handshake = readHandshake(config.dataDir);
    if (handshake && processIsAlive(handshake.pid)) {
      return {
        api: httpAdmin(handshake.url, handshake.token),
        via: "server",
        target: handshake.url,
        description: `the embedded database in ${pgliteDirectory(dataDir)}, through the running server at ${handshake.url} (pid ${handshake.pid})`,
        close: async () => undefined,
      };
    }
    if (!options.init && !embeddedDatabaseExists(dataDir)) {
      throw new NoDatabaseError(
        `There is no Stageline database in ${pgliteDirectory(dataDir)} (${dataDirOrigin(env)}), and no server is running there. ` +
          `Run this command with the DATA_DIR (or DATABASE_URL) the server uses. To create a new, empty embedded database here, run it again with --init.`,
      );
    }
  }
  const where = config.databaseUrl ? `the PostgreSQL database ${redactUrl(config.databaseUrl)}` : `the embedded database in ${pgliteDirectory(dataDir)}`;
  const db: Database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  let created: boolean;
  try {
    created = !(await hasMigrations(db));
    if (created && !options.init) {
      throw new NoDatabaseError(
        `${where[0]!.toUpperCase()}${where.slice(1)} holds no Stageline schema (no migration was ever applied to it). ` +
          `Run this command with the DATABASE_URL (or DATA_DIR) the server uses. To create the schema there, run it again with --init.`,
      );
    }
    await applyMigrations(db);
  } catch (err) {
    await db.close().catch(() => undefined);
    throw err;
  }
  return {
    api: directAdmin(db.prisma),
    via: "database",
    target: config.databaseUrl ? redactUrl(config.databaseUrl) : config.dataDir,
    description: created ? `${where}, created now (--init)` : `${where}, opened directly (no server in between)`,
    close: () => db.close(),
  };
}

function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "(DATABASE_URL)";
  }
}
