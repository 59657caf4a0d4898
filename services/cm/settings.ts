/** cm's settings from the environment (lib/config.ts), in the units its domain modules take. */
import { config } from "../../lib/config";

/** BEARING_MATCH_TOLERANCE (percent) as a share of a defect frequency. */
export const bearingTolerance = (): number => config().bearingMatchTolerancePct / 100;
