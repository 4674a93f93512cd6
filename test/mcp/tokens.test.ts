/**
 * Issue 26 part 4, token economy measured with a real tokenizer (o200k, gpt-tokenizer): a list_items page at the
 * default limit (20) on demo data (the demo company's "Sales" pipeline with realistic deals) fits in 8,000 tokens,
 * and `fields` cuts it further. The tools/list budget is checked in mcp/test/tools.test.ts. The figures are printed
 * (docs/mcp.md quotes them).
 */
import { encode } from "gpt-tokenizer/cjs/encoding/o200k_base";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { startTestServerWithRateLimit, type TestServer } from "../../server/test/helpers/test-server";
import { call } from "./conformance";

/** CONTRACT "MCP server" / issue 26: the most a default list_items page may cost. */
const LIST_PAGE_TOKEN_BUDGET = 8_000;

const FIRST = ["Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "John", "Margaret", "Ken", "Radia", "Niklaus"];
const COMPANIES = ["Acme", "Globex", "Initech", "Umbrella", "Hooli", "Stark", "Wayne", "Wonka", "Tyrell", "Cyberdyne"];

let t: TestServer;
let client: Client;
beforeAll(async () => {
  t = await startTestServerWithRateLimit(100_000);
  // 30 deals spread over the stages, with both custom fields, created through the API as an integration would.
  for (let i = 0; i < 30; i++) {
    const stage = t.pipeline.stages[i % t.pipeline.stages.length]!;
    const first = FIRST[i % FIRST.length]!;
    const company = COMPANIES[i % COMPANIES.length]!;
    const res = await t.request("POST", "/v1/ext/items", {
      name: `${company} ${["renewal", "expansion", "pilot", "new logo"][i % 4]} (${first})`,
      pipeline_id: t.pipeline.id,
      stage_id: stage.id,
      status_id: stage.statuses[i % 3]!.id,
      contact_id: `contact-${1000 + i}`,
      source: i % 2 ? "zapier" : "api",
      metadata: { email: `${first.toLowerCase()}@${company.toLowerCase()}.example`, deal_value: 1_000 + i * 750 },
    });
    expect(res.status).toBe(201);
  }
  client = new Client({ name: "tokens", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${t.url}/v1/ext/mcp`), { requestInit: { headers: { "x-api-key": t.apiKey } } }));
}, 60_000);
afterAll(async () => {
  await client?.close();
  await t?.close();
});

it(`a list_items page at the default limit fits in ${LIST_PAGE_TOKEN_BUDGET} o200k tokens; fields cuts it further`, async () => {
  const page = await call(client, "list_items");
  expect((page.structuredContent!.items as unknown[]).length).toBe(20);
  const full = encode(JSON.stringify(page)).length;
  const slim = await call(client, "list_items", { fields: ["name", "stage", "version"] });
  const slimTokens = encode(JSON.stringify(slim)).length;
  console.log(`list_items, 20 items (o200k tokens): all fields ${full}, fields=[name,stage,version] ${slimTokens}`);
  expect(full).toBeLessThanOrEqual(LIST_PAGE_TOKEN_BUDGET);
  expect(slimTokens).toBeLessThan(full / 2);
});
