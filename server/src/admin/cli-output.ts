/** What the admin CLI prints: JSON for scripts, short text and tables for people, and error messages. */
import { SCOPES, type KeyCreated, type KeySummary } from "@stageline/shared";
import { DomainError } from "../services/errors";
import type { CompanySubscription } from "../services/companies";
import type { ImportedPipeline } from "../services/pipeline-import";
import type { UserSummary } from "../services/users";
import { ServerUnreachableError, type AdminConnection } from "./admin-client";
import type { UserCreated } from "./admin-api";

/** One JSON value on one line. */
export function asJson(value: unknown): string {
  return `${JSON.stringify(value)}\n`;
}

/** The valid scopes, for help texts. */
export function scopeList(): string {
  return SCOPES.join(", ");
}

/** Result of `companies set-subscription`. */
export function subscriptionText(company: CompanySubscription): string {
  const effect = company.subscription_active
    ? "active: its API keys work."
    : "inactive: its API keys get 402 subscription_inactive.";
  return `Company ${JSON.stringify(company.name)} (${company.id}) subscription is ${effect}\n`;
}

/** Result of `keys create`: what was created, then the key on a line of its own. */
export function keyCreatedText(key: KeyCreated): string {
  return [
    `Created API key ${JSON.stringify(key.name)} (id ${key.id}) with scopes: ${key.scopes.join(", ")}.`,
    "The key is shown only now and cannot be retrieved later; store it safely:",
    key.key,
    "",
  ].join("\n");
}

/** `keys list` as an aligned table; dates in ISO 8601, `-` for none. Never the key values. */
export function keyTable(keys: KeySummary[]): string {
  if (keys.length === 0) return "This company has no API keys.\n";
  const header = ["ID", "NAME", "PREFIX", "SCOPES", "EXPIRES", "REVOKED", "LAST USED"];
  return table(header, keys.map((k) => [
    k.id,
    k.name,
    k.prefix,
    k.scopes.join(","),
    k.expires_at ?? "-",
    k.revoked_at ?? "-",
    k.last_used_at ?? "-",
  ]));
}

/** Result of `users create` / `users reset-password`: what happened, then the password on a line of its own. */
export function userPasswordText(user: UserCreated, what: "created" | "reset"): string {
  return [
    what === "created"
      ? `Created ${user.role} ${user.email} (id ${user.id}) in company ${user.company_id}.`
      : `Set a new password for ${user.email} (id ${user.id}); their console sessions have ended.`,
    "The password is shown only now and cannot be retrieved later; give it to the user safely:",
    user.password,
    "",
  ].join("\n");
}

/** `users list` as an aligned table. */
export function userTable(users: UserSummary[]): string {
  if (users.length === 0) return "This company has no console users.\n";
  return table(["ID", "EMAIL", "ROLE", "CREATED"], users.map((u) => [u.id, u.email, u.role, u.created_at]));
}

/** Rows as an aligned text table under `header`. */
function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd();
  return [line(header), ...rows.map(line), ""].join("\n");
}

/** Result of `pipelines import`: the pipeline, then its stages in order with their statuses. */
export function pipelineText(pipeline: ImportedPipeline): string {
  const stages = pipeline.stages.map(
    (stage, i) => `  ${i + 1}. ${stage.name} (${stage.id}): ${stage.statuses.map((s) => s.name).join(", ")}`,
  );
  return [
    `Imported pipeline ${JSON.stringify(pipeline.name)} (id ${pipeline.id}); items get short ids ${pipeline.short_id_prefix}-1, ${pipeline.short_id_prefix}-2, ...`,
    "Stages:",
    ...stages,
    "",
  ].join("\n");
}

/** The stderr text for a failed command: the problem's detail and every failing field. */
export function errorText(err: unknown, connection: AdminConnection | undefined): string {
  if (err instanceof DomainError) {
    const lines = [`Error: ${err.detail}`];
    for (const field of err.extras.errors ?? []) lines.push(`  - ${field.path}: ${field.message}`);
    if (err.code === "invalid_api_key" && connection?.via === "server") {
      lines.push(`The server at ${connection.target} did not accept the admin token from its admin.json file.`);
    }
    return lines.join("\n") + "\n";
  }
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof ServerUnreachableError) {
    return `Error: ${message}\nIf that server has stopped, delete admin.json in its data directory (DATA_DIR) and run the command again.\n`;
  }
  if (!connection && !(err instanceof Error && (err.name === "CliError" || err.name === "NoDatabaseError"))) {
    return `Error: Cannot open the database: ${message}\n`;
  }
  return `Error: ${message}\n`;
}
