import { sqlMigration } from "../../../mixins/db.mixin";

// Alarm KPIs from rollups kept at write time (kpi.repo.ts reads them, kpi.ts defines the
// figures): openings per place and minute (the 10-minute windows), and per trigger and hour
// what the totals, the means and the chattering need. Statement triggers on alerts keep them in
// the transaction of every insert, update or delete, whichever path writes the alert; a bulk
// statement costs one aggregate, not one upsert per row. `chatter_from` is the latest start of
// an opening's second predecessor (same trigger) within 60 s: a trigger chatters in a range
// when an opening in it has its two predecessors in it too. An insert can only move a
// predecessor later, so the hour keeps the greatest; a delete recomputes its hours' maxima. The functions
// keep the schema's search_path, so a statement from any connection finds the rollups.
export const kpiRollup = sqlMigration("AlertingKpiRollupR1766000000700", [
  `CREATE TABLE alert_kpi_minutes (
       site_id      text   NOT NULL,
       plant_id     text   NOT NULL,
       function_id  text   NOT NULL,
       minute       bigint NOT NULL,
       openings     integer NOT NULL,
       PRIMARY KEY (site_id, plant_id, function_id, minute)
     )`,
  `CREATE INDEX alert_kpi_minutes_plant ON alert_kpi_minutes (plant_id, minute) INCLUDE (openings, site_id)`,
  `CREATE INDEX alert_kpi_minutes_function ON alert_kpi_minutes (function_id, minute) INCLUDE (openings, site_id, plant_id)`,
  `CREATE INDEX alert_kpi_minutes_site ON alert_kpi_minutes (site_id, minute) INCLUDE (openings, plant_id)`,
  `CREATE TABLE alert_kpi_hours (
       site_id       text    NOT NULL,
       plant_id      text    NOT NULL,
       function_id   text    NOT NULL,
       watcher_id    uuid    NOT NULL,
       trigger_id    text    NOT NULL,
       hour          bigint  NOT NULL,
       openings      integer NOT NULL,
       high          integer NOT NULL,
       medium        integer NOT NULL,
       low           integer NOT NULL,
       ack_sum       bigint  NOT NULL,
       ack_n         integer NOT NULL,
       close_sum     bigint  NOT NULL,
       close_n       integer NOT NULL,
       last_start    bigint  NULL,
       chatter_from  bigint  NULL,
       PRIMARY KEY (site_id, plant_id, function_id, watcher_id, trigger_id, hour)
     )`,
  `CREATE INDEX alert_kpi_hours_site ON alert_kpi_hours (site_id, hour) INCLUDE (plant_id, watcher_id, trigger_id, openings, high, medium, low, ack_sum, ack_n, close_sum, close_n, last_start, chatter_from)`,
  `CREATE INDEX alert_kpi_hours_plant ON alert_kpi_hours (plant_id, hour) INCLUDE (site_id, watcher_id, trigger_id, openings, high, medium, low, ack_sum, ack_n, close_sum, close_n, last_start, chatter_from)`,
  `CREATE INDEX alert_kpi_hours_function ON alert_kpi_hours (function_id, hour) INCLUDE (site_id, plant_id, watcher_id, trigger_id, openings, high, medium, low, ack_sum, ack_n, close_sum, close_n, last_start, chatter_from)`,
  // A trigger's openings in start order: its predecessors, its newest name.
  `CREATE INDEX alerts_trigger_start ON alerts (watcher_id, trigger_id, start_ts)`,
  // The standing figures read only active alerts, of a site (alerts_active_site), a plant or a function.
  `CREATE INDEX alerts_active_plant ON alerts (plant_id, start_ts) WHERE state = 'active'`,
  `CREATE INDEX alerts_active_function ON alerts (function_id, start_ts) WHERE state = 'active'`,
  `DROP INDEX alerts_kpi_site`,
  `DROP INDEX alerts_kpi_plant`,
  `DROP INDEX alerts_kpi_function`,
  // The start of an opening's second predecessor of the same trigger when it is within 60 s
  // (kpi.repo.ts reads the same for the raw openings at a range's edges).
  `CREATE FUNCTION alert_chatter_from(w uuid, t text, a uuid, s bigint) RETURNS bigint LANGUAGE sql STABLE SET search_path FROM CURRENT AS $fn$
       SELECT p.start_ts FROM (SELECT start_ts FROM alerts
                                WHERE watcher_id = w AND trigger_id = t AND start_ts <= s AND alert_id <> a
                                ORDER BY start_ts DESC LIMIT 1 OFFSET 1) p
        WHERE s - p.start_ts <= 60000
     $fn$`,
  // Transition tables are seen by the trigger's own function only, hence one function: the
  // signed rows (+1 written, -1 replaced or deleted) summed into both rollups, then chatter.
  `CREATE FUNCTION alert_kpi_rollup() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $fn$
     DECLARE src text;
     BEGIN
       IF TG_OP = 'INSERT' THEN
         src := 'SELECT *, 1 AS sign FROM new_rows';
       ELSIF TG_OP = 'UPDATE' THEN
         -- Only rows whose KPI columns changed (a note or an assignee changes nothing here).
         src := $q$
           SELECT n.*, 1 AS sign FROM new_rows n JOIN old_rows o USING (alert_id)
            WHERE (n.acked_at, n.end_ts, n.state, n.severity, n.start_ts, n.site_id, n.plant_id, n.function_id, n.watcher_id, n.trigger_id)
                  IS DISTINCT FROM (o.acked_at, o.end_ts, o.state, o.severity, o.start_ts, o.site_id, o.plant_id, o.function_id, o.watcher_id, o.trigger_id)
           UNION ALL
           SELECT o.*, -1 FROM old_rows o JOIN new_rows n USING (alert_id)
            WHERE (n.acked_at, n.end_ts, n.state, n.severity, n.start_ts, n.site_id, n.plant_id, n.function_id, n.watcher_id, n.trigger_id)
                  IS DISTINCT FROM (o.acked_at, o.end_ts, o.state, o.severity, o.start_ts, o.site_id, o.plant_id, o.function_id, o.watcher_id, o.trigger_id)$q$;
       ELSE
         src := 'SELECT *, -1 AS sign FROM old_rows';
       END IF;
       EXECUTE format($q$
         INSERT INTO alert_kpi_minutes AS m (site_id, plant_id, function_id, minute, openings)
         SELECT site_id, plant_id, coalesce(function_id, ''), start_ts - start_ts %% 60000, sum(sign)
           FROM (%s) c GROUP BY 1, 2, 3, 4 HAVING sum(sign) <> 0 ORDER BY 1, 2, 3, 4
         ON CONFLICT (site_id, plant_id, function_id, minute) DO UPDATE SET openings = m.openings + EXCLUDED.openings$q$, src);
       EXECUTE format($q$
         INSERT INTO alert_kpi_hours AS h (site_id, plant_id, function_id, watcher_id, trigger_id, hour, openings, high, medium, low,
                                           ack_sum, ack_n, close_sum, close_n, last_start)
         SELECT site_id, plant_id, coalesce(function_id, ''), watcher_id, trigger_id, start_ts - start_ts %% 3600000, sum(sign),
                sum(CASE WHEN severity <= 1 THEN sign ELSE 0 END), sum(CASE WHEN severity = 2 THEN sign ELSE 0 END),
                sum(CASE WHEN severity >= 3 THEN sign ELSE 0 END),
                coalesce(sum(sign * (acked_at - start_ts)), 0), sum(CASE WHEN acked_at IS NOT NULL THEN sign ELSE 0 END),
                coalesce(sum(sign * (end_ts - start_ts)) FILTER (WHERE state = 'closed'), 0),
                sum(CASE WHEN state = 'closed' AND end_ts IS NOT NULL THEN sign ELSE 0 END),
                max(start_ts) FILTER (WHERE sign > 0)
           FROM (%s) c GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6
         ON CONFLICT (site_id, plant_id, function_id, watcher_id, trigger_id, hour) DO UPDATE SET
           openings = h.openings + EXCLUDED.openings, high = h.high + EXCLUDED.high, medium = h.medium + EXCLUDED.medium,
           low = h.low + EXCLUDED.low, ack_sum = h.ack_sum + EXCLUDED.ack_sum, ack_n = h.ack_n + EXCLUDED.ack_n,
           close_sum = h.close_sum + EXCLUDED.close_sum, close_n = h.close_n + EXCLUDED.close_n,
           last_start = GREATEST(h.last_start, EXCLUDED.last_start)$q$, src);
       IF TG_OP = 'INSERT' THEN
         -- The openings whose predecessors the new rows may have moved: each new one and the two after it.
         WITH affected AS (
           SELECT alert_id, watcher_id, trigger_id, start_ts, site_id, plant_id, function_id FROM new_rows
           UNION
           SELECT f.alert_id, f.watcher_id, f.trigger_id, f.start_ts, f.site_id, f.plant_id, f.function_id
             FROM new_rows n CROSS JOIN LATERAL (
                  SELECT * FROM alerts f WHERE f.watcher_id = n.watcher_id AND f.trigger_id = n.trigger_id
                     AND f.start_ts >= n.start_ts AND f.alert_id <> n.alert_id ORDER BY f.start_ts LIMIT 2) f
         ), found AS (
           SELECT site_id, plant_id, coalesce(function_id, '') AS function_id, watcher_id, trigger_id, start_ts - start_ts % 3600000 AS hour,
                  max(alert_chatter_from(watcher_id, trigger_id, alert_id, start_ts)) AS chatter_from
             FROM affected GROUP BY 1, 2, 3, 4, 5, 6
         )
         UPDATE alert_kpi_hours h SET chatter_from = GREATEST(h.chatter_from, found.chatter_from)
           FROM found
          WHERE found.chatter_from IS NOT NULL AND h.site_id = found.site_id AND h.plant_id = found.plant_id
            AND h.function_id = found.function_id AND h.watcher_id = found.watcher_id AND h.trigger_id = found.trigger_id AND h.hour = found.hour;
       ELSIF TG_OP = 'DELETE' THEN
         -- A maximum cannot be taken back: the hours that lost openings find theirs again.
         UPDATE alert_kpi_hours h SET (chatter_from, last_start) = (
                  SELECT max(alert_chatter_from(a.watcher_id, a.trigger_id, a.alert_id, a.start_ts)), max(a.start_ts) FROM alerts a
                   WHERE a.watcher_id = h.watcher_id AND a.trigger_id = h.trigger_id AND a.start_ts >= h.hour AND a.start_ts < h.hour + 3600000
                     AND a.site_id = h.site_id AND a.plant_id = h.plant_id AND coalesce(a.function_id, '') = h.function_id)
           FROM (SELECT DISTINCT site_id, plant_id, coalesce(function_id, '') AS function_id, watcher_id, trigger_id, start_ts - start_ts % 3600000 AS hour
                   FROM old_rows) o
          WHERE h.site_id = o.site_id AND h.plant_id = o.plant_id AND h.function_id = o.function_id
            AND h.watcher_id = o.watcher_id AND h.trigger_id = o.trigger_id AND h.hour = o.hour;
       END IF;
       RETURN NULL;
     END $fn$`,
  `CREATE TRIGGER alerts_kpi_insert AFTER INSERT ON alerts REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION alert_kpi_rollup()`,
  `CREATE TRIGGER alerts_kpi_update AFTER UPDATE ON alerts REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION alert_kpi_rollup()`,
  `CREATE TRIGGER alerts_kpi_delete AFTER DELETE ON alerts REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION alert_kpi_rollup()`,
  // The alerts already stored, in one pass (lag gives each opening its second predecessor).
  `INSERT INTO alert_kpi_minutes (site_id, plant_id, function_id, minute, openings)
     SELECT site_id, plant_id, coalesce(function_id, ''), start_ts - start_ts % 60000, count(*) FROM alerts GROUP BY 1, 2, 3, 4`,
  `INSERT INTO alert_kpi_hours (site_id, plant_id, function_id, watcher_id, trigger_id, hour, openings, high, medium, low,
                                  ack_sum, ack_n, close_sum, close_n, last_start, chatter_from)
     SELECT site_id, plant_id, coalesce(function_id, ''), watcher_id, trigger_id, start_ts - start_ts % 3600000, count(*),
            count(*) FILTER (WHERE severity <= 1), count(*) FILTER (WHERE severity = 2), count(*) FILTER (WHERE severity >= 3),
            coalesce(sum(acked_at - start_ts), 0), count(acked_at),
            coalesce(sum(end_ts - start_ts) FILTER (WHERE state = 'closed'), 0), count(end_ts) FILTER (WHERE state = 'closed'),
            max(start_ts), max(p2) FILTER (WHERE start_ts - p2 <= 60000)
       FROM (SELECT *, lag(start_ts, 2) OVER (PARTITION BY watcher_id, trigger_id ORDER BY start_ts, alert_id) AS p2 FROM alerts) a
      GROUP BY 1, 2, 3, 4, 5, 6`,
]);
