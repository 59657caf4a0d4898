import { sqlMigration } from "../../../mixins/db.mixin";

// Maintenance windows (docs/api-tour.md, "Alarm management"): an alert whose start falls inside
// one of its watcher's windows opens `suppressed` and is not notified. Epoch ms like start_ts;
// gone with the watcher.
export const suppressions = sqlMigration("AlertingSuppressionsB1766000000200", [
  `CREATE TABLE suppressions (
       id          uuid   PRIMARY KEY,
       watcher_id  uuid   NOT NULL REFERENCES watchers(watcher_id) ON DELETE CASCADE,
       from_ts     bigint NOT NULL,
       to_ts       bigint NOT NULL,
       reason      text   NOT NULL,
       created_by  text   NULL,
       created_at  bigint NOT NULL
     )`,
  `CREATE INDEX suppressions_watcher ON suppressions (watcher_id, from_ts)`,
]);
