import { sqlMigration } from "../../../mixins/db.mixin";

// Alarm KPIs, one scan per figure group (kpi.repo.ts): each place's openings per trigger in
// start order with what the totals need, so the window function neither sorts nor reads the table.
export const kpiOpenings = sqlMigration("AlertingKpiC21766000000500", [
  `CREATE INDEX alerts_kpi_site ON alerts (site_id, watcher_id, trigger_id, start_ts) INCLUDE (severity, acked_at, end_ts, state, plant_id)`,
  `CREATE INDEX alerts_kpi_plant ON alerts (plant_id, watcher_id, trigger_id, start_ts) INCLUDE (severity, acked_at, end_ts, state, site_id)`,
  `CREATE INDEX alerts_kpi_function ON alerts (function_id, watcher_id, trigger_id, start_ts) INCLUDE (severity, acked_at, end_ts, state, site_id, plant_id)`,
]);
