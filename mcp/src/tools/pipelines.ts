/**
 * The pipelines toolset (spec "Pipelines"; CONTRACT "MCP server"): describe_pipelines, every pipeline with its
 * stages, their statuses and the custom fields in one call (over the API: GET /pipelines, .../stages,
 * .../statuses, .../fields).
 */
import { z } from "zod";
import { PipelineFieldSchema, PipelineSchema, StageSchema, StatusSchema } from "@stageline/shared";
import { READ, defineTool } from "../tool-definition";

/** CONTRACT "MCP server", "Results": `{ pipelines: [{ id, name, stages: [{ id, name, statuses }], fields }] }`. */
export const PipelineDescriptionSchema = PipelineSchema.pick({ id: true, name: true }).extend({
  stages: z.array(StageSchema.extend({ statuses: z.array(StatusSchema) })),
  fields: z.array(PipelineFieldSchema),
});

export const describePipelines = defineTool({
  name: "describe_pipelines",
  title: "Describe pipelines",
  description:
    "Call first: the pipelines with their stages, statuses and custom fields: the ids other tools need.",
  toolset: "pipelines",
  scope: "any",
  operations: ["listPipelines", "listStages", "listStatuses", "listPipelineFields"],
  annotations: READ,
  input: z.strictObject({}),
  output: z.object({ pipelines: z.array(PipelineDescriptionSchema) }),
  run: async (ops) => ({ pipelines: await ops.describePipelines() }),
  summary: (r) =>
    `${r.pipelines.length} pipeline${r.pipelines.length === 1 ? "" : "s"}: ${r.pipelines.map((p) => `${p.name} (${p.stages.map((s) => s.name).join(" > ")})`).join("; ")}.`,
});
