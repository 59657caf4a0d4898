/**
 * Times as the people of a site read them: ISO 8601 in the site's time zone with its numeric
 * offset (`2026-01-31T13:45:02+05:30`). Pure; an unknown or missing zone reads as UTC.
 */
const formatters = new Map<string, Intl.DateTimeFormat | null>();

function formatter(timeZone: string): Intl.DateTimeFormat | null {
  if (!formatters.has(timeZone)) {
    let f: Intl.DateTimeFormat | null = null;
    try {
      f = new Intl.DateTimeFormat("en-US", {
        timeZone,
        hourCycle: "h23",
        year: "numeric",
        month: "2-digit",
        day: "2-digit",
        hour: "2-digit",
        minute: "2-digit",
        second: "2-digit",
      });
    } catch {
      f = null;
    }
    formatters.set(timeZone, f);
  }
  return formatters.get(timeZone) ?? null;
}

const two = (n: number): string => String(n).padStart(2, "0");

/** `ms` (epoch) as the wall-clock time of `timeZone`, seconds resolution, with the offset in force then. */
export function localIso(ms: number, timeZone: string | undefined): string {
  const f = timeZone ? formatter(timeZone) : null;
  const whole = Math.floor(ms / 1000) * 1000;
  if (!f) return new Date(whole).toISOString().replace(/\.\d{3}Z$/, "+00:00");
  const part: Record<string, number> = {};
  for (const p of f.formatToParts(new Date(whole))) if (p.type !== "literal") part[p.type] = Number(p.value);
  const wall = Date.UTC(part.year, part.month - 1, part.day, part.hour, part.minute, part.second);
  const offset = Math.round((wall - whole) / 60_000);
  const sign = offset < 0 ? "-" : "+";
  const abs = Math.abs(offset);
  return `${part.year}-${two(part.month)}-${two(part.day)}T${two(part.hour)}:${two(part.minute)}:${two(part.second)}${sign}${two(Math.floor(abs / 60))}:${two(abs % 60)}`;
}
