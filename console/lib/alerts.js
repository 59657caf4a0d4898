// @ts-check
// What the alerts board, one alert's page and the KPI view share: the caller's places (sites →
// plants → functions, for the filters), the alert's words (state, acknowledgement, flags) and
// the list read across places and watcher kinds.
import { useEffect, useRef, useState } from "preact/hooks";
import { api, get } from "./api.js";
import { Status, html, href, time } from "./ui.js";

/** @typedef {import("./api.js").User} User */
/** @typedef {import("./types.js").Alert} Alert */
/** @typedef {import("./types.js").Site} Site */
/** @typedef {import("./types.js").Plant} Plant */
/** @typedef {import("./types.js").PlantFunction} PlantFunction */
/** @typedef {import("./types.js").PlaceSite} PlaceSite */
/** @typedef {import("./types.js").PlaceIds} PlaceIds */
/**
 * One place key of the alert list: exactly one of function_id, plant_id, site_id.
 * @typedef {{ function_id: string } | { plant_id: string } | { site_id: string }} PlaceKey
 */

/** The alert fields' severity word ("High") as the Severity component's level ("high"). */
export const sevKey = (/** @type {Alert | null | undefined} */ alert) => String(alert?.severity ?? "").toLowerCase();

export const alertHref = (/** @type {string} */ id) => href("alerts", id);

/**
 * Whether the user's routes of a module answer (the gateway's rule: a general-user needs the
 * module granted, other types have them all). A route of a module not granted answers 401,
 * which the console takes for a lost session: a view asks only what the user may read.
 * @type {(user: User | null | undefined, module: string) => boolean}
 */
export const may = (user, module) => user?.user_type !== "general-user" || (user?.modules ?? []).includes(module);

/**
 * The caller's sites, each with its plants and their functions. The API scopes each list, so a
 * plant user gets its plant only. Null when the user may not read the configuration (a
 * general-user without the Configuration module): then only a place named in the link is known.
 * @param {User | null | undefined} user
 * @returns {Promise<PlaceSite[] | null>}
 */
export async function loadPlaces(user) {
  if (!may(user, "Configuration")) return null;
  /** @type {Site[]} */
  const sites = await get("/_config/sites/_list");
  return Promise.all(
    sites.map(async (site) => {
      /** @type {Plant[]} */
      const plants = await get("/_config/plants/_list", { site_id: site.site_id });
      return {
        site_id: site.site_id,
        site_name: site.site_name,
        plants: await Promise.all(
          plants.map(async (plant) => ({
            plant_id: plant.plant_id,
            plant_name: plant.plant_name,
            site_id: site.site_id,
            functions: (/** @type {PlantFunction[]} */ (await get("/_config/functions/_list", { plant_id: plant.plant_id }))).map((f) => ({
              function_id: f.function_id,
              function_name: f.function_name,
              plant_id: plant.plant_id,
            })),
          })),
        ),
      };
    }),
  );
}

export const plantsOf = (/** @type {PlaceSite[] | null | undefined} */ places) => (places ?? []).flatMap((s) => s.plants);
export const functionsOf = (/** @type {PlaceSite[] | null | undefined} */ places) => plantsOf(places).flatMap((p) => p.functions);

/**
 * The plant that holds a function, when the places know it.
 * @type {(places: PlaceSite[] | null | undefined, functionId: string | null | undefined) => import("./types.js").PlacePlant | undefined}
 */
export const plantOfFunction = (places, functionId) => plantsOf(places).find((p) => p.functions.some((f) => f.function_id === functionId));

/**
 * The places a query names, as the list's place keys (exactly one of function_id, plant_id,
 * site_id per request): a function, a plant, or else every site of the caller (a plant user's
 * site answers its own plant's alerts only).
 * @param {PlaceSite[] | null | undefined} places
 * @param {PlaceIds} ids
 * @returns {PlaceKey[]}
 */
export function placeKeys(places, { function_id, plant_id, site_id }) {
  if (function_id) return [{ function_id }];
  if (plant_id) return [{ plant_id }];
  if (site_id) return [{ site_id }];
  return (places ?? []).map((s) => ({ site_id: s.site_id }));
}

