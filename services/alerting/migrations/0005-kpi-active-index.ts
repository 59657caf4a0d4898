import { sqlMigration } from "../../../mixins/db.mixin";

// Alarm KPIs: the standing alerts of a place (stale, unacknowledged) without reading its history;
// a trigger has at most one active alert, so this index stays small.
export const kpiActiveIndex = sqlMigration("AlertingKpiC1766000000100", [`CREATE INDEX alerts_active_site ON alerts (site_id, start_ts) WHERE state = 'active'`]);
