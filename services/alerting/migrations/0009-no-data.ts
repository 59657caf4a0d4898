import { sqlMigration } from "../../../mixins/db.mixin";

// no_data (nodata.ts; docs/api-tour.md, "Alarm management"): when each series of a trigger with
// `no_data` was last heard (epoch ms, arrival time) and when it goes silent; `silent` once its
// no_data alert opened, until the series is heard again. Claimed by one replica's job (FOR UPDATE
// SKIP LOCKED). A trigger may now have one active alert per reason: a tag can fall silent while
// its condition's alert is active, and the condition's close leaves the no_data alert open.
export const noData = sqlMigration("AlertingNoDataN1766000000600", [
  `CREATE TABLE no_data_series (
       watcher_id  uuid    NOT NULL,
       trigger_id  text    NOT NULL,
       monitor_id  text    NOT NULL,
       tag_id      text    NOT NULL,
       no_data_ms  bigint  NOT NULL,
       last_seen   bigint  NOT NULL,
       due_at      bigint  NOT NULL,
       silent      boolean NOT NULL DEFAULT false,
       PRIMARY KEY (watcher_id, trigger_id, monitor_id, tag_id),
       FOREIGN KEY (watcher_id, trigger_id) REFERENCES triggers(watcher_id, trigger_id) ON DELETE CASCADE
     )`,
  `CREATE INDEX no_data_series_due ON no_data_series (due_at) WHERE NOT silent`,
  `CREATE INDEX no_data_series_tag ON no_data_series (monitor_id, tag_id)`,
  `CREATE UNIQUE INDEX alerts_one_active_per_trigger_reason ON alerts (watcher_id, trigger_id, reason) WHERE state = 'active'`,
  `DROP INDEX alerts_one_active_per_trigger`,
]);