/**
 * Alerts of the places, from both kinds of watchers (the list asks for one kind at a time:
 * `is_hidden` 0 for the users' watchers, 1 for the system watchers of condition gateways,
 * which raise the threshold alerts). Answers `{alerts, total}`, `total` from X-Total-Count.
 * @param {PlaceKey[]} keys
 * @param {import("./api.js").Query} filters
 * @param {{ hidden?: number[], limit?: number, offset?: number }} [page]
 * @returns {Promise<{ alerts: Alert[], total: number }>}
 */
export async function listAlerts(keys, filters, { hidden = [0, 1], limit = 200, offset = 0 } = {}) {
  const answers = await Promise.all(
    keys.flatMap((key) =>
      hidden.map(async (is_hidden) => {
        /** @type {Response} */
        const res = await api("GET", "/_alerting/alerts/_list", { query: { ...key, ...filters, is_hidden, limit, offset }, raw: true });
        /** @type {Alert[]} */
        const alerts = await res.json();
        return { alerts, total: Number(res.headers.get("X-Total-Count") ?? alerts.length) };
      }),
    ),
  );
  return { alerts: answers.flatMap((a) => a.alerts), total: answers.reduce((n, a) => n + a.total, 0) };
}

/**
 * A duration in seconds, as people say it: "45 s", "6 min 32 s", "40 min", "3 h 5 min", "2 d 4 h".
 * @param {unknown} seconds
 */
export function duration(seconds) {
  if (seconds === null || seconds === undefined || !Number.isFinite(Number(seconds))) return "—";
  const s = Math.max(0, Math.round(Number(seconds)));
  if (s < 60) return `${s} s`;
  const [big, small] = s < 3600 ? [[Math.floor(s / 60), "min"], [s % 60, "s"]] : s < 86400 ? [[Math.floor(s / 3600), "h"], [Math.floor((s % 3600) / 60), "min"]] : [[Math.floor(s / 86400), "d"], [Math.floor((s % 86400) / 3600), "h"]];
  return small[0] === 0 ? `${big[0]} ${big[1]}` : `${big[0]} ${big[1]} ${small[0]} ${small[1]}`;
}

/**
 * Active is abnormal (a tone and a word); closed is the calm grey.
 * @param {{ alert: Alert }} props
 */
export function AlertState({ alert }) {
  if (alert.state === "active") return html`<${Status} tone="alarm">Active</${Status}>`;
  return html`<${Status} tone="normal">Closed</${Status}>`;
}

/**
 * ISA-18.2: an alert not yet acknowledged wants the operator's attention, also once it has
 * returned to normal; the word and a symbol say it, not a colour alone.
 * @param {{ alert: Alert, who?: boolean }} props
 */
export function AckState({ alert, who = false }) {
  if (alert.ack_state !== "acknowledged") {
    return html`<span class="ack-no"><span aria-hidden="true">! </span>Unacknowledged</span>`;
  }
  return html`<span class="ack-yes"><span aria-hidden="true">✓ </span>Acknowledged${who && alert.acked_by ? html` <span class="muted small">by ${alert.acked_by}</span>` : null}</span>`;
}

/**
 * Shelved, suppressed, no data: said in words, each its own tag.
 * @param {{ alert: Alert }} props
 */
export function AlertFlags({ alert }) {
  const flags = [];
  if (alert.shelved_until) flags.push(html`<span class="flag flag-shelved"><span aria-hidden="true">‖ </span>Shelved until ${time(alert.shelved_until)}</span>`);
  if (alert.suppressed) flags.push(html`<span class="flag">Suppressed (maintenance window)</span>`);
  if (alert.reason === "no_data") flags.push(html`<span class="flag flag-nodata"><span aria-hidden="true">◌ </span>No data</span>`);
  if (alert.assignee) flags.push(html`<span class="flag">Assigned to ${alert.assignee}</span>`);
  return flags.length ? html`<span class="flags">${flags}</span>` : null;
}

