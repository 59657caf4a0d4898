import { sqlMigration } from "../../../mixins/db.mixin";

export const readingsRollups = sqlMigration("EmsReadingsRollups1763810000000", [
  // The energy tags' readings as received: the key makes a redelivered reading a no-op, so
  // the rollups below count each reading once.
  `CREATE TABLE readings (
       monitor_id  uuid NOT NULL,
       tag_id      text NOT NULL,
       ts          bigint NOT NULL,
       value       double precision NOT NULL,
       PRIMARY KEY (monitor_id, tag_id, ts)
     )`,
  // Quarter-hour rollups (rollup.ts says why a quarter hour); bucket is epoch ms.
  `CREATE TABLE rollups (
       monitor_id   uuid NOT NULL,
       tag_id       text NOT NULL,
       bucket       bigint NOT NULL,
       n            integer NOT NULL,
       sum          double precision NOT NULL,
       min          double precision NOT NULL,
       max          double precision NOT NULL,
       first_ts     bigint NOT NULL,
       first_value  double precision NOT NULL,
       last_ts      bigint NOT NULL,
       last_value   double precision NOT NULL,
       PRIMARY KEY (monitor_id, tag_id, bucket)
     )`,
]);
