/**
 * Prisma CLI configuration (Prisma 6.19, offline WebAssembly schema engine).
 * `migrate dev` / `migrate diff` run against an embedded PGlite under ./data/prisma-dev unless DATABASE_URL
 * names a PostgreSQL server. The server itself applies migrations on start (src/db/migrations.ts).
 */
import fs from "node:fs";
import path from "node:path";
import { defineConfig } from "prisma/config";

process.env.DATABASE_URL ??= "postgresql://localhost/stageline";

export default defineConfig({
  experimental: { adapter: true },
  engine: "js",
  schema: path.join("prisma", "schema.prisma"),
  migrations: { path: path.join("prisma", "migrations") },
  async adapter() {
    const { PGlite } = await import("@electric-sql/pglite");
    const { PrismaPGlite } = await import("pglite-prisma-adapter");
    const dir = process.env.PRISMA_PGLITE_DIR ?? path.join("data", "prisma-dev");
    fs.mkdirSync(dir, { recursive: true });
    // The package exports "./contrib/*"; the repository's "node" module resolution reads no exports for types.
    const { pg_trgm } = require("@electric-sql/pglite/contrib/pg_trgm") as { pg_trgm: import("@electric-sql/pglite").Extension }; // the items `q` index needs it
    return new PrismaPGlite(new PGlite({ dataDir: dir, extensions: { pg_trgm } }));
  },
});
