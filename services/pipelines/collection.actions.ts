/**
 * The collectors service's calls (docs/collectors.md): not routed. Which pipelines to collect,
 * each page of rows read stored through the same ingestion as `/_ingest`, and the status moves a
 * collection makes.
 */
import type { Context } from "moleculer";
import type { ParamsOf, ReplyOf } from "../../lib/contract";
import * as collection from "./collection";
import type { CollectionContract } from "./contract";
import type { PipelinesActions } from "./pipelines.types";
import { text } from "./schemas";

type Call<K extends keyof CollectionContract> = Context<ParamsOf<CollectionContract, K>>;
type Reply<K extends keyof CollectionContract> = Promise<ReplyOf<CollectionContract, K>>;

const EPOCH_MS = { type: "number", integer: true, min: 0 } as const;
const POSITION = {
  type: "object",
  strict: true,
  props: { last: { type: "string", nullable: true }, seen: { type: "record", key: { type: "string" }, value: { type: "number", integer: true, min: 1 } } },
} as const;

export const collectionActions: PipelinesActions = {
  "collection.pipelines": {
    visibility: "public",
    params: { subtypes: { type: "array", items: text } },
    handler(ctx: Call<"collection.pipelines">): Reply<"collection.pipelines"> {
      return collection.collectedPipelines(this.env, ctx, ctx.params);
    },
  },

  "collection.page": {
    visibility: "public",
    params: {
      pipeline_id: text,
      from: POSITION,
      to: POSITION,
      epoch: { type: "number", integer: true, min: 0 },
      key: { type: "string", min: 1, max: 255 },
      readings: {
        type: "array",
        items: {
          type: "object",
          strict: true,
          props: { monitor_id: text, tag_id: text, ts: EPOCH_MS, value: { type: "number", finite: true } },
        },
      },
      unreadable: { type: "number", integer: true, min: 0 },
    },
    handler(ctx: Call<"collection.page">): Reply<"collection.page"> {
      return collection.storePage(this.env, ctx, ctx.params);
    },
  },

  "collection.running": {
    visibility: "public",
    params: { pipeline_id: text, ts: EPOCH_MS },
    handler(ctx: Call<"collection.running">): Reply<"collection.running"> {
      return collection.running(this.system(ctx), ctx.params);
    },
  },

  "collection.failed": {
    visibility: "public",
    params: { pipeline_id: text, cause: { type: "string", min: 1, max: 2000 } },
    handler(ctx: Call<"collection.failed">): Reply<"collection.failed"> {
      return collection.failed(this.system(ctx), ctx.params);
    },
  },

  "collection.heard": {
    visibility: "public",
    params: { pipeline_id: text, ts: EPOCH_MS },
    handler(ctx: Call<"collection.heard">): Reply<"collection.heard"> {
      return collection.collectionHeard(this.system(ctx), ctx.params);
    },
  },

  "collection.stopped": {
    visibility: "public",
    params: { pipeline_id: text },
    handler(ctx: Call<"collection.stopped">): Reply<"collection.stopped"> {
      return collection.stopped(this.system(ctx), ctx.params);
    },
  },
};
