/** ems's migrations in the order they run; a migration's name is what the database recorded, never changed. */
import { readingsRollups } from "./0001-readings-rollups";
import { dailyRollups } from "./0002-daily-rollups";
import { retention } from "./0003-retention";
import { compressedHours } from "./0004-compressed-hours";

export const migrations = [readingsRollups, dailyRollups, retention, compressedHours];
