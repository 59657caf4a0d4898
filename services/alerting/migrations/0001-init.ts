import { sqlMigration } from "../../../mixins/db.mixin";

export const init = sqlMigration("AlertingInit1763900000000", [
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
]);
