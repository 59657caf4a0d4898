import { sqlMigration } from "../../../mixins/db.mixin";

// Notebook runs read the API with a read token of their owner, made for the run (run-tokens.ts); the list leaves them out.
export const runTokens = sqlMigration("AuthRunTokens1768000000100", [`ALTER TABLE tokens ADD COLUMN purpose text NULL`]);
