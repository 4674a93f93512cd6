/**
 * What the opt-in run imports into n8n: the `stagelineApi` credential (plaintext `data`, which
 * `n8n import:credentials` encrypts) and two workflows using the package's nodes as loaded from a folder
 * (`CUSTOM.` type prefix, N8N.md): Manual Trigger → Stageline "Create Item", and Stageline Trigger
 * on item.created.
 */
import crypto from "node:crypto";

/** Ids are fixed so the steps can address what they imported. */
export const CREDENTIAL = { id: "stagelineE2eCred", name: "Stageline (e2e)" };
export const CREATE_WORKFLOW_ID = "stagelineE2eCreate";
export const TRIGGER_WORKFLOW_ID = "stagelineE2eTrigger";
/** Node ids (the editor opens a node's panel at /workflow/<workflow id>/<node id>). */
export const CREATE_NODE_ID = "7c1d3f9e-0a52-4c61-9a53-2f3e1b0c5a01";
export const TRIGGER_NODE_ID = "7c1d3f9e-0a52-4c61-9a53-2f3e1b0c5a02";

/** The demo pipeline's ids the create workflow uses. */
export interface PipelineChoice {
  pipelineId: string;
  stageId: string;
  statusId: string;
}

/** The credential file for `n8n import:credentials --input=...`. */
export function credentialFile(baseUrl: string, apiKey: string): unknown[] {
  return [{ ...CREDENTIAL, type: "stagelineApi", data: { apiKey, baseUrl } }];
}

const credentials = { stagelineApi: CREDENTIAL };

/** A workflow in n8n's export format. */
function workflow(id: string, name: string, nodes: unknown[], connections: unknown): Record<string, unknown> {
  return { id, name, nodes, connections, active: false, settings: { executionOrder: "v1" }, pinData: {}, versionId: crypto.randomUUID() };
}

/** Manual Trigger → Stageline (Item → Create) with the pipeline, stage and status chosen and the given name. */
export function createItemWorkflow(choice: PipelineChoice, itemName: string): Record<string, unknown> {
  return workflow(
    CREATE_WORKFLOW_ID,
    "Stageline e2e: create an item",
    [
      { id: crypto.randomUUID(), name: "Start", type: "n8n-nodes-base.manualTrigger", typeVersion: 1, position: [0, 0], parameters: {} },
      {
        id: CREATE_NODE_ID,
        name: "Create Item",
        type: "CUSTOM.stageline",
        typeVersion: 1,
        position: [260, 0],
        credentials,
        parameters: {
          resource: "item",
          operation: "create",
          pipelineId: choice.pipelineId,
          stageId: choice.stageId,
          statusId: choice.statusId,
          name: itemName,
          // the demo pipeline's blueprint fields, through the node's resource mapper
          customFields: { mappingMode: "defineBelow", value: { email: "ada@example.com", deal_value: 1200 }, matchingColumns: [], schema: [] },
        },
      },
    ],
    { Start: { main: [[{ node: "Create Item", type: "main", index: 0 }]] } },
  );
}

/** Stageline Trigger on item.created (all pipelines) → nothing else. */
export function triggerWorkflow(): Record<string, unknown> {
  return workflow(
    TRIGGER_WORKFLOW_ID,
    "Stageline e2e: on item.created",
    [
      {
        id: TRIGGER_NODE_ID,
        name: "Stageline Trigger",
        type: "CUSTOM.stagelineTrigger",
        typeVersion: 1,
        position: [0, 0],
        webhookId: crypto.randomUUID(),
        credentials,
        parameters: { events: ["item.created"], pipelineId: "" },
      },
    ],
    {},
  );
}
