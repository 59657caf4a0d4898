import { sqlMigration } from "../../../mixins/db.mixin";

// The rollups' share of a batch is staged with its readings, one row a batch (its per-minute
// partial aggregates as arrays), and folded into the minute and hour rollups by a job every
// second (history.repo.ts): a gateway of many tags no longer updates hundreds of rollup rows in
// every request, each waiting on the row locks of the requests before it.
export const rollupPending = sqlMigration("PipelinesRollupPending1767100000000", [
  `CREATE TABLE rollup_pending (
       batch_id     uuid    PRIMARY KEY,
       site_id      uuid    NOT NULL,
       monitor_ids  uuid[]  NOT NULL,
       tag_ids      text[]  NOT NULL,
       starts       bigint[] NOT NULL,
       ns           integer[] NOT NULL,
       sums         double precision[] NOT NULL,
       mins         double precision[] NOT NULL,
       maxes        double precision[] NOT NULL
     )`,
  // A row is read once and deleted within a second: compressing its arrays costs more CPU than it saves.
  `ALTER TABLE rollup_pending ${["monitor_ids", "tag_ids", "starts", "ns", "sums", "mins", "maxes"].map((c) => `ALTER COLUMN ${c} SET STORAGE EXTERNAL`).join(", ")}`,
]);
