import fs from "node:fs";
import { openSql } from "../lib/db";
import { seedItems, verifySeededOrder, keysetCursor, seededItemPosition } from "../lib/seed";
async function main() {
  const kind = process.argv[2] as "pglite" | "postgres";
  const n = Number(process.argv[3]);
  const dataDir = "/tmp/scratch/pgl-" + Date.now();
  const schema = "scratch_" + Date.now();
  const loc = kind === "pglite" ? { kind, dataDir } as const : { kind, url: `postgresql://postgres@127.0.0.1:5432/test?schema=${schema}` } as const;
  if (kind === "postgres") { const { Client } = await import("pg"); const c = new Client("postgresql://postgres@127.0.0.1:5432/test"); await c.connect(); await c.query(`CREATE SCHEMA ${schema}`); await c.end(); }
  if (kind === "pglite") fs.mkdirSync(dataDir, { recursive: true });
  const sql = await openSql(loc);
  const mig = fs.readFileSync("/work/main/server/prisma/migrations/20261121000000_init/migration.sql", "utf8").replace('CREATE SCHEMA IF NOT EXISTS "public";', "");
  await sql.exec(mig);
  await sql.exec(`INSERT INTO companies (id, name) VALUES ('c1', 'Co');
    INSERT INTO pipelines (id, company_id, name, short_id_prefix, blueprint) VALUES ('p1','c1','Sales','SALES','{"custom_fields":[{"key":"email","label":"Email","type":"email"},{"key":"deal_value","label":"Deal","type":"number"}]}');
    INSERT INTO stages (id, pipeline_id, name, position) VALUES ('s1','p1','Lead',0),('s2','p1','Qualified',1);
    INSERT INTO statuses (id, stage_id, name, position) VALUES ('st1','s1','Open',0),('st2','s2','Open',0),('st3','s2','Won',1);`);
  const plan = { companyId: "c1", pipelineId: "p1", t0Ms: Math.floor(Date.now() / 1000) * 1000 };
  let t = Date.now();
  await seedItems(sql, plan, 1, 10_001, (d) => console.log("progress", d, Date.now() - t));
  console.log("10k", Date.now() - t);
  await verifySeededOrder(sql, plan, 9000);
  t = Date.now();
  await seedItems(sql, plan, 10_001, n + 1, (d) => console.log("progress", d, Date.now() - t));
  console.log("rest", Date.now() - t);
  await verifySeededOrder(sql, plan, Math.floor(n * 0.9));
  console.log(await sql.query("SELECT id, short_id, stage_id, status_id, metadata, created_at FROM items ORDER BY created_at DESC, id DESC LIMIT 2"));
  console.log(await sql.query("SELECT next_short_id FROM pipelines"));
  console.log(keysetCursor(seededItemPosition(plan, 9000)));
  const plan2 = await sql.query(`EXPLAIN ANALYZE SELECT * FROM items WHERE company_id = 'c1' AND (created_at < $1 OR (created_at = $1 AND id < $2)) ORDER BY created_at DESC, id DESC LIMIT 101`, [seededItemPosition(plan, Math.floor(n*0.9)).createdAt.toISOString(), seededItemPosition(plan, Math.floor(n*0.9)).id]);
  console.log(plan2.map((r: any) => r["QUERY PLAN"]).join("\n"));
  await sql.close();
  if (kind === "postgres") { const { Client } = await import("pg"); const c = new Client("postgresql://postgres@127.0.0.1:5432/test"); await c.connect(); await c.query(`DROP SCHEMA ${schema} CASCADE`); await c.end(); }
  else console.log(require("child_process").execSync(`du -sh ${dataDir}`).toString());
}
main().catch((e) => { console.error(e); process.exit(1); });
