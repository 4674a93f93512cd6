/**
 * `npm run build -w client` (also run by `npm pack`): compiles src/ to CommonJS with declarations (dist/cjs, tsc)
 * and writes the ES module entry (dist/esm/index.mjs, index.d.mts), a thin wrapper that re-exports the CommonJS
 * build by name, so `import` and `require` share one copy of the classes (instanceof works across both).
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(import.meta.url);
const tsc = require.resolve("typescript/bin/tsc");
execFileSync(process.execPath, [tsc, "-b", root], { stdio: "inherit" });

const cjsEntry = path.join(root, "dist", "cjs", "index.js");
delete require.cache[cjsEntry];
const names = Object.keys(require(cjsEntry)).filter((name) => name !== "__esModule").sort();
const esmDir = path.join(root, "dist", "esm");
fs.mkdirSync(esmDir, { recursive: true });
fs.writeFileSync(
  path.join(esmDir, "index.mjs"),
  `import client from "../cjs/index.js";\n\nexport const { ${names.join(", ")} } = client;\n`,
);
fs.writeFileSync(path.join(esmDir, "index.d.mts"), `export * from "../cjs/index.js";\n`);
process.stdout.write(`Built dist/cjs and dist/esm (${names.length} runtime exports)\n`);
