import { OUTBOX_KEY_SQL, OUTBOX_SQL } from "../../../lib/streams/outbox";
import { sqlMigration } from "../../../mixins/db.mixin";

// The audit trail: the outbox the service stages its audit entries in (lib/audit.ts).
export const auditOutbox = sqlMigration("NotebooksAuditOutbox1767000000300", [...OUTBOX_SQL, ...OUTBOX_KEY_SQL]);
