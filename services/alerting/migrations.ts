import { OUTBOX_KEY_SQL, OUTBOX_SQL } from "../../lib/streams/outbox";
import { sqlMigration } from "../../mixins/db.mixin";
import { STREAMS } from "./contract";

export const migrations = [
  sqlMigration("AlertingInit1763900000000", [
    // Watchers as the API shows them; `triggers` is the spec's array as written by the client.
    `CREATE TABLE watchers (
       watcher_id       uuid PRIMARY KEY,
       watcher_name     text NOT NULL,
       function_id      text NULL,
       plant_id         text NOT NULL,
       site_id          text NOT NULL,
       gateway_id       text NOT NULL,
       is_enabled       smallint NOT NULL,
       is_hidden        smallint NOT NULL,
       triggers         jsonb NOT NULL,
       created_at_time  bigint NOT NULL,
       last_update_time bigint NOT NULL
     )`,
    // One watcher per gateway (spec: Limits); the hidden system watcher of a condition gateway is
    // the gateway's second, so a user can still watch a gateway the system already watches.
    `CREATE UNIQUE INDEX watchers_one_per_gateway ON watchers (gateway_id, is_hidden)`,
    `CREATE INDEX watchers_function ON watchers (function_id)`,

    // The evaluation side of each trigger: its compiled rule and its state (evaluator.ts).
    `CREATE TABLE triggers (
       watcher_id  uuid NOT NULL REFERENCES watchers(watcher_id) ON DELETE CASCADE,
       trigger_id  text NOT NULL,
       rule        jsonb NOT NULL,
       state       jsonb NOT NULL,
       PRIMARY KEY (watcher_id, trigger_id)
     )`,
    // Which triggers a reading's (monitor, tag) concerns; only enabled watchers' triggers are here.
    `CREATE TABLE trigger_series (
       monitor_id  text NOT NULL,
       tag_id      text NOT NULL,
       watcher_id  uuid NOT NULL,
       trigger_id  text NOT NULL,
       PRIMARY KEY (monitor_id, tag_id, watcher_id, trigger_id),
       FOREIGN KEY (watcher_id, trigger_id) REFERENCES triggers(watcher_id, trigger_id) ON DELETE CASCADE
     )`,

    // Alerts outlive their watcher: names are copied when the alert opens.
    `CREATE TABLE alerts (
       alert_id      uuid PRIMARY KEY,
       watcher_id    uuid NOT NULL,
       watcher_name  text NOT NULL,
       trigger_id    text NOT NULL,
       trigger_name  text NOT NULL,
       is_hidden     smallint NOT NULL,
       function_id   text NULL,
       plant_id      text NOT NULL,
       site_id       text NOT NULL,
       asset_id      text NULL,
       asset         text NOT NULL DEFAULT '',
       monitor_id    text NOT NULL,
       monitor       text NOT NULL,
       tag           jsonb NOT NULL,
       type_of_data  text NOT NULL,
       severity      integer NOT NULL,
       state         text NOT NULL,
       start_ts      bigint NOT NULL,
       end_ts        bigint NULL,
       note          text NOT NULL DEFAULT '',
       details       jsonb NOT NULL,
       opened_at     bigint NOT NULL
     )`,
    // At most one active alert per trigger, whatever number of replicas evaluate.
    `CREATE UNIQUE INDEX alerts_one_active_per_trigger ON alerts (watcher_id, trigger_id) WHERE state = 'active'`,
    `CREATE INDEX alerts_function_start ON alerts (function_id, start_ts)`,
    `CREATE INDEX alerts_watcher ON alerts (watcher_id, start_ts)`,

    // Opened alerts waiting to be handed to the notifier: written in the transaction that opens
    // the alert, deleted once the notifier has recorded it, so a crash never loses one.
    // Replaced by the alerts stream's outbox (AlertingAlertsStream below).
    `CREATE TABLE alert_outbox (
       alert_id         uuid PRIMARY KEY,
       payload          jsonb NOT NULL,
       attempts         integer NOT NULL DEFAULT 0,
       next_attempt_at  bigint NOT NULL,
       last_error       text NULL
     )`,
    `CREATE INDEX alert_outbox_due ON alert_outbox (next_attempt_at)`,
  ]),
  // The newest reading timestamp taken per series: a reading no newer is late (or a redelivery)
  // and is not evaluated, whether or not a trigger's state was written for it.
  sqlMigration("AlertingSeriesClock1763900000001", [
    `CREATE TABLE series_clock (
       monitor_id  text NOT NULL,
       tag_id      text NOT NULL,
       ts          bigint NOT NULL,
       PRIMARY KEY (monitor_id, tag_id)
     )`,
  ]),
  // Opened alerts reach the notifier through the alerts stream (contract.ts), staged in the stream
  // layer's outbox. What the old alert_outbox still held moves into it, in the order it was due,
  // in this migration's one transaction, so an upgrade loses no notice; one the old drain had
  // handed over already is harmless again (the notifier keys its notifications by alert, user, medium).
  sqlMigration("AlertingAlertsStream1765200000000", [
    ...OUTBOX_SQL,
    ...OUTBOX_KEY_SQL,
    `INSERT INTO stream_outbox (stream, msg_id, msg_key, payload, created_at)
     SELECT '${STREAMS.alerts}', alert_id::text, payload->>'watcher_id', payload::text, (extract(epoch FROM clock_timestamp()) * 1000)::bigint
       FROM alert_outbox ORDER BY next_attempt_at, alert_id`,
    `DROP TABLE alert_outbox`,
  ]),
  // Alarm management (docs/api-tour.md): an alert's acknowledgement, shelf, assignee, suppression
  // and reason, and its history. Existing alerts read as unacknowledged, opened by their condition.
  // Times are epoch ms like start_ts; `by` NULL is the system (opened, closed, notified, escalated).
  sqlMigration("AlertingLifecycleA1766000000000", [
    `ALTER TABLE alerts
       ADD COLUMN ack_state     text    NOT NULL DEFAULT 'unacknowledged',
       ADD COLUMN acked_by      text    NULL,
       ADD COLUMN acked_at      bigint  NULL,
       ADD COLUMN shelved_until bigint  NULL,
       ADD COLUMN assignee      text    NULL,
       ADD COLUMN suppressed    boolean NOT NULL DEFAULT false,
       ADD COLUMN reason        text    NOT NULL DEFAULT 'condition'`,
    `CREATE INDEX alerts_plant_start ON alerts (plant_id, start_ts)`,
    `CREATE INDEX alerts_site_start ON alerts (site_id, start_ts)`,
    // seq orders entries written in the same millisecond in the order they were written.
    `CREATE TABLE alert_history (
       seq       bigserial PRIMARY KEY,
       alert_id  uuid   NOT NULL REFERENCES alerts(alert_id) ON DELETE CASCADE,
       at        bigint NOT NULL,
       "by"      text   NULL,
       action    text   NOT NULL,
       detail    text   NULL
     )`,
    `CREATE INDEX alert_history_alert_at ON alert_history (alert_id, at, seq)`,
    // What existing alerts already went through.
    `INSERT INTO alert_history (alert_id, at, "by", action, detail)
     SELECT alert_id, start_ts, NULL, 'opened', NULL FROM alerts
     UNION ALL
     SELECT alert_id, end_ts, NULL, 'closed', NULL FROM alerts WHERE state = 'closed' AND end_ts IS NOT NULL
     ORDER BY 2, 4 DESC`,
  ]),
  // Alarm KPIs: the standing alerts of a place (stale, unacknowledged) without reading its history;
  // a trigger has at most one active alert, so this index stays small.
  sqlMigration("AlertingKpiC1766000000100", [`CREATE INDEX alerts_active_site ON alerts (site_id, start_ts) WHERE state = 'active'`]),
  // Maintenance windows (docs/api-tour.md, "Alarm management"): an alert whose start falls inside
  // one of its watcher's windows opens `suppressed` and is not notified. Epoch ms like start_ts;
  // gone with the watcher.
  sqlMigration("AlertingSuppressionsB1766000000200", [
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
  ]),
  // Follow-ups of an opened alert (docs/api-tour.md, "Alarm management"): re-notifications,
  // escalation tiers, the end of a shelf, each a due time claimed by one replica's job
  // (followups.ts) and handed to the notifier on the alerts stream in the transaction that records
  // it. `alert_notices` keeps the opening's notice, which every follow-up sends again (with its own
  // recipients for a tier).
  sqlMigration("AlertingFollowupsB21766000000300", [
    `CREATE TABLE alert_notices (
       alert_id  uuid  PRIMARY KEY REFERENCES alerts(alert_id) ON DELETE CASCADE,
       notice    jsonb NOT NULL
     )`,
    // kind: renotify (tier 0, every_ms its period), escalation (tier 1..n, notify_to its people),
    // shelf (tier 0, due when the shelf ends). sent: how many times it was sent (its key part).
    `CREATE TABLE alert_followups (
       alert_id   uuid    NOT NULL REFERENCES alerts(alert_id) ON DELETE CASCADE,
       kind       text    NOT NULL CHECK (kind IN ('renotify', 'escalation', 'shelf')),
       tier       integer NOT NULL,
       due_at     bigint  NOT NULL,
       every_ms   bigint  NULL,
       notify_to  jsonb   NULL,
       sent       integer NOT NULL DEFAULT 0,
       done       boolean NOT NULL DEFAULT false,
       PRIMARY KEY (alert_id, kind, tier)
     )`,
    `CREATE INDEX alert_followups_due ON alert_followups (due_at) WHERE NOT done`,
  ]),
  // Alarm KPIs, one scan per figure group (kpi.repo.ts): each place's openings per trigger in
  // start order with what the totals need, so the window function neither sorts nor reads the table.
  sqlMigration("AlertingKpiC21766000000500", [
    `CREATE INDEX alerts_kpi_site ON alerts (site_id, watcher_id, trigger_id, start_ts) INCLUDE (severity, acked_at, end_ts, state, plant_id)`,
    `CREATE INDEX alerts_kpi_plant ON alerts (plant_id, watcher_id, trigger_id, start_ts) INCLUDE (severity, acked_at, end_ts, state, site_id)`,
    `CREATE INDEX alerts_kpi_function ON alerts (function_id, watcher_id, trigger_id, start_ts) INCLUDE (severity, acked_at, end_ts, state, site_id, plant_id)`,
  ]),
  // no_data (nodata.ts; docs/api-tour.md, "Alarm management"): when each series of a trigger with
  // `no_data` was last heard (epoch ms, arrival time) and when it goes silent; `silent` once its
  // no_data alert opened, until the series is heard again. Claimed by one replica's job (FOR UPDATE
  // SKIP LOCKED). A trigger may now have one active alert per reason: a tag can fall silent while
  // its condition's alert is active, and the condition's close leaves the no_data alert open.
  sqlMigration("AlertingNoDataN1766000000600", [
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
  ]),
  // Alarm KPIs from rollups kept at write time (kpi.repo.ts reads them, kpi.ts defines the
  // figures): openings per place and minute (the 10-minute windows), and per trigger and hour
  // what the totals, the means and the chattering need. Statement triggers on alerts keep them in
  // the transaction of every insert, update or delete, whichever path writes the alert; a bulk
  // statement costs one aggregate, not one upsert per row. `chatter_from` is the latest start of
  // an opening's second predecessor (same trigger) within 60 s: a trigger chatters in a range
  // when an opening in it has its two predecessors in it too. An insert can only move a
  // predecessor later, so the hour keeps the greatest; a delete recomputes its hours' maxima. The functions
  // keep the schema's search_path, so a statement from any connection finds the rollups.
  sqlMigration("AlertingKpiRollupR1766000000700", [
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
  ]),
  // A deleted opening was a predecessor of the two after it, whose hours may be other hours than
  // its own: their chatter marks are found again too (AlertingKpiRollupR recomputed only the
  // deleted rows' own hours).
  sqlMigration("AlertingKpiRollupFollowersR1766000000900", [
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
  ]),
];
