import { sqlMigration } from "../../../mixins/db.mixin";

// A tag's history at any zoom (history.ts): per tag, minute and hour, the readings' count, sum
// and extremes. The readings stored before this migration are folded here, in one pass.
export const historyRollups = sqlMigration("PipelinesHistoryRollups1766000000800", [
  ...["reading_minutes", "reading_hours"].flatMap((table) => [
    `CREATE TABLE ${table} (
         monitor_id  uuid    NOT NULL,
         tag_id      text    NOT NULL,
         start       bigint  NOT NULL,
         site_id     uuid    NOT NULL,
         n           integer NOT NULL,
         sum         double precision NOT NULL,
         min         double precision NOT NULL,
         max         double precision NOT NULL,
         PRIMARY KEY (monitor_id, tag_id, start)
       )`,
    `CREATE INDEX ${table}_site ON ${table} (site_id, start)`,
  ]),
  `CREATE TABLE rolled_batches (
       batch_id   uuid   PRIMARY KEY,
       rolled_at  bigint NOT NULL
     )`,
  `CREATE INDEX rolled_batches_at ON rolled_batches (rolled_at)`,
  ...[
    ["reading_minutes", 60000],
    ["reading_hours", 3600000],
  ].map(
    ([table, size]) =>
      `INSERT INTO ${table} (monitor_id, tag_id, start, site_id, n, sum, min, max)
         SELECT monitor_id, tag_id, t - t % ${size}, min(site_id::text)::uuid, count(*), sum(value), min(value), max(value)
           FROM (SELECT monitor_id, tag_id, site_id, value, round(extract(epoch FROM ts) * 1000)::bigint AS t FROM readings) r
          GROUP BY 1, 2, 3`,
  ),
  `INSERT INTO rolled_batches (batch_id, rolled_at)
     SELECT DISTINCT batch_id, (extract(epoch FROM now()) * 1000)::bigint FROM readings`,
]);
