/**
 * CONTRACT "Client library": the committed generated types (src/generated/openapi.ts) are what openapi-typescript
 * generates from the current OpenAPI document (docs/openapi.json, which server/test/openapi.test.ts keeps equal to
 * the served one). Fix a failure with `npm run generate -w client` (after `npm run openapi:snapshot`).
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

const CLIENT = path.resolve(__dirname, "..");

it("src/generated/openapi.ts matches what the current OpenAPI document generates", () => {
  const fresh = execFileSync(process.execPath, [path.join(CLIENT, "scripts", "generate.mjs"), "--stdout"], { cwd: CLIENT, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  const committed = fs.readFileSync(path.join(CLIENT, "src", "generated", "openapi.ts"), "utf8");
  if (fresh !== committed) {
    throw new Error("client/src/generated/openapi.ts is out of date with docs/openapi.json: run `npm run generate -w client` and commit the result.");
  }
});
