import { sqlMigration } from "../../../mixins/db.mixin";

export const dailyRollups = sqlMigration("EmsDailyRollups1763820000000", [
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
]);
