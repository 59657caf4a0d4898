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
  // Alarm management (EXTENSIONS.md §1): an alert's acknowledgement, shelf, assignee, suppression
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
  // Maintenance windows (EXTENSIONS.md §1): an alert whose start falls inside one of its watcher's
  // windows opens `suppressed` and is not notified. Epoch ms like start_ts; gone with the watcher.
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
  // Follow-ups of an opened alert (EXTENSIONS.md §1): re-notifications, escalation tiers, the end
  // of a shelf, each a due time claimed by one replica's job (followups.ts) and handed to the
  // notifier on the alerts stream in the transaction that records it. `alert_notices` keeps the
  // opening's notice, which every follow-up sends again (with its own recipients for a tier).
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
  // no_data (EXTENSIONS.md §1, nodata.ts): when each series of a trigger with `no_data` was last
  // heard (epoch ms, arrival time) and when it goes silent; `silent` once its no_data alert opened,
  // until the series is heard again. Claimed by one replica's job (FOR UPDATE SKIP LOCKED).
  // A trigger may now have one active alert per reason: a tag can fall silent while its
  // condition's alert is active, and the condition's close leaves the no_data alert open.
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
];
