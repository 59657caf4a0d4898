import { sqlMigration } from "../../../mixins/db.mixin";

// A pipeline's event counter in stripes (one per database backend, so per connection): every
// request of a busy gateway used to update the one pipelines row and wait for the previous
// request's commit to release it. The counter is the stripes' sum, the latest event the newest stripe's.
export const eventStripes = sqlMigration("PipelinesEventStripes1767100000100", [
  `CREATE TABLE pipeline_events (
       pipeline_id   uuid     NOT NULL REFERENCES pipelines(pipeline_id) ON DELETE CASCADE,
       stripe        smallint NOT NULL,
       total_events  bigint   NOT NULL,
       latest_event  jsonb    NOT NULL,
       latest_at     timestamptz NOT NULL,
       PRIMARY KEY (pipeline_id, stripe)
     )`,
  `INSERT INTO pipeline_events (pipeline_id, stripe, total_events, latest_event, latest_at)
     SELECT pipeline_id, 0, total_events, latest_event, now() FROM pipelines WHERE total_events > 0 OR latest_event <> '[]'::jsonb`,
  `ALTER TABLE pipelines DROP COLUMN total_events, DROP COLUMN latest_event`,
]);
