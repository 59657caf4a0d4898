import { OUTBOX_KEY_SQL, OUTBOX_SQL } from "../../lib/streams/outbox";
import { sqlMigration } from "../../mixins/db.mixin";

export const migrations = [
  sqlMigration("ConfigSitesPlants1763800000000", [
    `CREATE TABLE sites (
       site_id               uuid PRIMARY KEY,
       site_name             text NOT NULL,
       location              text NOT NULL,
       latitude              text NULL,
       longitude             text NULL,
       timezone              text NOT NULL,
       retention_period      bigint NOT NULL DEFAULT 180,
       edge_current_version  text NULL,
       edge_previous_version text NULL,
       created_at            bigint NOT NULL
     )`,
    `CREATE UNIQUE INDEX sites_name_key ON sites (lower(site_name))`,
    `CREATE TABLE plants (
       plant_id    uuid PRIMARY KEY,
       plant_name  text NOT NULL,
       site_id     uuid NOT NULL REFERENCES sites(site_id),
       created_at  bigint NOT NULL
     )`,
    `CREATE UNIQUE INDEX plants_name_key ON plants (site_id, lower(plant_name))`,
  ]),

  /*
   * functions, assets, monitors. Names are unique per parent, case-insensitively, by
   * index (a read before the write would let two parallel creates through). Plant and site are
   * not copied down: they are joined, so a row can never disagree with its parent.
   */
  sqlMigration("ConfigFunctionsAssetsMonitors1763900000000", [
    `CREATE TABLE functions (
       function_id    uuid PRIMARY KEY,
       function_name  text NOT NULL,
       plant_id       uuid NOT NULL REFERENCES plants(plant_id),
       created_at     bigint NOT NULL
     )`,
    `CREATE UNIQUE INDEX functions_name_key ON functions (plant_id, lower(function_name))`,
    `CREATE TABLE assets (
       asset_id        uuid PRIMARY KEY,
       asset_name      text NOT NULL,
       function_id     uuid NOT NULL REFERENCES functions(function_id),
       asset_category  text NOT NULL,
       is_critical     boolean NOT NULL DEFAULT false,
       attributes      jsonb NOT NULL DEFAULT '{}'::jsonb,
       created_at      bigint NOT NULL
     )`,
    `CREATE UNIQUE INDEX assets_name_key ON assets (function_id, lower(asset_name))`,
    `CREATE TABLE monitors (
       monitor_id           uuid PRIMARY KEY,
       monitor_name         text NOT NULL,
       monitor_type         text NOT NULL,
       function_id          uuid NOT NULL REFERENCES functions(function_id),
       asset_id             uuid NULL REFERENCES assets(asset_id),
       tags                 jsonb NOT NULL DEFAULT '[]'::jsonb,
       specs                jsonb NOT NULL DEFAULT '{}'::jsonb,
       attributes           jsonb NOT NULL DEFAULT '{}'::jsonb,
       created_at           bigint NOT NULL,
       -- the pipelines service's registration, learned from its events
       pipeline_id          text NULL,
       data_source          text NULL,
       data_source_subtype  text NULL,
       slave_id             integer NULL,
       data_type            text NULL
     )`,
    `CREATE UNIQUE INDEX monitors_name_key ON monitors (function_id, lower(monitor_name))`,
    `CREATE INDEX monitors_asset ON monitors (asset_id)`,
    `CREATE INDEX monitors_pipeline ON monitors (pipeline_id)`,
  ]),

  /*
   * the audit trail: the outbox of the audit entries of config's own changes (staged in
   * the change's transaction), and the log every service's entries are appended to, chained by
   * hash (audit.ts). The log is append-only: a trigger refuses UPDATE, DELETE and TRUNCATE, so
   * only someone who disables it can change a row, and `_verify` finds what they changed.
   */
  sqlMigration("ConfigAuditTrail1767000000300", [
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
  ]),
  // a change made with a token an admin issued for another user names that admin. Older rows have none, and hash as they did.
  sqlMigration("ConfigAuditViaToken1767250000000", [`ALTER TABLE audit_log ADD COLUMN via_token_of text NULL`]),
];
