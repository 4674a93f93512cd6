/**
 * `npm run bundle -w @stageline/mcp` (also run by `npm pack`): bundles the stdio program (src/stdio/cli.ts) with the
 * repository packages it uses (@stageline/shared, @stageline/client and its openapi-fetch), which are not published,
 * into dist-bundle/stageline-mcp.js (CommonJS, Node 20). The MCP SDK and zod stay package dependencies, so the
 * contract's schemas and the SDK share one zod.
 */
import { build } from "esbuild";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const repo = path.resolve(root, "..");
await build({
  entryPoints: [path.join(root, "src", "stdio", "cli.ts")],
  outfile: path.join(root, "dist-bundle", "stageline-mcp.js"),
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  external: ["@modelcontextprotocol/server", "@modelcontextprotocol/server/*", "zod", "zod/*"],
  alias: {
    "@stageline/shared": path.join(repo, "shared", "src", "index.ts"),
    "@stageline/client": path.join(repo, "client", "src", "index.ts"),
  },
  legalComments: "none",
  logLevel: "warning",
});
process.stdout.write("Built dist-bundle/stageline-mcp.js\n");
