/**
 * The server's layers, checked on every `npm test` (pretest) and CI run by dependency-cruiser
 * (docs/architecture.md explains them):
 *
 *   edges (API: http/, routes/; admin API and CLI: admin/; console: console/; app.ts, server.ts, main.ts, seed/)
 *     -> services (services/: domain rules)  -> data layer (db/: the only place that talks to the database)
 *   delivery engine (webhooks/) -> data layer
 *   everything may import the contract, @stageline/shared (shared/); the n8n nodes (n8n/) for types only.
 *   the MCP tools (mcp/, @stageline/mcp) are a library of the contract: the server's MCP edge (server/src/mcp) imports
 *   it; its stdio program (mcp/src/stdio/) alone imports the client.
 *
 * A violation fails with the rule's name and the offending import.
 */
const EDGES = "^server/src/(http|routes|admin|console|seed|mcp)/|^server/src/(app|server|main)\\.ts$";
/** The stdio program of the MCP package: the only part of mcp/ that talks HTTP (through @stageline/client). */
const MCP_STDIO = "^mcp/src/stdio/";
const TEST_CODE = "(^|/)test/|\\.test\\.ts$";

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "Circular imports make the load order matter and the layers meaningless (generated Prisma code aside).",
      from: { pathNot: "^server/src/generated/" },
      to: { circular: true, pathNot: "^server/src/generated/" },
    },
    {
      name: "data-layer-imports-no-upper-layer",
      severity: "error",
      comment: "The data layer (server/src/db) imports nothing of services, edges or the webhook delivery engine.",
      from: { path: "^server/src/db/" },
      to: { path: [EDGES, "^server/src/(services|webhooks)/"] },
    },
    {
      name: "services-import-no-edge",
      severity: "error",
      comment: "Services hold the domain rules; they import neither an edge nor HTTP frameworks (express, pino-http, helmet).",
      from: { path: "^server/src/services/" },
      to: { path: [EDGES, "node_modules/(express|pino-http|helmet|body-parser|cookie-parser)/", "^server/src/context\\.ts$"], dependencyTypesNot: ["type-only"] },
    },
    {
      name: "delivery-imports-no-service-or-edge",
      severity: "error",
      comment: "The webhook delivery engine (server/src/webhooks) stands beside the services and reads the data layer only.",
      from: { path: "^server/src/webhooks/" },
      to: { path: [EDGES, "^server/src/services/"] },
    },
    {
      name: "console-uses-services-not-the-database",
      severity: "error",
      comment: "The console is a thin edge: it calls services and never opens the data layer itself.",
      from: { path: "^server/src/console/" },
      to: { path: "^server/src/(db|generated)/", dependencyTypesNot: ["type-only"] },
    },
    {
      name: "server-and-connector-stay-apart",
      severity: "error",
      comment: "server and connector never import each other; both import shared.",
      from: { path: "^server/" },
      to: { path: "^connector/" },
    },
    {
      name: "connector-and-server-stay-apart",
      severity: "error",
      comment: "server and connector never import each other; both import shared.",
      from: { path: "^connector/" },
      to: { path: "^server/" },
    },
    {
      name: "shared-imports-neither-side",
      severity: "error",
      comment: "The contract (shared/) is imported by server and connector and imports neither (nor tests).",
      from: { path: "^shared/" },
      to: { path: "^(server|connector|n8n|mcp|test|bench)/" },
    },
    {
      name: "n8n-stays-apart",
      severity: "error",
      comment: "The n8n package (n8n/) imports neither server nor connector, and they do not import it; the contract reaches it through shared.",
      from: { path: "^n8n/" },
      to: { path: "^(server|connector)/" },
    },
    {
      name: "nothing-imports-n8n",
      severity: "error",
      comment: "server and connector never import the n8n package.",
      from: { path: "^(server|connector)/" },
      to: { path: "^n8n/" },
    },
    {
      name: "n8n-nodes-import-the-contract-as-types-only",
      severity: "error",
      comment: "n8n community packages have no runtime dependencies: the nodes and credentials import @stageline/shared for types only.",
      from: { path: "^n8n/(nodes|credentials)/" },
      to: { path: "^shared/", dependencyTypesNot: ["type-only"] },
    },
    {
      name: "mcp-tools-stand-on-the-contract",
      severity: "error",
      comment: "The MCP tool definitions (mcp/src outside stdio/) import the contract and the MCP SDK only: no server, connector, n8n or client code, so the server and the stdio program can both serve them.",
      from: { path: "^mcp/src/", pathNot: MCP_STDIO },
      to: { path: ["^(server|connector|n8n|client|test|bench)/", MCP_STDIO] },
    },
    {
      name: "mcp-stdio-uses-the-client-not-the-server",
      severity: "error",
      comment: "The stdio program (mcp/src/stdio) calls the API over HTTP through @stageline/client; it never imports server, connector or n8n code.",
      from: { path: MCP_STDIO },
      to: { path: "^(server|connector|n8n)/" },
    },
    {
      name: "only-the-mcp-edge-imports-the-mcp-tools",
      severity: "error",
      comment: "In the server, only the MCP edge (server/src/mcp) imports @stageline/mcp, and never its stdio program; connector, n8n and client never do.",
      from: { path: "^(server/src/|connector/|n8n/|client/)", pathNot: "^server/src/mcp/" },
      to: { path: "^mcp/" },
    },
    {
      name: "server-never-imports-the-mcp-stdio-program",
      severity: "error",
      comment: "The server serves the MCP tools in-process; the stdio program (and with it the client) stays out of it.",
      from: { path: "^server/" },
      to: { path: MCP_STDIO },
    },
    {
      name: "client-stands-alone",
      severity: "error",
      comment: "The client (client/) reaches the contract only through the OpenAPI document (its generated types): it imports no other package of this repository, and none imports it except tests and the bench.",
      from: { path: "^client/" },
      to: { path: "^(server|connector|shared|mcp|test|bench)/" },
    },
    {
      name: "only-tests-import-the-client",
      severity: "error",
      comment: "server, connector and shared never import the client.",
      from: { path: "^(server|connector|shared)/src/" },
      to: { path: "^client/" },
    },
    {
      name: "production-code-imports-no-test-code",
      severity: "error",
      comment: "Production code never imports test code.",
      from: { path: "^(server|connector|shared|client|mcp)/src/|^n8n/(nodes|credentials)/", pathNot: TEST_CODE },
      to: { path: TEST_CODE },
    },
  ],
  options: {
    doNotFollow: { path: ["node_modules", "^server/src/generated/"] },
    exclude: { path: "(^|/)(dist|build)/" },
    tsConfig: { fileName: "tsconfig.test.json" },
    tsPreCompilationDeps: true,
    combinedDependencies: true,
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "require", "node", "default"] },
  },
};
