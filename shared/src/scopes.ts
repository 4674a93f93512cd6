import { z } from "zod";

/** Spec "Authentication" (scope table): every scope an API key can carry. New keys get all of them by default. */
export const SCOPES = ["items:read", "items:write", "tasks:read", "tasks:write", "hooks:manage"] as const;

/** One API key scope. */
export type Scope = (typeof SCOPES)[number];

/** Spec "Authentication": a scope name. */
export const ScopeSchema = z.enum(SCOPES, {
  error: (iss) => `Unknown scope ${JSON.stringify(iss.input)}. Valid scopes: ${SCOPES.join(", ")}.`,
});

/** Type guard: is `value` one of {@link SCOPES}? */
export function isScope(value: unknown): value is Scope {
  return typeof value === "string" && (SCOPES as readonly string[]).includes(value);
}
