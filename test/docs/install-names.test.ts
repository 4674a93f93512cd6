/**
 * Issue 39: the packages below are not on the npm registry (docs/releasing.md), so no Markdown page of the repository
 * may tell anyone to install them by name (`npm install @stageline/client` answers 404, and a name someone else later
 * registers would install their code). The pages install the tarballs `npm run pack` writes into dist/artefacts/
 * instead. When a package is first published, the release removes it from UNPUBLISHED (docs/releasing.md).
 * No server, no database: it reads files.
 */
import fs from "node:fs";
import path from "node:path";
import { markdownFiles } from "./markdown-links";

const root = path.resolve(__dirname, "..", "..");
/** The packages built here that the npm registry does not hold yet, and the bin of one of them. */
const UNPUBLISHED = ["@stageline/client", "@stageline/mcp", "n8n-nodes-stageline"];
const UNPUBLISHED_BINS = ["stageline-mcp"];

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
/** `npm install|i|add`, `yarn add`, `pnpm add` of a name (with an optional @version), not of a path or tarball. */
const installByName = new RegExp(
  `\\b(?:npm\\s+(?:install|i|add)|yarn\\s+add|pnpm\\s+add)\\b[^\\n\`]*?(?<![\\w./@-])(${UNPUBLISHED.map(escape).join("|")})(?:@[\\w.^~-]+)?(?![\\w./-])`,
  "g",
);
/** `npx <bin>` without `--no-install`: npx would download a registry package of that name. */
const npxByName = new RegExp(`\\bnpx\\s+(${UNPUBLISHED_BINS.map(escape).join("|")})\\b|"args":\\s*\\["(${UNPUBLISHED_BINS.map(escape).join("|")})"`, "g");

/** `file:line: text` of every line of `text` that installs an unpublished package by name. */
function offences(file: string, text: string): string[] {
  return text.split("\n").flatMap((line, index) => {
    installByName.lastIndex = 0;
    npxByName.lastIndex = 0;
    return installByName.test(line) || npxByName.test(line) ? [`${file}:${index + 1}: ${line.trim()}`] : [];
  });
}

describe("installing a package that is not on the registry", () => {
  it("finds installs by name and leaves installs of tarballs and paths alone", () => {
    const page = [
      "npm install @stageline/client",
      "  npm i n8n-nodes-stageline@0.4.0",
      "pnpm add @stageline/mcp",
      "STAGELINE_API_KEY=sl_... npx stageline-mcp",
      '"command": "npx", "args": ["stageline-mcp"]',
      "npm install ./dist/artefacts/stageline-client-0.1.0.tgz",
      "npm install /path/to/stageline/dist/artefacts/n8n-nodes-stageline-0.4.0.tgz",
      "npx --no-install stageline-mcp",
      'import { Stageline } from "@stageline/client";',
      "npm install && npm start",
    ].join("\n");
    expect(offences("page.md", page)).toEqual([
      "page.md:1: npm install @stageline/client",
      "page.md:2: npm i n8n-nodes-stageline@0.4.0",
      "page.md:3: pnpm add @stageline/mcp",
      "page.md:4: STAGELINE_API_KEY=sl_... npx stageline-mcp",
      'page.md:5: "command": "npx", "args": ["stageline-mcp"]',
    ]);
  });

  it("is never what a page of the repository says", () => {
    const found = markdownFiles(root).flatMap((file) => offences(file, fs.readFileSync(path.join(root, file), "utf8")));
    expect(found).toEqual([]);
  });
});
