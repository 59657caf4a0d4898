/**
 * Schedules: a day of the week or every day, a time HH:MM in UTC, until a
 * date and time. Slots come from croner, not from our own date arithmetic. Pure.
 */
import { Cron } from "croner";

export const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"] as const;
export type Day = (typeof DAYS)[number];

export interface Schedule {
  /** null: every day. */
  period: Day | null;
  /** HH:MM, UTC. */
  time: string;
  /** YYYY-MM-DD HH:MM, UTC, as the caller wrote it. */
  until: string;
}

/** The time a schedule takes when the request has none: midnight UTC. */
export const DEFAULT_TIME = "00:00";

const EVERY_DAY = new Set(["", "daily", "everyday", "every day", "all"]);

/** A day of the week by its name or three-letter abbreviation, any case; undefined when not one. Null: every day. */
export function parsePeriod(value: string | null | undefined): Day | null | undefined {
  if (value === null || value === undefined) return null;
  const v = value.trim().toLowerCase();
  if (EVERY_DAY.has(v)) return null;
  return DAYS.find((d) => d.toLowerCase() === v || d.slice(0, 3).toLowerCase() === v);
}

/** `HH:MM` (24 h) as [hours, minutes]; undefined when malformed. */
export function parseTime(value: string): [number, number] | undefined {
  const m = /^([01]\d|2[0-3]):([0-5]\d)$/.exec(value.trim());
  return m ? [Number(m[1]), Number(m[2])] : undefined;
}

/** `YYYY-MM-DD HH:MM` in UTC as epoch ms; undefined when malformed or not a real date. */
export function parseUntil(value: string): number | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2}) ([01]\d|2[0-3]):([0-5]\d)$/.exec(value.trim());
  if (!m) return undefined;
  const [y, mo, d, h, mi] = m.slice(1).map(Number) as [number, number, number, number, number];
  const ms = Date.UTC(y, mo - 1, d, h, mi);
  const back = new Date(ms);
  // Date.UTC rolls 2025-02-30 over to March; a date that does not come back unchanged is not one.
  if (back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d) return undefined;
  return ms;
}

/** The cron pattern of a schedule's slots (minute hour day-of-month month day-of-week), in UTC. */
export function cronPattern(s: Pick<Schedule, "period" | "time">): string {
  const [h, m] = parseTime(s.time) ?? [0, 0];
  const dow = s.period === null ? "*" : String(DAYS.indexOf(s.period));
  return `${m} ${h} * * ${dow}`;
}

/**
 * The slot a scheduler should run now: the latest slot at or before both `now` and `until`, and
 * not before `since` (when the schedule was set). Only the latest: slots missed while every
 * replica was down are not replayed one by one; the latest of them runs once (the runs table's
 * unique key on (notebook, slot) makes "once" hold across replicas and restarts).
 */
export function dueSlot(s: Schedule, since: number, now: number): number | null {
  const until = parseUntil(s.until);
  if (until === undefined) return null;
  const reference = Math.min(now, until);
  if (reference < since) return null;
  const cron = new Cron(cronPattern(s), { timezone: "UTC", paused: true });
  try {
    // previousRuns excludes its reference; +1 ms lets a slot exactly at `now` or `until` count.
    const [slot] = cron.previousRuns(1, new Date(reference + 1));
    if (!slot) return null;
    const t = slot.getTime();
    return t >= since && t <= reference ? t : null;
  } finally {
    cron.stop();
  }
}
