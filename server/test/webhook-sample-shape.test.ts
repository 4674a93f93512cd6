/**
 * The sample payloads (GET /v1/ext/webhooks/sample/{items,tasks}) against real deliveries (spec "REST hooks": the
 * sample "is built from the company's actual pipeline blueprint, so its field names and types match real
 * payloads"; CONTRACT.md "Events and deliveries": the item format for item events, the task format for task events,
 * `item.updated` adds `changed_fields` and `previous`). Zapier builds a Zap's fields from the sample, so a key the
 * sample lacks, or a value of another type, breaks the user's field mapping when the live event comes.
 *
 * Real server, real local receiver, subscriptions and changes made through the API. The company's newest pipeline,
 * the one the item sample follows, has a custom field of every type, so every JSON type is compared.
 */
import { CUSTOM_FIELD_TYPES, type CustomField, type CustomFieldType } from "@stageline/shared";
import { startReceiver, type Receiver } from "./helpers/receiver";
import { startTestServer, type TestServer } from "./helpers/test-server";

jest.setTimeout(60_000);

/** One custom field of every type. */
const EVERY_TYPE: CustomField[] = CUSTOM_FIELD_TYPES.map((type) => ({
  key: `${type}_field`,
  label: `A ${type}`,
  type,
  ...(type === "select" ? { options: ["Gold", "Silver"] } : {}),
}));

/** A value of each custom field type for the live item, other than the sample's. */
const LIVE_VALUES: Record<CustomFieldType, unknown> = {
  text: "Met at the trade fair",
  email: "ada@example.org",
  number: 42_000.5,
  boolean: false,
  date: "2026-04-30",
  datetime: "2026-04-30T16:00:00Z",
  url: "https://ada.example.org/deal",
  phone: "(030) 1234-567",
  select: "Silver",
};

type Json = Record<string, unknown>;

/** The JSON type of a value: string, number, boolean, null, array or object. */
function jsonType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

/**
 * How `sample` differs from `live`, one line per problem: a key only one of them has, or a key whose values have
 * different JSON types. A live null matches a sample value of any type (the sample shows what the field holds when
 * set); a sample null where the live value is set does not (the sample would not show the field's type).
 * @param keys the keys to compare (default: all keys of both).
 */
function shapeDifferences(sample: Json, live: Json, keys?: string[]): string[] {
  const problems: string[] = [];
  for (const key of keys ?? [...new Set([...Object.keys(sample), ...Object.keys(live)])].sort()) {
    if (!(key in sample)) problems.push(`${key}: in the live payload, not in the sample`);
    else if (!(key in live)) problems.push(`${key}: in the sample, not in the live payload`);
    else if (live[key] !== null && jsonType(sample[key]) !== jsonType(live[key])) {
      problems.push(`${key}: the sample has ${jsonType(sample[key])} ${JSON.stringify(sample[key])}, the live payload ${jsonType(live[key])} ${JSON.stringify(live[key])}`);
    }
  }
  return problems;
}

describe("sample payloads against live webhook deliveries", () => {
  let t: TestServer;
  let rx: Receiver;
  let key: string;
  /** The body each subscribed event was delivered with. */
  const live: Record<string, Json> = {};

  beforeAll(async () => {
    t = await startTestServer();
    rx = await startReceiver();
    key = (await t.newKey()).key;
    const request = (method: string, path: string, body?: unknown, expectStatus = method === "POST" ? 201 : 200) =>
      t.request(method, path, body, key).then((res) => {
        if (res.status !== expectStatus) throw new Error(`${method} ${path} answered ${res.status}: ${JSON.stringify(res.body)}`);
        return res.body;
      });

    // The company's newest pipeline (the one the item sample follows), with a custom field of every type.
    const prisma = t.server.ctx.prisma;
    const pipeline = await prisma.pipeline.create({
      data: { companyId: t.companyId, name: "Everything", shortIdPrefix: "EVRY", blueprint: { custom_fields: EVERY_TYPE } as object, createdAt: new Date(Date.now() + 60_000) },
    });
    const stages = [];
    for (const [position, name] of ["Intake", "Negotiation"].entries()) {
      const stage = await prisma.stage.create({ data: { pipelineId: pipeline.id, name, position } });
      await prisma.status.create({ data: { stageId: stage.id, name: "Open", position: 0 } });
      stages.push(stage);
    }

    // Every field set, the links included: the samples show example ids for contact_id and item_id.
    for (const event of ["item.created", "item.updated", "task.created"]) {
      await request("POST", "/v1/ext/webhooks", { target_url: `${rx.url}/${event}`, event });
    }
    const item = await request("POST", "/v1/ext/items", {
      name: "Ada's deal",
      pipeline_id: pipeline.id,
      stage_id: stages[0].id,
      source: "zapier",
      contact_id: "contact_42",
      metadata: Object.fromEntries(EVERY_TYPE.map((f) => [f.key, LIVE_VALUES[f.type]])),
    });
    await request("PATCH", `/v1/ext/items/${item.item_id}`, { stage_id: stages[1].id, name: "Ada's big deal", version: item.version });
    await request("POST", "/v1/ext/tasks", {
      title: "Send Ada the contract",
      due_at: "2026-05-04T09:00:00Z",
      assigned_to: "user-ada",
      item_id: item.item_id,
      description: "Contract with the negotiated terms",
      priority: "high",
      task_type: "email",
      duration_minutes: 20,
      reminder_minutes: 60,
      notes: "She prefers PDF",
    });

    await rx.waitFor(() => rx.accepted().length >= 3, "the three deliveries", 30_000);
    for (const r of rx.accepted()) live[r.path.slice(1)] = JSON.parse(r.body.toString("utf8")) as Json;
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await rx?.close();
  });

  const sample = async (resource: "items" | "tasks"): Promise<Json> => {
    const res = await t.request("GET", `/v1/ext/webhooks/sample/${resource}`, undefined, key);
    expect(res.status).toBe(200);
    return res.body as Json;
  };

  it("item.created delivers the keys of the item sample, each with the sample's type", async () => {
    expect(live["item.created"]).toBeDefined();
    expect(shapeDifferences(await sample("items"), live["item.created"])).toEqual([]);
  });

  it("task.created delivers the keys of the task sample, each with the sample's type", async () => {
    expect(live["task.created"]).toBeDefined();
    expect(shapeDifferences(await sample("tasks"), live["task.created"])).toEqual([]);
  });

  it("item.updated delivers every key of the item sample with the sample's type, plus changed_fields and previous", async () => {
    const itemSample = await sample("items");
    const updated = live["item.updated"];
    expect(updated).toBeDefined();
    expect(shapeDifferences(itemSample, updated, Object.keys(itemSample))).toEqual([]);
    expect(Object.keys(updated).filter((k) => !(k in itemSample)).sort()).toEqual(["changed_fields", "previous"]);
  });
});
