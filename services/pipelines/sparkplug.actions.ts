/**
 * The mqtt service's calls (docs/sparkplug.md): not routed. A Sparkplug gateway's CONNECT is
 * checked like an `/_ingest` request, its metrics go through the same ingestion, and its births
 * and deaths move its pipeline's status.
 */
import type { Context } from "moleculer";
import type { ParamsOf, ReplyOf } from "../../lib/contract";
import type { PipelinesActions } from "./pipelines.types";
import type { SparkplugContract } from "./contract";
import { text } from "./schemas";
import * as sparkplug from "./sparkplug";

type Call<K extends keyof SparkplugContract> = Context<ParamsOf<SparkplugContract, K>>;
type Reply<K extends keyof SparkplugContract> = Promise<ReplyOf<SparkplugContract, K>>;

const EPOCH_MS = { type: "number", integer: true, min: 0 } as const;

export const sparkplugActions: PipelinesActions = {
  "sparkplug.connect": {
    visibility: "public",
    params: { pipeline_id: text, ingest_key: text },
    handler(ctx: Call<"sparkplug.connect">): Reply<"sparkplug.connect"> {
      return sparkplug.connect(this.env, ctx.params);
    },
  },

  "sparkplug.node": {
    visibility: "public",
    params: { edge_node: text, site_ids: { type: "array", items: text, nullable: true } },
    handler(ctx: Call<"sparkplug.node">): Reply<"sparkplug.node"> {
      return sparkplug.nodeOfEdgeId(this.env, ctx.params);
    },
  },

  "sparkplug.readings": {
    visibility: "public",
    params: {
      pipeline_id: text,
      messages: {
        type: "array",
        items: {
          type: "object",
          strict: true,
          props: {
            message_id: text,
            device: { type: "string", nullable: true },
            names: { type: "array", items: "string" },
            ts: { type: "array", items: EPOCH_MS },
            values: { type: "array", items: { type: "number", finite: true } },
          },
        },
      },
    },
    handler(ctx: Call<"sparkplug.readings">): Reply<"sparkplug.readings"> {
      return sparkplug.ingestMetrics(this.env, ctx, ctx.params);
    },
  },

  "sparkplug.birth": {
    visibility: "public",
    params: { pipeline_id: text, ts: EPOCH_MS },
    handler(ctx: Call<"sparkplug.birth">): Reply<"sparkplug.birth"> {
      return sparkplug.birth(this.system(ctx), ctx.params);
    },
  },

  "sparkplug.death": {
    visibility: "public",
    params: { pipeline_id: text, ts: EPOCH_MS },
    handler(ctx: Call<"sparkplug.death">): Reply<"sparkplug.death"> {
      return sparkplug.death(this.system(ctx), ctx.params);
    },
  },

  "sparkplug.release": {
    visibility: "public",
    params: { pipeline_id: text },
    handler(ctx: Call<"sparkplug.release">): Reply<"sparkplug.release"> {
      return sparkplug.release(this.system(ctx), ctx.params);
    },
  },

  "sparkplug.heard": {
    visibility: "public",
    params: { pipeline_id: text, ts: EPOCH_MS },
    handler(ctx: Call<"sparkplug.heard">): Reply<"sparkplug.heard"> {
      return sparkplug.heard(this.system(ctx), ctx.params);
    },
  },
};
