import { sqlMigration } from "../../../mixins/db.mixin";

export const sitesPlants = sqlMigration("ConfigSitesPlants1763800000000", [
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
]);
