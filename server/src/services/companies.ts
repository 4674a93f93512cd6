/**
 * Companies (tenants). They are not part of the external API: the admin API / CLI creates them and switches their
 * subscription (spec "Authentication" 5: API access requires an active subscription).
 */
import { z } from "zod";
import { CompanyCreateSchema, parseInput, type CompanyCreated } from "@stageline/shared";
import * as companies from "../db/companies";
import type { Queryable } from "../db/companies";
import { notFound } from "./errors";

/** Admin body that switches a company's subscription: `{ "active": true | false }`. */
export const SubscriptionUpdateSchema = z.strictObject(
  { active: z.boolean({ error: (iss) => (iss.input === undefined ? "active is required." : "active must be true or false.") }) },
  {
    error: (iss) =>
      iss.code === "unrecognized_keys" ? `Unknown field ${iss.keys.map((k) => JSON.stringify(k)).join(", ")}; allowed fields: active.` : undefined,
  },
);

/** A company with its subscription state, as the admin API answers a subscription change. */
export interface CompanySubscription {
  id: string;
  name: string;
  subscription_active: boolean;
}

/**
 * Creates a company from an admin body (`CompanyCreateSchema`: `{ name }`). `slug` is only set by the demo seed.
 * @returns `{ id, name }` (`CompanyCreatedSchema`).
 * @throws DomainError 400 `validation_failed` listing the failing fields; a Prisma P2002 error when `slug` is taken.
 */
export async function createCompany(db: Queryable, input: unknown, slug?: string): Promise<CompanyCreated> {
  const body = parseInput(CompanyCreateSchema, input);
  const company = await companies.insertCompany(db, { name: body.name, slug });
  return { id: company.id, name: company.name };
}

/**
 * The company `id`.
 * @throws DomainError 404 `not_found` when no company has that id.
 */
export async function requireCompany(db: Queryable, id: string) {
  const company = await companies.findCompany(db, id);
  if (!company) throw notFound("Company", id);
  return company;
}

/**
 * Switches a company's subscription on or off (`SubscriptionUpdateSchema`). While it is off, every key of the
 * company gets `402 subscription_inactive` (CONTRACT "Errors").
 * @throws DomainError 400 `validation_failed`; 404 `not_found` for an unknown company.
 */
export async function setCompanySubscription(db: Queryable, companyId: string, input: unknown): Promise<CompanySubscription> {
  const { active } = parseInput(SubscriptionUpdateSchema, input);
  const company = await companies.updateSubscription(db, companyId, active);
  if (!company) throw notFound("Company", companyId);
  return { id: company.id, name: company.name, subscription_active: company.subscriptionActive };
}
