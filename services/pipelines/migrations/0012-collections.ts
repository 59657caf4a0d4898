import { sqlMigration } from "../../../mixins/db.mixin";

// The pipelines the service collects itself (docs/collectors.md): where each one's collection is
// (its position in the source, and `epoch`, counting the times a user moved it: part of each
// page's idempotency key, so that collecting again from an earlier point stores again), the
// readings it collected and rejected; and the cause in words of a pipeline's latest failure, on
// its latest action.
export const collections = sqlMigration("PipelinesCollections1767250000400", [
  `CREATE TABLE pipeline_collections (
     pipeline_id uuid PRIMARY KEY REFERENCES pipelines (pipeline_id) ON DELETE CASCADE,
     position jsonb NOT NULL,
     epoch integer NOT NULL DEFAULT 0,
     collected bigint NOT NULL DEFAULT 0,
     rejected bigint NOT NULL DEFAULT 0,
     updated_at bigint NOT NULL
   )`,
  `ALTER TABLE pipeline_actions ADD COLUMN error text NULL`,
]);
