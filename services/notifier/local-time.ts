/**
 * Times as the people of a site read them: ISO 8601 in the site's time zone with its numeric
 * offset (`2026-01-31T13:45:02+05:30`), to the second. An unknown or missing zone reads as UTC.
 */
import { formatLocal, isTimeZone } from "../../lib/time-zone";

export function localIso(ms: number, timeZone: string | undefined): string {
  return formatLocal(Math.floor(ms / 1000) * 1000, timeZone && isTimeZone(timeZone) ? timeZone : "UTC");
}
