/** The notebooks service's migrations in the order they run; a migration's name is what the database recorded, never changed. */
import { notebooksAndRuns } from "./0001-notebooks-and-runs";
import { auditOutbox } from "./0002-audit-outbox";
import { ownerRecord } from "./0003-owner-record";

export const migrations = [notebooksAndRuns, auditOutbox, ownerRecord];
