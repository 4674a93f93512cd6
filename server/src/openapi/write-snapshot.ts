/**
 * `npm run openapi:snapshot`: writes the generated OpenAPI document to docs/openapi.json, the committed snapshot that
 * server/test/openapi.test.ts compares with the document the code generates (the test fails when they drift).
 */
import fs from "node:fs";
import path from "node:path";
import { openApiJson } from "./document";

/** The committed snapshot (server/dist/openapi -> repository root -> docs/openapi.json). */
export const SNAPSHOT_PATH = path.resolve(__dirname, "..", "..", "..", "docs", "openapi.json");

if (require.main === module) {
  fs.writeFileSync(SNAPSHOT_PATH, openApiJson());
  process.stdout.write(`Wrote ${SNAPSHOT_PATH}\n`);
}
