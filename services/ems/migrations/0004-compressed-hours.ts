import { sqlMigration } from "../../../mixins/db.mixin";

// The readings key past HISTORY_COMPRESS_AFTER (hours.ts): one row per monitor, tag and UTC hour
// holding that hour's timestamps, encoded by lib/historian/codec.ts, instead of a row a reading.
// Nothing reads the values back (the rollups hold every figure), so none are kept. `data` is zstd
// already: EXTERNAL keeps PostgreSQL from compressing it again.
export const compressedHours = sqlMigration("EmsCompressedHours1767300000100", [
  `CREATE TABLE compressed_hours (
       monitor_id  uuid NOT NULL,
       tag_id      text NOT NULL,
       start       bigint NOT NULL,
       n           integer NOT NULL,
       data        bytea NOT NULL,
       PRIMARY KEY (monitor_id, tag_id, start)
     )`,
  `ALTER TABLE compressed_hours ALTER COLUMN data SET STORAGE EXTERNAL`,
]);
