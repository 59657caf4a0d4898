import { sqlMigration } from "../../../mixins/db.mixin";

/*
 * config's copy of where the pipelines are and whether they received events, kept from the
 * pipelines service's events (pipeline-places.ts): a plant's pipelines for its list and delete,
 * a pipeline's place for the monitor list's filter. A deleted pipeline stays as a row marked
 * deleted, so that an event of it arriving late cannot bring it back.
 */
export const pipelinePlaces = sqlMigration("ConfigPipelinePlaces1767300000000", [
  `CREATE TABLE pipeline_places (
       pipeline_id  uuid PRIMARY KEY,
       site_id      uuid NOT NULL,
       plant_id     uuid NOT NULL,
       has_events   boolean NOT NULL DEFAULT false,
       -- epoch ms of the placement (the pipelines service's clock): a later one wins
       at           bigint NOT NULL,
       deleted      boolean NOT NULL DEFAULT false
     )`,
  `CREATE INDEX pipeline_places_plant ON pipeline_places (plant_id) WHERE NOT deleted`,
]);
