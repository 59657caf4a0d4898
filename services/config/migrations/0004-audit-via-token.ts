import { sqlMigration } from "../../../mixins/db.mixin";

// a change made with a token an admin issued for another user names that admin. Older rows have none, and hash as they did.
export const auditViaToken = sqlMigration("ConfigAuditViaToken1767250000000", [`ALTER TABLE audit_log ADD COLUMN via_token_of text NULL`]);
