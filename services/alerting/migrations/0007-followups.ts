import { sqlMigration } from "../../../mixins/db.mixin";

// Follow-ups of an opened alert (docs/api-tour.md, "Alarm management"): re-notifications,
// escalation tiers, the end of a shelf, each a due time claimed by one replica's job
// (followups.ts) and handed to the notifier on the alerts stream in the transaction that records
// it. `alert_notices` keeps the opening's notice, which every follow-up sends again (with its own
// recipients for a tier).
export const followups = sqlMigration("AlertingFollowupsB21766000000300", [
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
]);
