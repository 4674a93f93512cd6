/**
 * The demo seed: on an empty database `npm start` creates "Demo Company" (slug `demo`) with the spec's sample
 * "Sales" pipeline, an all-scope "Demo key" and a console owner with a random password, so the API and the console
 * can be tried at once (main.ts prints the key, the console URL, the user and the password).
 */
import type { PipelineImport } from "@stageline/shared";
import type { AppContext } from "../context";
import { ADMIN_TRANSACTION_OPTIONS, anyCompanyExists, isUniqueViolation } from "../db/companies";
import { createApiKey } from "../services/api-keys";
import { CLI_ACTOR } from "../services/audit-log";
import { createCompany } from "../services/companies";
import { createUser } from "../services/users";
import { importPipeline } from "../services/pipeline-import";

/** The demo company's name and unique slug. */
export const DEMO_COMPANY = { name: "Demo Company", slug: "demo" } as const;

/** Name of the demo company's API key. */
export const DEMO_KEY_NAME = "Demo key";

/** Email of the demo company's console owner (its password is random, printed once by `npm start`). */
export const DEMO_USER_EMAIL = "owner@demo.stageline.test";

/** What a seeding start shows once: the demo API key and the console owner's credentials. */
export interface DemoCredentials {
  apiKey: string;
  user: { email: string; password: string };
}

/**
 * The spec's sample pipeline as an import file: stages Lead, Qualified, Proposal, Closed with the statuses Open,
 * Won, Lost; custom fields `email` and `deal_value`; duplicate detection on `email`.
 */
export const DEMO_PIPELINE: PipelineImport = {
  name: "Sales",
  short_id_prefix: "SALES",
  stages: ["Lead", "Qualified", "Proposal", "Closed"].map((name) => ({ name, statuses: ["Open", "Won", "Lost"] })),
  custom_fields: [
    { key: "email", label: "Email", type: "email" },
    { key: "deal_value", label: "Deal value", type: "number" },
  ],
  duplicate_detection: { fields: ["email"], match: "any" },
};

/**
 * Seeds the demo company when the database has no company at all: company, pipeline (through `importPipeline`) and
 * key and console owner in one transaction. Safe when several processes start at once: the unique slug `demo` lets
 * one of them commit; the others' inserts fail with a unique violation, which counts as "already seeded".
 * @returns the demo API key and owner credentials (shown once), or null when a company already existed.
 */
export async function seedDemoIfEmpty(ctx: AppContext): Promise<DemoCredentials | null> {
  try {
    const seeded = await ctx.prisma.$transaction(async (tx): Promise<DemoCredentials | null> => {
      if (await anyCompanyExists(tx)) return null;
      const company = await createCompany(tx, { name: DEMO_COMPANY.name }, DEMO_COMPANY.slug);
      await importPipeline(tx, company.id, DEMO_PIPELINE);
      // createApiKey only runs `apiKey.create`, which a transaction client has: cast to join this transaction.
      const created = await createApiKey(tx, { companyId: company.id, name: DEMO_KEY_NAME });
      const owner = await createUser(tx, { company_id: company.id, email: DEMO_USER_EMAIL, role: "owner" }, { actor: CLI_ACTOR });
      return { apiKey: created.key, user: { email: owner.email, password: owner.password } };
    }, ADMIN_TRANSACTION_OPTIONS);
    if (seeded) ctx.logger.info({ company: DEMO_COMPANY.slug }, "seeded the demo company");
    return seeded;
  } catch (err) {
    if (isUniqueViolation(err)) return null;
    throw err;
  }
}