/** The tag names of an alert (`tag` maps the tag's key to its name). */
export const tagNames = (/** @type {Alert | null | undefined} */ alert) => Object.values(alert?.tag ?? {}).join(", ");

/**
 * The board and the KPI view as tabs under the Alerts heading.
 * @param {{ current: "board" | "kpi" }} props
 */
export function AlertTabs({ current }) {
  return html`<nav class="alert-tabs" aria-label="Alert views">
    <a href="#/alerts" aria-current=${current === "board" ? "page" : undefined}>Board</a>
    <a href="#/alerts/kpi" aria-current=${current === "kpi" ? "page" : undefined}>Performance (KPI)</a>
  </nav>`;
}

/** The width an element has (0 before layout), followed as it resizes: charts ask for one point per pixel. */
/** @returns {[import("preact").RefObject<HTMLDivElement | null>, number]} */
export function useWidth() {
  const ref = useRef(/** @type {HTMLDivElement | null} */ (null));
  const [width, setWidth] = useState(0);
  useEffect(() => {
    if (!ref.current) return undefined;
    const measure = () => setWidth(Math.floor(ref.current?.clientWidth ?? 0));
    measure();
    const ro = new ResizeObserver(measure);
    ro.observe(ref.current);
    return () => ro.disconnect();
  }, []);
  return [ref, width];
}

/** The watchers and monitors read for the alerts' conditions, once a page's life (a watcher edited since shows on reload). */
/** @type {Map<string, Promise<import("./types.js").Watcher | null>>} */
const watchers = new Map();
/** @type {Map<string, Promise<import("./types.js").Monitor | null>>} */
const monitors = new Map();
/** @type {<T>(cache: Map<string, Promise<T | null>>, path: string) => Promise<T | null>} */
const once = (cache, path) => {
  let p = cache.get(path);
  if (!p) {
    p = get(path).catch(() => null);
    cache.set(path, p);
  }
  return /** @type {Promise<any>} */ (p);
};

/**
 * What an alert's trigger watches, in words with units: "Temperature ≥ 80 °C" (its conditions
 * joined by its relation), read from its watcher and its monitors' tags; null when they cannot be
 * read (the user's modules, a watcher deleted since).
 * @param {Alert} alert
 * @returns {Promise<string | null>}
 */
export async function conditionOf(alert) {
  /** @type {import("./types.js").Watcher | null} */
  const watcher = await once(watchers, `/_alerting/watchers/${encodeURIComponent(alert.watcher_id)}`);
  const trigger = watcher?.triggers?.find((t) => t.id === alert.trigger_id);
  if (!trigger?.condition?.length) return null;
  const parts = await Promise.all(
    trigger.condition.map(async (c) => {
      /** @type {import("./types.js").Monitor | null} */
      const monitor = await once(monitors, `/_config/monitors/${encodeURIComponent(c.monitor_id)}`);
      const tag = monitor?.tags?.find((t) => t.tag_id === c.tag_id);
      const name = tag?.tag_name ?? alert.tag?.[c.tag_id] ?? c.tag_id;
      return `${name} ${COMPARISON_WORDS[c.comparison] ?? c.comparison} ${c.threshold}${tag?.tag_unit ? ` ${tag.tag_unit}` : ""}`;
    }),
  );
  return parts.join(trigger.trigger_relation === "OR" ? " or " : " and ");
}

/** @type {Record<string, string>} */
const COMPARISON_WORDS = { ">=": "≥", "<=": "≤", "==": "=", "!=": "≠", ">": ">", "<": "<" };

/**
 * The condition of an alert's trigger, once read.
 * @param {{ alert: Alert }} props
 */
export function AlertCondition({ alert }) {
  const [text, setText] = useState(/** @type {string | null} */ (null));
  useEffect(() => {
    let live = true;
    void conditionOf(alert).then((t) => live && setText(t));
    return () => {
      live = false;
    };
  }, [alert.watcher_id, alert.trigger_id]);
  return text ? html`<div class="condition small">when ${text}</div>` : null;
}
