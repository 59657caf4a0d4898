/**
 * The ingestion routes: a gateway, known by its ingest
 * key as the bearer token, sends readings, waveforms and heartbeats, fetches its configuration,
 * and polls and acks its start/stop actions.
 */
import type { FieldDoc } from "../../lib/operations";
import { EPOCH_MS } from "../../lib/validation";
import * as actions from "./actions";
import { gatewayConfig } from "./gateway-config";
import { heartbeat } from "./heartbeats";
import { answered, IDEMPOTENCY_HEADER, keyedRequest, REPLAYED_HEADER } from "./idempotency";
import * as ingest from "./ingest";
import { MSG } from "./messages";
import { EXAMPLE, INGEST_ID } from "./openapi";
import type { Ctx, PipelinesActions } from "./pipelines.types";
import { COMPONENTS, type Component } from "./pipelines.repo";
import { MAX_READINGS, MAX_SAMPLES } from "./rules";
import { idParams, text } from "./schemas";

/** The header both sending routes take (docs/api-tour.md#retries-the-idempotency-key-header), documented where the routes are. */
const IDEMPOTENCY_KEY_DOC: FieldDoc = {
  in: "header",
  type: "string",
  description:
    "optional, 1-255 printable characters, a new one per request and the same one on each retry of it (kept 24 h, per pipeline): " +
    `a repeat with the same body answers what the first answered (with \`${REPLAYED_HEADER}: true\`) and stores nothing again, even when ` +
    "the first was stored but its answer was lost; the same key with another body is refused (422); a repeat while the first is " +
    "still being stored answers 409 (wait and retry)",
  example: "gw-7f3a2c-000172",
};

const IDEMPOTENCY_ERRORS: [number, string][] = [
  [400, MSG.invalidInput(IDEMPOTENCY_HEADER)],
  [409, MSG.idempotencyInProgress],
  [422, MSG.idempotencyKeyReused],
];

