import { sqlMigration } from "../../../mixins/db.mixin";

/*
 * functions, assets, monitors. Names are unique per parent, case-insensitively, by
 * index (a read before the write would let two parallel creates through). Plant and site are
 * not copied down: they are joined, so a row can never disagree with its parent.
 */
export const functionsAssetsMonitors = sqlMigration("ConfigFunctionsAssetsMonitors1763900000000", [
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
]);
