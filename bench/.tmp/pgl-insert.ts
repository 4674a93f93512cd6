import { openPglite } from "../lib/db";
async function main() {
  const db = await openPglite(process.argv[2]!);
  const [p] = (await db.query<any>("SELECT id, company_id FROM pipelines LIMIT 1")).rows;
  const [s] = (await db.query<any>("SELECT s.id AS stage, st.id AS status FROM stages s JOIN statuses st ON st.stage_id = s.id WHERE s.pipeline_id=$1 LIMIT 1", [p.id])).rows;
  for (let i = 0; i < 10; i++) {
    const t = performance.now();
    await db.query("INSERT INTO items (id, company_id, pipeline_id, stage_id, status_id, short_id, name) VALUES (gen_random_uuid()::text, $1, $2, $3, $4, 'T-' || gen_random_uuid()::text, 'x')", [p.company_id, p.id, s.stage, s.status]);
    console.log("insert", (performance.now() - t).toFixed(1));
  }
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    await db.query("SELECT * FROM items WHERE company_id = $1 ORDER BY created_at DESC, id DESC LIMIT 101", [p.company_id]);
    console.log("select", (performance.now() - t).toFixed(1));
  }
  await db.close();
}
main();
