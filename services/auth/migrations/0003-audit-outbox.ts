import { OUTBOX_KEY_SQL, OUTBOX_SQL } from "../../../lib/streams/outbox";
import { sqlMigration } from "../../../mixins/db.mixin";

// the audit trail: the outbox auth stages its audit entries in (lib/audit.ts).
export const auditOutbox = sqlMigration("AuthAuditOutbox1767000000300", [...OUTBOX_SQL, ...OUTBOX_KEY_SQL]);
