/**
 * `npm run openapi:compat` (CONTRACT "Versioning and compatibility"; run by .ci/run): compares the served OpenAPI
 * document with the committed baseline docs/api/openapi.v1.baseline.json and exits 1 naming each breaking change
 * (one line each: `BREAKING <kind> at <where>: <detail>`), 0 when every change is additive. Paths under a new major
 * prefix (`/v2/ext/`) are not compared.
 * `--write-baseline` replaces the baseline with the served document (when a version is published; see
 * docs/api/CHANGELOG.md).
 */
import fs from "node:fs";
import path from "node:path";
import { openApiDocument, openApiJson } from "../document";
import { findBreakingChanges } from "./document-diff";
import type { Json } from "./types";

/** The committed baseline (server/dist/openapi/compat -> repository root -> docs/api/openapi.v1.baseline.json). */
export const BASELINE_PATH = path.resolve(__dirname, "..", "..", "..", "..", "docs", "api", "openapi.v1.baseline.json");

/** Runs the check; returns the exit code. */
export function main(argv: readonly string[]): number {
  if (argv.includes("--write-baseline")) {
    fs.writeFileSync(BASELINE_PATH, openApiJson());
    process.stdout.write(`Wrote ${BASELINE_PATH}\n`);
    return 0;
  }
  const baseline = JSON.parse(fs.readFileSync(BASELINE_PATH, "utf8")) as Json;
  const served = openApiDocument() as unknown as Json;
  const changes = findBreakingChanges(baseline, served);
  for (const c of changes) process.stdout.write(`BREAKING ${c.kind} at ${c.where}: ${c.detail}\n`);
  const compared = Object.keys(baseline.paths ?? {}).filter((p) => p.startsWith("/v1/")).length;
  process.stdout.write(
    changes.length === 0
      ? `openapi:compat: compatible with ${path.basename(BASELINE_PATH)} (${compared} v1 paths compared; baseline ${baseline.info?.version}, served ${(served.info as Json)?.version}).\n`
      : `openapi:compat: ${changes.length} breaking change(s) against ${path.basename(BASELINE_PATH)}. Within /v1/ext/ only additive changes are allowed (docs/api/contract.md "Versioning and compatibility").\n`,
  );
  return changes.length === 0 ? 0 : 1;
}

if (require.main === module) process.exitCode = main(process.argv.slice(2));
