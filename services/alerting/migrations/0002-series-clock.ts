import { sqlMigration } from "../../../mixins/db.mixin";

// The newest reading timestamp taken per series: a reading no newer is late (or a redelivery)
// and is not evaluated, whether or not a trigger's state was written for it.
export const seriesClock = sqlMigration("AlertingSeriesClock1763900000001", [
  `CREATE TABLE series_clock (
       monitor_id  text NOT NULL,
       tag_id      text NOT NULL,
       ts          bigint NOT NULL,
       PRIMARY KEY (monitor_id, tag_id)
     )`,
]);
