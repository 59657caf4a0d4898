import { OUTBOX_KEY_SQL } from "../../../lib/streams/outbox";
import { sqlMigration } from "../../../mixins/db.mixin";

// Stream messages carry their pipeline as key: a pipeline's batches reach consumers in order.
export const outboxKey = sqlMigration("PipelinesOutboxKey1765000000000", OUTBOX_KEY_SQL);
