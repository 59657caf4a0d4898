import { JOBS_TABLE_DDL } from "../../lib/daily-job";
import { sqlMigration } from "../../mixins/db.mixin";

export const migrations = [
  sqlMigration("EmsReadingsRollups1763810000000", [
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
  ]),
  sqlMigration("EmsDailyRollups1763820000000", [
    // Local days of the site's time zone, each folded from its quarter hours: a year's daily or
    // monthly trend reads 365 rows instead of 35,040. `increase` is the counter's increase within
    // the day by the quarter-hour rules (rollup.ts), so either level gives the same figures.
    `CREATE TABLE rollups_daily (
       monitor_id   uuid NOT NULL,
       tag_id       text NOT NULL,
       tz           text NOT NULL,
       day          bigint NOT NULL,
       n            integer NOT NULL,
       sum          double precision NOT NULL,
       first_value  double precision NOT NULL,
       last_value   double precision NOT NULL,
       increase     double precision NOT NULL,
       PRIMARY KEY (monitor_id, tz, tag_id, day)
     )`,
    // The zone a monitor's daily rows are in; a site that changes zone has them rebuilt.
    `CREATE TABLE monitor_zones (
       monitor_id  uuid PRIMARY KEY,
       tz          text NOT NULL
     )`,
  ]),
  sqlMigration("EmsRetention1764000000000", [
    // The daily retention run's claim (lib/daily-job).
    JOBS_TABLE_DDL,
    // Per monitor, the instant before which retention deleted its readings: an older reading
    // arriving again is not taken, since the readings key that would make it a no-op is gone
    // and the rollups may have counted it already.
    `CREATE TABLE retained_from (
       monitor_id  uuid PRIMARY KEY,
       ts          bigint NOT NULL
     )`,
  ]),
];