export const ingestActions: PipelinesActions = {
  "ingest.readings": {
    http: {
      routes: ["POST /_ingest/pipelines/:pipeline_id/readings"],
      group: "ingest",
      summary: "Send readings (up to 10,000 a request)",
      description:
        "Each reading is kept or rejected on its own: one for a monitor or tag the pipeline does not map, older than the site's " +
        "retention or more than a day ahead is rejected with its reason. Kept readings are durable once answered. " +
        `Send an ${IDEMPOTENCY_HEADER} with each batch and retry a failed or unanswered one with the same key: it is stored once.`,
      fields: {
        pipeline_id: INGEST_ID,
        [IDEMPOTENCY_HEADER]: IDEMPOTENCY_KEY_DOC,
        readings: {
          type: "$Reading[]",
          description: `at most ${MAX_READINGS}`,
          example: [
            { monitor_id: EXAMPLE.monitor_id, tag_id: "pressure", ts: EXAMPLE.ts, value: 4.2 },
            { monitor_id: EXAMPLE.monitor_id, tag_id: "colour", ts: EXAMPLE.ts, value: 3 },
          ],
        },
      },
      answer: { schema: "$IngestAnswer", example: { accepted: 1, rejected: [{ index: 1, reason: MSG.tagNotMapped }] } },
      errors: [[400, MSG.tooManyReadings], [400, MSG.invalidInput("readings")], ...IDEMPOTENCY_ERRORS],
    },
    params: {
      ...idParams,
      // Its size is checked in the handler, so that a value that is no list says so (Invalid input: readings).
      readings: { type: "array" },
    },
    async handler(ctx: Ctx<ingest.ReadingsInput>) {
      // In this order: a batch too large, then a malformed key (400), before the ingest key (401).
      ingest.checkBatchSize(ctx.params.readings);
      const keyed = keyedRequest(ctx, "readings");
      const port = this.system(ctx);
      const pipeline = await ingest.authenticate(port, ctx.params.pipeline_id);
      return answered(port, await ingest.ingestReadings(port, ctx, pipeline, ctx.params.readings, keyed));
    },
  },

  "ingest.waveform": {
    http: {
      routes: ["POST /_ingest/pipelines/:pipeline_id/waveforms"],
      group: "ingest",
      summary: "Send a vibration capture",
      description:
        "Its spectrum and peaks become what the condition monitoring FFT operations answer. " +
        `With an ${IDEMPOTENCY_HEADER}, a retried capture is stored once.`,
      fields: {
        pipeline_id: INGEST_ID,
        [IDEMPOTENCY_HEADER]: IDEMPOTENCY_KEY_DOC,
        monitor_id: { description: "a monitor the pipeline is mapped to", example: EXAMPLE.monitor_id },
        tag: { description: "the monitor's tag the capture is of", example: "vib" },
        axis: { description: "the sensor's axis", example: "x" },
        ts: { unit: "epoch ms", description: "when the capture started (at most a day ahead)", example: EXAMPLE.ts },
        sample_rate_hz: { unit: "Hz", description: "samples a second", example: 25600 },
        samples: {
          unit: "samples",
          description: `the capture's values in time order, in the tag's unit; 1 to ${MAX_SAMPLES}`,
          example: [0.12, 0.35, -0.08, -0.41, 0.02],
        },
      },
      answer: { id: true },
      errors: [[400, MSG.invalidInput("monitor_id")], [400, MSG.monitorNotMapped], [400, MSG.waveformInFuture], ...IDEMPOTENCY_ERRORS],
    },
    params: {
      ...idParams,
      monitor_id: text,
      tag: text,
      axis: { type: "enum", values: ["x", "y", "z"] },
      ts: EPOCH_MS,
      sample_rate_hz: { type: "number", positive: true, max: 10_000_000 },
      samples: { type: "array", min: 1, max: MAX_SAMPLES, items: { type: "number", finite: true } },
    },
    async handler(ctx: Ctx<ingest.WaveformInput>) {
      const keyed = keyedRequest(ctx, "waveforms");
      const port = this.system(ctx);
      const pipeline = await ingest.authenticate(port, ctx.params.pipeline_id);
      return answered(port, await ingest.ingestWaveform(port, ctx, pipeline, ctx.params, keyed));
    },
  },

  "ingest.heartbeat": {
    http: {
      routes: ["POST /_ingest/pipelines/:pipeline_id/heartbeat"],
      group: "ingest",
      summary: "Report a component's heartbeat",
      description: "The list shows each component's latest; an older or replayed heartbeat does not move it back.",
      fields: {
        pipeline_id: INGEST_ID,
        component: { description: "the gateway's component that is alive", example: "gateway" },
        ts: { unit: "epoch ms", description: "when it was alive (at most a day ahead)", example: EXAMPLE.ts },
      },
      answer: { text: MSG.heartbeatRecorded },
      errors: [[400, MSG.heartbeatInFuture]],
    },
    params: { ...idParams, component: { type: "enum", values: [...COMPONENTS] }, ts: EPOCH_MS },
    handler(ctx: Ctx<{ pipeline_id: string; component: Component; ts: number }>) {
      return heartbeat(this.system(ctx), ctx.params);
    },
  },

  "ingest.config": {
    http: {
      routes: ["GET /_ingest/pipelines/:pipeline_id"],
      group: "ingest",
      summary: "The gateway's own configuration: its pipeline, mapped monitors and tags (fetched at start-up)",
      fields: { pipeline_id: INGEST_ID },
      answer: { schema: "$GatewayConfig" },
    },
    params: idParams,
    handler(ctx: Ctx<{ pipeline_id: string }>) {
      return gatewayConfig(this.system(ctx), ctx.params);
    },
  },

  "ingest.actions": {
    http: {
      routes: ["GET /_ingest/pipelines/:pipeline_id/actions"],
      group: "ingest",
      summary: "Pending start/stop actions of the pipeline",
      fields: { pipeline_id: INGEST_ID },
      answer: {
        schema: "$PipelineAction[]",
        example: [{ action_id: EXAMPLE.action_id, action: "start", status: "in_progress", issued_at: EXAMPLE.ts, completed_at: null }],
      },
    },
    params: idParams,
    handler(ctx: Ctx<{ pipeline_id: string }>) {
      return actions.pendingActions(this.system(ctx), ctx.params);
    },
  },

  "ingest.ack": {
    http: {
      routes: ["POST /_ingest/pipelines/:pipeline_id/actions/:action_id"],
      group: "ingest",
      summary: "Acknowledge an action",
      description: "completed: the pipeline becomes running (start) or stopped (stop); failed: it is in error.",
      fields: {
        pipeline_id: INGEST_ID,
        action_id: { description: "the pending action's id", example: EXAMPLE.action_id },
        status: { description: "how the gateway carried it out", example: "completed" },
      },
      answer: { text: MSG.actionAcknowledged },
      errors: [[404, MSG.invalidActionId("<action_id>")], [409, MSG.actionNotPending]],
    },
    params: { ...idParams, action_id: text, status: { type: "enum", values: ["completed", "failed"] } },
    handler(ctx: Ctx<{ pipeline_id: string; action_id: string; status: "completed" | "failed" }>) {
      return actions.ackAction(this.system(ctx), ctx.params);
    },
  },
};
