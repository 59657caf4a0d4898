/** The alerting schema's migrations, in the order they run: one file each, named by what it adds; a migration's name never changes (the database recorded it). */
import { init } from "./0001-init";
import { seriesClock } from "./0002-series-clock";
import { alertsStream } from "./0003-alerts-stream";
import { lifecycle } from "./0004-lifecycle";
import { kpiActiveIndex } from "./0005-kpi-active-index";
import { suppressions } from "./0006-suppressions";
import { followups } from "./0007-followups";
import { kpiOpenings } from "./0008-kpi-openings";
import { noData } from "./0009-no-data";
import { kpiRollup } from "./0010-kpi-rollup";
import { kpiRollupFollowers } from "./0011-kpi-rollup-followers";

export const migrations = [
  init,
  seriesClock,
  alertsStream,
  lifecycle,
  kpiActiveIndex,
  suppressions,
  followups,
  kpiOpenings,
  noData,
  kpiRollup,
  kpiRollupFollowers,
];
