import crypto from "node:crypto";
import { openSql } from "../lib/db";
async function main() {
  const sql = await openSql({ kind: "pglite", dataDir: process.argv[2]! });
  const [c] = await sql.query<{ company_id: string }>("SELECT company_id FROM api_keys LIMIT 1");
  const key = "sl_benchxxx_" + crypto.randomBytes(16).toString("hex");
  await sql.query("INSERT INTO api_keys (id, company_id, name, prefix, key_hash, scopes) VALUES ($1,$2,'k','sl_benchxxx',$3,$4)", [crypto.randomUUID(), c!.company_id, crypto.createHash("sha256").update(key).digest("hex"), "{items:read,items:write,tasks:read,tasks:write,hooks:manage}"]);
  console.log(key);
  await sql.close();
}
main();
