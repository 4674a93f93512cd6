/**
 * The server's layers, checked on every `npm test` (pretest) and CI run by dependency-cruiser
 * (docs/architecture.md explains them):
 *
 *   edges (API: http/, routes/; admin API and CLI: admin/; console: console/; app.ts, server.ts, main.ts, seed/)
 *     -> services (services/: domain rules)  -> data layer (db/: the only place that talks to the database)
 *   delivery engine (webhooks/) -> data layer
 *   everything may import the contract, @stageline/shared (shared/).
 *
 * A violation fails with the rule's name and the offending import.
 */
const EDGES = "^server/src/(http|routes|admin|console|seed)/|^server/src/(app|server|main)\\.ts$";
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
      to: { path: "^(server|connector|test|bench)/" },
    },
    {
      name: "client-stands-alone",
      severity: "error",
      comment: "The client (client/) reaches the contract only through the OpenAPI document (its generated types): it imports no other package of this repository, and none imports it except tests and the bench.",
      from: { path: "^client/" },
      to: { path: "^(server|connector|shared|test|bench)/" },
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
      from: { path: "^(server|connector|shared|client)/src/", pathNot: TEST_CODE },
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
