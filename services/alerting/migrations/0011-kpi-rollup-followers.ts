import { sqlMigration } from "../../../mixins/db.mixin";

// A deleted opening was a predecessor of the two after it, whose hours may be other hours than
// its own: their chatter marks are found again too (AlertingKpiRollupR recomputed only the
// deleted rows' own hours).
export const kpiRollupFollowers = sqlMigration("AlertingKpiRollupFollowersR1766000000900", [
  `CREATE FUNCTION alert_kpi_refollow() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $fn$
     BEGIN
       UPDATE alert_kpi_hours h SET chatter_from = (
                SELECT max(alert_chatter_from(a.watcher_id, a.trigger_id, a.alert_id, a.start_ts)) FROM alerts a
                 WHERE a.watcher_id = h.watcher_id AND a.trigger_id = h.trigger_id AND a.start_ts >= h.hour AND a.start_ts < h.hour + 3600000
                   AND a.site_id = h.site_id AND a.plant_id = h.plant_id AND coalesce(a.function_id, '') = h.function_id)
         FROM (SELECT DISTINCT f.site_id, f.plant_id, coalesce(f.function_id, '') AS function_id, f.watcher_id, f.trigger_id,
                      f.start_ts - f.start_ts % 3600000 AS hour
                 FROM old_rows o CROSS JOIN LATERAL (
                      SELECT * FROM alerts f WHERE f.watcher_id = o.watcher_id AND f.trigger_id = o.trigger_id AND f.start_ts >= o.start_ts
                       ORDER BY f.start_ts LIMIT 2) f) x
        WHERE h.site_id = x.site_id AND h.plant_id = x.plant_id AND h.function_id = x.function_id
          AND h.watcher_id = x.watcher_id AND h.trigger_id = x.trigger_id AND h.hour = x.hour;
       RETURN NULL;
     END $fn$`,
  `CREATE TRIGGER alerts_kpi_delete_followers AFTER DELETE ON alerts REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION alert_kpi_refollow()`,
]);
