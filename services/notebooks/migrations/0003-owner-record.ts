import { sqlMigration } from "../../../mixins/db.mixin";

/*
 * A notebook belongs to its owner's user record, not to the name: owner_since is that record's
 * creation time (auth's users.resolve), so a later user of the same name neither sees nor runs
 * it (owners.ts). Null for notebooks made before it was kept.
 */
export const ownerRecord = sqlMigration("NotebooksOwnerRecord1768000000200", [`ALTER TABLE notebooks ADD COLUMN owner_since bigint NULL`]);
