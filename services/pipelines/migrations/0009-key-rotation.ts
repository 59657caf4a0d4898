import { sqlMigration } from "../../../mixins/db.mixin";

// An ingest key's rotation: the key it replaced keeps working until previous_key_until (epoch ms,
// INGEST_KEY_GRACE_S after the rotation).
export const keyRotation = sqlMigration("PipelinesKeyRotation1767250000100", [
  `ALTER TABLE pipelines ADD COLUMN previous_key_hash bytea NULL, ADD COLUMN previous_key_until bigint NULL`,
  `CREATE INDEX pipelines_previous_key ON pipelines (previous_key_hash) WHERE previous_key_hash IS NOT NULL`,
]);
