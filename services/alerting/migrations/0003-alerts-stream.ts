import { OUTBOX_KEY_SQL, OUTBOX_SQL } from "../../../lib/streams/outbox";
import { sqlMigration } from "../../../mixins/db.mixin";
import { STREAMS } from "../contract";

// Opened alerts reach the notifier through the alerts stream (contract.ts), staged in the stream
// layer's outbox. What the old alert_outbox still held moves into it, in the order it was due,
// in this migration's one transaction, so an upgrade loses no notice; one the old drain had
// handed over already is harmless again (the notifier keys its notifications by alert, user, medium).
export const alertsStream = sqlMigration("AlertingAlertsStream1765200000000", [
  ...OUTBOX_SQL,
  ...OUTBOX_KEY_SQL,
  `INSERT INTO stream_outbox (stream, msg_id, msg_key, payload, created_at)
     SELECT '${STREAMS.alerts}', alert_id::text, payload->>'watcher_id', payload::text, (extract(epoch FROM clock_timestamp()) * 1000)::bigint
       FROM alert_outbox ORDER BY next_attempt_at, alert_id`,
  `DROP TABLE alert_outbox`,
]);
