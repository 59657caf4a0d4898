import { sqlMigration } from "../../../mixins/db.mixin";

// who issued a token (an admin may issue one for another user): its actions are audited `via_token_of` them.
export const tokenIssuer = sqlMigration("AuthTokenIssuer1767250000000", [`ALTER TABLE tokens ADD COLUMN issued_by text NULL`]);
