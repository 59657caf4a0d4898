import { JOBS_TABLE_DDL } from "../../../lib/daily-job";
import { sqlMigration } from "../../../mixins/db.mixin";

export const retention = sqlMigration("EmsRetention1764000000000", [
  // The daily retention run's claim (lib/daily-job).
  JOBS_TABLE_DDL,
  // Per monitor, the instant before which retention deleted its readings: an older reading
  // arriving again is not taken, since the readings key that would make it a no-op is gone
  // and the rollups may have counted it already.
  `CREATE TABLE retained_from (
       monitor_id  uuid PRIMARY KEY,
       ts          bigint NOT NULL
     )`,
]);
