import { sqlMigration } from "../../../mixins/db.mixin";

/*
 * One table for every medium (email now; SMS and WhatsApp through Twilio later), so a delivery
 * has one history whatever carried it. `idempotency_key` makes a repeated request one
 * notification. `next_attempt_at` and `claimed_until` let any replica pick up a due retry
 * without two of them sending the same message.
 */
export const init = sqlMigration("NotifierInit1763850000000", [
  `CREATE TABLE notifications (
       notification_id  uuid PRIMARY KEY,
       medium           text NOT NULL CHECK (medium IN ('email', 'sms', 'whatsapp')),
       recipient        text NOT NULL,
       subject          text NULL,
       body             text NOT NULL,
       idempotency_key  text NULL UNIQUE,
       sensitive        boolean NOT NULL DEFAULT false,
       status           text NOT NULL CHECK (status IN ('queued', 'sent', 'failed', 'skipped')),
       attempts         integer NOT NULL DEFAULT 0,
       last_error       text NULL,
       created_at       bigint NOT NULL,
       sent_at          bigint NULL,
       next_attempt_at  bigint NULL,
       claimed_until    bigint NULL
     )`,
  `CREATE INDEX notifications_due ON notifications (next_attempt_at) WHERE status = 'queued'`,
  `CREATE TABLE notification_attempts (
       notification_id  uuid NOT NULL REFERENCES notifications(notification_id) ON DELETE CASCADE,
       attempt          integer NOT NULL,
       at               bigint NOT NULL,
       outcome          text NOT NULL CHECK (outcome IN ('sent', 'transient', 'permanent', 'skipped')),
       error            text NULL,
       PRIMARY KEY (notification_id, attempt)
     )`,
]);
