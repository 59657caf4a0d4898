/** A pipeline's ingest key, rotated (keys.ts). */
import { rotateIngestKey } from "./keys";
import { MSG } from "./messages";
import { EXAMPLE, EXAMPLE_INGEST_KEY } from "./openapi";
import type { Ctx, PipelinesActions } from "./pipelines.types";
import { text } from "./schemas";

export const keysActions: PipelinesActions = {
  rotateKey: {
    http: {
      routes: ["POST /_config/pipelines/:pipeline_id/_rotate_key"],
      group: "pipelines",
      summary: "Rotate a pipeline's ingest key",
      description:
        "A new ingest key for the pipeline (either kind), shown this once; only its hash is kept. The key it replaces keeps working " +
        "for INGEST_KEY_GRACE_S (3600 s unless configured), time to give the gateway the new one, then stops; a second rotation ends " +
        "the first replaced key at once. Whoever may update the pipeline may rotate its key. " +
        "The new key reads the gateway's configuration with its secrets: a plant-admin's rotation clears the pipeline's stored " +
        "secrets (null), which it may not read, except those the body enters anew (`settings`, e.g. `{\"user_password\": \"...\"}`); " +
        "a site-admin's or saas-admin's keeps them.",
      fields: {
        pipeline_id: { description: "the pipeline whose key to rotate", example: EXAMPLE.pipeline_id },
        settings: {
          type: "object",
          required: false,
          description: "secrets of the pipeline's settings entered anew, by name at their place (the others are cleared by a plant-admin's rotation, kept by an administrator's)",
          example: { user_password: "Opc#2026-rotated" },
        },
      },
      answer: { schema: "$IngestKey", example: { ingest_key: EXAMPLE_INGEST_KEY } },
      errors: [[400, MSG.invalidPipelineId("<pipeline_id>")], [400, MSG.invalidInput("settings.<name>")], [403, MSG.unauthorizedOperation]],
    },
    params: { pipeline_id: text, settings: { type: "object", optional: true } },
    handler(ctx: Ctx<{ pipeline_id: string; settings?: Record<string, unknown> }>) {
      return rotateIngestKey(this.use(ctx), ctx.params);
    },
  },
};
