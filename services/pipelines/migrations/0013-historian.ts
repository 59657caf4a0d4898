import { sqlMigration } from "../../../mixins/db.mixin";

// The historian (docs/architecture.md, "The historian"): readings older than HISTORY_COMPRESS_AFTER
// leave `readings` for one row per series and hour, its readings encoded by lib/historian/codec.ts.
// A series is a monitor's tag, named by a small integer instead of two uuids and a text a row.
// The summary columns answer a zoomed-out read without decoding; `data` is zstd already, so
// PostgreSQL keeps it as it is (EXTERNAL: out of line when large, never compressed again).
export const historian = sqlMigration("PipelinesHistorian1767250000500", [
  `CREATE TABLE series (
     series_id   integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
     monitor_id  uuid NOT NULL,
     tag_id      text NOT NULL,
     site_id     uuid NOT NULL,
     UNIQUE (monitor_id, tag_id)
   )`,
  `CREATE INDEX series_site ON series (site_id)`,
  `CREATE TABLE chunks (
     series_id  integer NOT NULL REFERENCES series (series_id) ON DELETE CASCADE,
     start      bigint NOT NULL,
     n          integer NOT NULL,
     first_ts   bigint NOT NULL,
     last_ts    bigint NOT NULL,
     min        double precision NOT NULL,
     max        double precision NOT NULL,
     sum        double precision NOT NULL,
     first      double precision NOT NULL,
     last       double precision NOT NULL,
     data       bytea NOT NULL,
     PRIMARY KEY (series_id, start)
   )`,
  `ALTER TABLE chunks ALTER COLUMN data SET STORAGE EXTERNAL`,
  // The hours with raw readings, marked by the rollups' fold (history.repo.ts): the compression
  // job reads this small table instead of scanning the raw readings for what is due.
  `CREATE TABLE compress_due (
     monitor_id  uuid NOT NULL,
     tag_id      text NOT NULL,
     start       bigint NOT NULL,
     site_id     uuid NOT NULL,
     PRIMARY KEY (monitor_id, tag_id, start)
   )`,
  `CREATE INDEX compress_due_start ON compress_due (start)`,
  `INSERT INTO compress_due (monitor_id, tag_id, start, site_id)
     SELECT monitor_id, tag_id, h, min(site_id::text)::uuid
       FROM (SELECT monitor_id, tag_id, site_id, (floor(extract(epoch FROM ts) * 1000 / 3600000) * 3600000)::bigint AS h FROM readings) r
      GROUP BY 1, 2, 3`,
]);
