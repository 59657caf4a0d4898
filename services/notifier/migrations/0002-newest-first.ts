import { sqlMigration } from "../../../mixins/db.mixin";

// The admin's listing (REPL `notifications`) reads newest first; without this it sorts the whole table.
export const newestFirst = sqlMigration("NotifierNewestFirst1765100000000", [
  `CREATE INDEX notifications_newest ON notifications (created_at DESC, notification_id DESC)`,
]);
