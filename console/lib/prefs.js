// @ts-check
// The person's display choices (docs/console.md, "For the people on shift"): the zone times are
// shown in, the 24-hour clock, the theme and the alarm sound. They are the browser's, kept in its
// storage (no secret among them), and every view follows a change at once.
import { useEffect, useState } from "preact/hooks";

/**
 * `zone`: "site" (each record's site zone, the default), "browser", "UTC" or a named zone
 * (IANA, such as "Asia/Kolkata").
 * @typedef {{ zone: string, hour24: boolean, theme: "light" | "dark", sound: boolean }} Prefs
 */

const KEY = "ims-console-prefs";
/** @type {Prefs} */
const DEFAULTS = { zone: "site", hour24: true, theme: "light", sound: false };

/** @returns {Prefs} */
function read() {
  try {
    const kept = JSON.parse(localStorage.getItem(KEY) ?? "{}");
    return { ...DEFAULTS, ...(kept && typeof kept === "object" ? kept : {}) };
  } catch {
    return { ...DEFAULTS };
  }
}

let current = read();
/** @type {Set<(p: Prefs) => void>} */
const listeners = new Set();

/** The choices now (for code outside a component, such as the time format). */
export const prefs = () => current;

/** @param {Partial<Prefs>} change */
export function setPrefs(change) {
  current = { ...current, ...change };
  try {
    localStorage.setItem(KEY, JSON.stringify(current));
  } catch {
    // storage refused (private mode): the choice holds for this page
  }
  applyTheme();
  for (const l of listeners) l(current);
}

/** The theme is the document's attribute, so that one stylesheet serves both. */
export function applyTheme() {
  document.documentElement.dataset.theme = current.theme;
}

/** The choices, re-read by the component when they change. */
export function usePrefs() {
  const [value, setValue] = useState(current);
  useEffect(() => {
    listeners.add(setValue);
    return () => {
      listeners.delete(setValue);
    };
  }, []);
  return value;
}

/** The browser's own zone (IANA name). */
export const browserZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";

/** Each site's zone by id, as the caller's site list says (app.js reads it at sign-in). */
/** @type {Map<string, string>} */
let siteZones = new Map();
/** The zone of the site the view shows (a view of one plant or asset sets it as it draws). */
let pageZone = /** @type {string | null} */ (null);

/** Each site's zone by name (a view that knows its site by name only, as an asset's fetch names it). */
/** @type {Map<string, string>} */
let siteNameZones = new Map();

/** @param {{ site_id: string, site_name: string, timezone: string }[]} sites */
export function knowSites(sites) {
  siteZones = new Map(sites.filter((s) => s.timezone).map((s) => [s.site_id, s.timezone]));
  siteNameZones = new Map(sites.filter((s) => s.timezone).map((s) => [s.site_name, s.timezone]));
}

/** @param {string | null | undefined} name */
export const zoneOfSiteName = (name) => (name ? (siteNameZones.get(name) ?? null) : null);

/** @param {string | null | undefined} siteId */
export const zoneOfSite = (siteId) => (siteId ? (siteZones.get(siteId) ?? null) : null);

/**
 * The site zone of what the view shows, for the times it draws without naming their site: set by
 * the view as it draws (a parent draws before its parts), cleared by app.js for each view.
 * @param {string | null | undefined} zone
 */
export function viewSiteZone(zone) {
  pageZone = zone || null;
}

/**
 * The zone a time is shown in: the chosen one, or for "site" the record's site zone, else the
 * view's site, else the caller's only site, else the browser's.
 * @param {string | null | undefined} siteZone
 */
export function displayZone(siteZone) {
  const z = current.zone;
  if (z === "browser") return browserZone();
  if (z === "site") return siteZone || pageZone || (siteZones.size === 1 ? [...siteZones.values()][0] : null) || browserZone();
  return z;
}

/**
 * A time in one format everywhere: `2026-11-27 14:05` (or `2:05 PM`), seconds when asked, the
 * zone after it in brackets (a chart's axis names it once instead: `label` false). `siteZone`: the record's site zone (the default display zone).
 * @param {unknown} value epoch ms or a date text
 * @param {{ seconds?: boolean, siteZone?: string | null, date?: boolean, label?: boolean }} [options]
 */
export function formatTime(value, { seconds = false, siteZone = null, date = true, label = true } = {}) {
  if (value === null || value === undefined || value === "") return "—";
  const d = typeof value === "number" ? new Date(value) : new Date(String(value));
  if (Number.isNaN(d.getTime())) return String(value);
  const zone = displayZone(siteZone);
  /** @type {Record<string, string>} */
  const p = {};
  let parts;
  try {
    parts = partsOf(d, zone);
  } catch {
    parts = partsOf(d, "UTC");
  }
  for (const part of parts) p[part.type] = part.value;
  const hour = current.hour24 ? p.hour : String(Number(p.hour) % 12 || 12);
  const clock = `${hour}:${p.minute}${seconds ? `:${p.second}` : ""}${current.hour24 ? "" : ` ${Number(p.hour) < 12 ? "AM" : "PM"}`}`;
  return `${date ? `${p.year}-${p.month}-${p.day} ` : ""}${clock}${label ? ` (${zone})` : ""}`;
}

/** What a chart re-draws on: the display zone, the clock and the theme (its ink). */
export const clockKey = (/** @type {string | null | undefined} */ siteZone) => `${displayZone(siteZone)}|${current.hour24}|${current.theme}`;

/** @type {Map<string, Intl.DateTimeFormat>} */
const formats = new Map();
/**
 * @param {Date} d
 * @param {string} zone
 */
function partsOf(d, zone) {
  let f = formats.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-GB", { timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23" });
    formats.set(zone, f);
  }
  return f.formatToParts(d);
}
