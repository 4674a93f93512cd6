/** Data access for companies (table `companies`). Every function runs on the client or inside a transaction. */
import { Prisma, type PrismaClient } from "../generated/prisma/client";

/** A Prisma client or an interactive-transaction client: both run the queries below. */
export type Queryable = PrismaClient | Prisma.TransactionClient;

/**
 * Limits of the admin interactive transactions: generous, as they run rarely and PGlite serialises them (Prisma's
 * defaults, 2 s to start and 5 s to finish, are tight for a large pipeline import on a busy machine).
 */
export const ADMIN_TRANSACTION_OPTIONS = { maxWait: 10_000, timeout: 30_000 } as const;

/**
 * Runs `fn` in one interactive transaction; when `db` already is a transaction client, `fn` joins that transaction
 * (so a caller such as the demo seed can make several service calls atomic).
 */
export function inTransaction<T>(db: Queryable, fn: (tx: Prisma.TransactionClient) => Promise<T>): Promise<T> {
  return "$transaction" in db ? db.$transaction(fn, ADMIN_TRANSACTION_OPTIONS) : fn(db);
}

/** Stores a new company; `slug` is unique across companies (the demo company's is `demo`). */
export function insertCompany(db: Queryable, data: { name: string; slug?: string | null }) {
  return db.company.create({ data: { name: data.name, slug: data.slug ?? null } });
}

/**
 * The CTE `company_row` for one-statement writes into a company (db/items.ts, db/tasks.ts): the company of the SQL
 * parameter `companyParam` locked `FOR KEY SHARE` (the lock its children's foreign keys take anyway, shared by
 * concurrent writes), when the SQL `condition` holds. Take it FIRST: `DELETE FROM companies` locks the company row
 * and then cascades to its children, so a write that locks the company before anything else either gets there
 * first (the delete waits for it) or finds no row (the delete committed) — never a foreign-key failure or a
 * deadlock half-way through. The statement writes nothing when `company_row` is empty.
 */
export function lockedCompanyCte(companyParam: string, condition = "true"): string {
  return `company_row AS MATERIALIZED (
           SELECT c.id FROM companies c WHERE c.id = ${companyParam} AND ${condition} FOR KEY SHARE
         )`;
}

/** The company with `id`, or null. */
export function findCompany(db: Queryable, id: string) {
  return db.company.findUnique({ where: { id } });
}

/** True when at least one company exists. */
export async function anyCompanyExists(db: Queryable): Promise<boolean> {
  return (await db.company.findFirst({ select: { id: true } })) !== null;
}

/** Sets a company's subscription flag; returns the updated company, or null when it does not exist. */
export async function updateSubscription(db: Queryable, id: string, active: boolean) {
  const { count } = await db.company.updateMany({ where: { id }, data: { subscriptionActive: active } });
  return count ? db.company.findUnique({ where: { id } }) : null;
}

/**
 * True when `err` is a unique-constraint violation, e.g. a second company with the slug `demo`. Prisma reports it
 * as P2002, except inside an interactive transaction on the PGlite adapter, where the driver's error (SQLSTATE
 * 23505) comes through unmapped.
 */
export function isUniqueViolation(err: unknown): boolean {
  if (err instanceof Prisma.PrismaClientKnownRequestError) return err.code === "P2002";
  const cause = (err as { name?: unknown; cause?: { code?: unknown } } | null)?.cause;
  return (err as { name?: unknown } | null)?.name === "DriverAdapterError" && cause?.code === "23505";
}
