import { sqlMigration } from "../../../mixins/db.mixin";

// Alarm management (docs/api-tour.md): an alert's acknowledgement, shelf, assignee, suppression
// and reason, and its history. Existing alerts read as unacknowledged, opened by their condition.
// Times are epoch ms like start_ts; `by` NULL is the system (opened, closed, notified, escalated).
export const lifecycle = sqlMigration("AlertingLifecycleA1766000000000", [
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
]);
