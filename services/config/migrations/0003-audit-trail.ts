import { OUTBOX_KEY_SQL, OUTBOX_SQL } from "../../../lib/streams/outbox";
import { sqlMigration } from "../../../mixins/db.mixin";

/*
 * the audit trail: the outbox of the audit entries of config's own changes (staged in
 * the change's transaction), and the log every service's entries are appended to, chained by
 * hash (audit.ts). The log is append-only: a trigger refuses UPDATE, DELETE and TRUNCATE, so
 * only someone who disables it can change a row, and `_verify` finds what they changed.
 */
export const auditTrail = sqlMigration("ConfigAuditTrail1767000000300", [
  ...OUTBOX_SQL,
  ...OUTBOX_KEY_SQL,
  `CREATE TABLE audit_log (
       id           bigint PRIMARY KEY,
       entry_id     text NOT NULL,
       at           bigint NOT NULL,
       actor        text NULL,
       user_type    text NULL,
       action       text NOT NULL,
       entity_type  text NOT NULL,
       entity_id    text NULL,
       site_id      text NULL,
       plant_id     text NULL,
       request_id   text NULL,
       client       text NULL,
       changes      text NOT NULL,
       prev_hash    text NOT NULL,
       hash         text NOT NULL
     )`,
  // A redelivered entry is appended once.
  `CREATE UNIQUE INDEX audit_log_entry ON audit_log (entry_id)`,
  `CREATE INDEX audit_log_at ON audit_log (at DESC, id DESC)`,
  `CREATE INDEX audit_log_site ON audit_log (site_id, at DESC, id DESC)`,
  // No index on actor: each index is paid on every append, and a filter by actor reads the time index.
  `CREATE INDEX audit_log_entity ON audit_log (entity_type, entity_id, at DESC)`,
  `CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN
       RAISE EXCEPTION 'audit_log is append-only';
     END
     $$`,
  `CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON audit_log
       FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only()`,
]);
