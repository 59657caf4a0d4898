import { sqlMigration } from "../../../mixins/db.mixin";

// A gateway's Idempotency-Key (idempotency.ts): written in the transaction of what the request
// stored, with its answer, so a retry of a request committed but never answered stores nothing.
export const idempotencyKeys = sqlMigration("PipelinesIdempotencyKeys1767000000000", [
  `CREATE TABLE idempotency_keys (
       pipeline_id  uuid   NOT NULL REFERENCES pipelines(pipeline_id) ON DELETE CASCADE,
       key          text   NOT NULL,
       fingerprint  bytea  NOT NULL,
       answer       text   NOT NULL,
       created_at   bigint NOT NULL,
       PRIMARY KEY (pipeline_id, key)
     )`,
  `CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at)`,
]);
