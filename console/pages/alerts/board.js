// @ts-check
// The alerts board: active and recent alerts across the caller's scope, filtered by plant,
// function, severity, state and acknowledgement (the filters live in the hash, so that the
// overview's `#/alerts?function_id=<id>` link, a bookmark and the back button keep them),
// reloaded whenever the page's one alarm summary (lib/alarms.js) sees an alarm open, close, be
// acknowledged or shelved (an idle board asks nothing else but every 5 min); acknowledge one or many.
import { useEffect, useMemo, useState } from "preact/hooks";
import { refreshAlarms, useAlarms } from "../../lib/alarms.js";
import { queryString, post } from "../../lib/api.js";
import { AckState, AlertCondition, AlertFlags, AlertState, AlertTabs, alertHref, duration, listAlerts, loadPlaces, placeKeys, plantOfFunction, plantsOf, sevKey, tagNames } from "../../lib/alerts.js";
import { ErrorNote, Loading, Page, Severity, age, html, time, useData } from "../../lib/ui.js";

/** @typedef {import("../../lib/types.js").Alert} Alert */
/** @typedef {import("../../lib/types.js").PlaceSite} PlaceSite */
/** @typedef {import("preact").ComponentChildren} Children */
/** @template {EventTarget} T @typedef {import("../../lib/types.js").ControlEvent<T>} ControlEvent */
/**
 * The board's filters, as the hash query holds them ("" for none; `since` a key of SINCE).
 * @typedef {{ site_id: string, plant_id: string, function_id: string, severity: string, state: string, ack_state: string, watchers: string, since: string }} Filters
 */
/** @typedef {(label: string, key: string, value: string, options: Children) => Children} FilterSelect */

/**
 * The board's own reload, besides every change the alarm summary sees (an alarm opened, closed,
 * acknowledged, shelved): a safety net for what the summary cannot see (past its 500 alarms).
 */
const REFRESH_MS = 300_000;
/** The caller's places (for the filters and the per-site lists) are read again this often. */
const PLACES_MS = 600_000;
/** An active alarm's "for …" is counted on the page, re-drawn this often. */
const TICK_MS = 15_000;
const PAGE = 200;
const BULK_MAX = 500; // the bulk acknowledge's most ids per request (the service refuses more)

/** @type {[key: string, words: string, days: number][]} */
const SINCE = [
  ["24h", "the last 24 hours", 1],
  ["7d", "the last 7 days", 7],
  ["30d", "the last 30 days", 30],
  ["90d", "the last 90 days", 90],
];
const DAY_MS = 86_400_000;
const STANDING_FROM = "2000-01-01T00:00:00Z"; // before any alert: the active ones of all time
/** The range of a `since` key; filtersOf keeps only keys of SINCE, so there is always one. */
const sinceOf = (/** @type {string} */ key) => /** @type {[string, string, number]} */ (SINCE.find(([k]) => k === key));

/**
 * The filters of the hash query, with their defaults.
 * @param {Record<string, string>} query
 * @returns {Filters}
 */
function filtersOf(query) {
  return {
    site_id: query.site_id ?? "",
    plant_id: query.plant_id ?? "",
    function_id: query.function_id ?? "",
    severity: query.severity ?? "",
    state: query.state ?? "",
    ack_state: query.ack_state ?? "",
    watchers: query.watchers ?? "",
    since: SINCE.some(([k]) => k === query.since) ? query.since : "7d",
  };
}

/**
 * Changing a filter is a new hash: the view re-reads it, and the back button goes back to the old filter.
 * @param {Filters} filters
 */
function setFilters(filters) {
  const { since, ...rest } = filters;
  location.hash = `#/alerts${queryString({ ...rest, since: since === "7d" ? "" : since })}`;
}

/**
 * ISA-18.2 order of an alarm summary: what wants the operator first (active and unacknowledged),
 * then active acknowledged, then returned to normal but unacknowledged, then the rest; by
 * severity within each, newest first.
 */
const GROUP = (/** @type {Alert} */ a) => (a.state === "active" ? 0 : 2) + (a.ack_state === "acknowledged" ? 1 : 0);
/** @type {Record<string, number>} */
const SEV_ORDER = { high: 0, medium: 1, low: 2 };
/**
 * @param {Alert} a
 * @param {Alert} b
 */
function byAttention(a, b) {
  return GROUP(a) - GROUP(b) || (SEV_ORDER[sevKey(a)] ?? 3) - (SEV_ORDER[sevKey(b)] ?? 3) || Date.parse(b.start_time) - Date.parse(a.start_time);
}

/** The options of the filters other than the place (a function: each select gets its own nodes). */
const severityOptions = () => html`<option value="">All</option><option value="high">▲ High</option><option value="medium">◆ Medium</option><option value="low">● Low</option>`;
const stateOptions = () => html`<option value="">Active and closed</option><option value="active">Active</option><option value="closed">Closed</option>`;
const ackOptions = () => html`<option value="">Either</option><option value="unacknowledged">Unacknowledged</option><option value="acknowledged">Acknowledged</option>`;
const watcherOptions = () => html`<option value="">All</option><option value="user">Users' watchers</option><option value="system">Gateway thresholds (system)</option>`;

/** @param {{ filters: Filters, places: PlaceSite[] | null | undefined }} props */
function Filters({ filters, places }) {
  if (places === null) return html`<${OtherFilters} filters=${filters} places=${places} />`;
  const plant = filters.plant_id || plantOfFunction(places, filters.function_id)?.plant_id || "";
  const plants = plantsOf(places);
  /** @type {(import("../../lib/types.js").PlantFunction & { plant_name?: string })[]} */
  const functions = plant ? (plants.find((p) => p.plant_id === plant)?.functions ?? []) : plants.flatMap((p) => p.functions.map((f) => ({ ...f, plant_name: p.plant_name })));
  const change = (/** @type {string} */ key) => (/** @type {ControlEvent<HTMLSelectElement>} */ event) => {
    const value = event.currentTarget.value;
    const next = { ...filters, [key]: value };
    if (key === "plant_id") next.function_id = "";
    if (key === "function_id" && value) next.plant_id = plantOfFunction(places, value)?.plant_id ?? next.plant_id;
    setFilters(next);
  };
  /** @type {FilterSelect} */
  const select = (label, key, value, options) => html`<div class="field">
    <label for=${`af-${key}`}>${label}</label>
    <select id=${`af-${key}`} value=${value} onChange=${change(key)}>${options}</select>
  </div>`;
  return html`<form class="alert-filters row" aria-label="Filters" onSubmit=${(/** @type {Event} */ e) => e.preventDefault()}>
    ${select(
      "Plant",
      "plant_id",
      plant,
      html`<option value="">All plants</option>
        ${(places ?? []).map(
          (s) => html`<optgroup label=${s.site_name}>${s.plants.map((p) => html`<option value=${p.plant_id}>${p.plant_name}</option>`)}</optgroup>`,
        )}`,
    )}
    ${select(
      "Function",
      "function_id",
      filters.function_id,
      html`<option value="">All functions</option>
        ${functions.map((f) => html`<option value=${f.function_id}>${f.function_name}${f.plant_name ? ` (${f.plant_name})` : ""}</option>`)}`,
    )}
    ${select(
      "Severity",
      "severity",
      filters.severity,
      severityOptions(),
    )}
    ${select("State", "state", filters.state, stateOptions())}
    ${select(
      "Acknowledged",
      "ack_state",
      filters.ack_state,
      ackOptions(),
    )}
    ${select(
      "Watchers",
      "watchers",
      filters.watchers,
      watcherOptions(),
    )}
    ${select("Started within", "since", filters.since, SINCE.map(([k, label]) => html`<option value=${k}>${label}</option>`))}
  </form>`;
}

/**
 * The filters without the place: for a user who may not read the configuration, the plants and
 * functions cannot be listed; the place is the one the link names.
 * @param {{ filters: Filters, places: PlaceSite[] | null | undefined }} props
 */
function OtherFilters({ filters, places }) {
  const change = (/** @type {string} */ key) => (/** @type {ControlEvent<HTMLSelectElement>} */ event) => setFilters({ ...filters, [key]: event.currentTarget.value });
  /** @type {FilterSelect} */
  const select = (label, key, value, options) => html`<div class="field">
    <label for=${`af-${key}`}>${label}</label>
    <select id=${`af-${key}`} value=${value} onChange=${change(key)}>${options}</select>
  </div>`;
  return html`<form class="alert-filters row" aria-label="Filters" onSubmit=${(/** @type {Event} */ e) => e.preventDefault()}>
    ${select("Severity", "severity", filters.severity, severityOptions())}
    ${select("State", "state", filters.state, stateOptions())}
    ${select("Acknowledged", "ack_state", filters.ack_state, ackOptions())}
    ${select("Watchers", "watchers", filters.watchers, watcherOptions())}
    ${select("Started within", "since", filters.since, SINCE.map(([k, label]) => html`<option value=${k}>${label}</option>`))}
    ${places === null
      ? html`<p class="hint">Without the Configuration module the plants and functions cannot be listed here: the board shows the place its link names.</p>`
      : null}
  </form>`;
}

/**
 * Counts a person reads before the table: what is active, what still wants acknowledging.
 * @param {{ alerts: Alert[], total: number }} props
 */
function Summary({ alerts, total }) {
  const active = alerts.filter((a) => a.state === "active");
  const unack = alerts.filter((a) => a.ack_state !== "acknowledged");
  const bySev = (/** @type {Alert[]} */ list) =>
    ["high", "medium", "low"]
      .map((s) => /** @type {[string, number]} */ ([s, list.filter((a) => sevKey(a) === s).length]))
      .filter(([, n]) => n > 0)
      .map(([s, n]) => html` <span class="count"><${Severity} level=${s} /> ${n}</span>`);
  const shown = `showing ${alerts.length}${total > alerts.length ? ` of ${total}` : ""} alert${total === 1 ? "" : "s"}`;
  return html`<p class="alert-summary" aria-live="polite">
    <strong>${active.length}</strong> active${bySev(active)}${" · "}<strong>${unack.length}</strong> unacknowledged${" · "}<span class="muted">${shown}</span>
  </p>`;
}

/** @param {{ alert: Alert, selected: boolean, onSelect: (id: string, on: boolean) => void, onAck: (alert: Alert) => void, busy: boolean }} props */
function AlertRow({ alert, selected, onSelect, onAck, busy }) {
  const unacked = alert.ack_state !== "acknowledged";
  const cls = [`sevrow sevrow-${sevKey(alert)}`, unacked ? "unack" : "", alert.state === "closed" && !unacked ? "settled" : "", alert.shelved_until ? "shelved" : ""].join(" ");
  return html`<tr class=${cls}>
    <td class="pick">
      <input type="checkbox" checked=${selected} onChange=${(/** @type {ControlEvent<HTMLInputElement>} */ e) => onSelect(alert._id, e.currentTarget.checked)} aria-label=${`Select ${alert.trigger_name}, ${time(alert.start_time)}`} />
    </td>
    <td><${Severity} level=${sevKey(alert)} /></td>
    <td class="what">
      <a href=${alertHref(alert._id)}>${alert.trigger_name}</a>
      <div class="muted small">${alert.asset ? `${alert.asset} · ` : ""}${alert.monitor}${tagNames(alert) ? ` · ${tagNames(alert)}` : ""}</div>
      <${AlertCondition} alert=${alert} />
      <div class="muted small">${alert.watcher_name}</div>
      <${AlertFlags} alert=${alert} />
    </td>
    <td class="when">${time(alert.start_time, true)}<div class="muted small">${age(alert.start_time)}</div></td>
    <td><${AlertState} alert=${alert} /><div class="muted small">${alert.state === "active" ? `for ${duration((Date.now() - Date.parse(alert.start_time)) / 1000)}` : `lasted ${duration(alert.duration)}`}</div></td>
    <td><${AckState} alert=${alert} who /><div class="muted small">${alert.acked_at ? time(alert.acked_at) : ""}</div></td>
    <td class="act">${unacked ? html`<button type="button" disabled=${busy} onClick=${() => onAck(alert)}>Acknowledge</button>` : null}</td>
  </tr>`;
}

/** @param {import("../../lib/types.js").PageProps} props */
export function AlertBoard({ user, route }) {
  const filters = filtersOf(route.query);
  const [limit, setLimit] = useState(PAGE);
  const [selected, setSelected] = useState(() => /** @type {Set<string>} */ (new Set()));
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState(/** @type {string | null} */ (null));
  const [actionError, setActionError] = useState(/** @type {unknown} */ (null));

  const places = useData(() => loadPlaces(user), [user.username], PLACES_MS);
  const [, setTick] = useState(0);
  useEffect(() => {
    const timer = setInterval(() => setTick((n) => n + 1), TICK_MS);
    return () => clearInterval(timer);
  }, []);
  const days = sinceOf(filters.since)[2];
  const needPlaces = !filters.function_id && !filters.plant_id && !filters.site_id;
  const { data, error, reload } = useData(
    async () => {
      if (needPlaces && places.data === undefined) return undefined;
      if (needPlaces && places.data === null) return { alerts: [], total: 0, noPlace: true };
      const keys = placeKeys(places.data, filters);
      if (keys.length === 0) return { alerts: [], total: 0 };
      const hidden = filters.watchers === "user" ? [0] : filters.watchers === "system" ? [1] : [0, 1];
      const fromMs = Date.now() - days * DAY_MS;
      const { severity, state, ack_state } = filters;
      // The recent ones, and every alert still active however long ago it opened (a standing
      // alarm does not leave the board because the range moved on).
      const [recent, standing] = await Promise.all([
        listAlerts(keys, { severity, state, ack_state, from: new Date(fromMs).toISOString() }, { hidden, limit }),
        state === "closed" ? null : listAlerts(keys, { severity, state: "active", ack_state, from: STANDING_FROM }, { hidden, limit }),
      ]);
      const older = (standing?.alerts ?? []).filter((a) => Date.parse(a.start_time) < fromMs);
      return { alerts: [...recent.alerts, ...older].sort(byAttention), total: recent.total + older.length, at: Date.now() };
    },
    [JSON.stringify(filters), limit, needPlaces ? places.data : null],
    REFRESH_MS,
  );
  // A change the alarm summary saw (the summary polls the whole scope in one request) reloads the board.
  const { version } = useAlarms();
  useEffect(() => {
    if (version) void reload();
  }, [version]);
  const alerts = data?.alerts ?? [];
  const shown = useMemo(() => new Set(alerts.map((a) => a._id)), [alerts]);
  // Only what is still on the board can be acknowledged from it.
  const picked = [...selected].filter((id) => shown.has(id));

  /** @param {() => Promise<string>} work */
  const act = async (work) => {
    setBusy(true);
    setActionError(null);
    setResult(null);
    try {
      setResult(await work());
      await reload();
      refreshAlarms();
    } catch (e) {
      setActionError(e);
    } finally {
      setBusy(false);
    }
  };
  const ackOne = (/** @type {Alert} */ alert) => act(async () => `${alert.trigger_name}: ${await post(`/_alerting/alerts/${encodeURIComponent(alert._id)}/_ack`, {})}`);
  const ackSelected = () =>
    act(async () => {
      let acknowledged = 0;
      for (let i = 0; i < picked.length; i += BULK_MAX) acknowledged += (await post("/_alerting/alerts/_ack", { alert_ids: picked.slice(i, i + BULK_MAX) })).acknowledged;
      setSelected(new Set());
      return `Acknowledged: ${acknowledged} of ${picked.length} selected`;
    });
  /** @type {(id: string, on: boolean) => void} */
  const onSelect = (id, on) =>
    setSelected((s) => {
      const next = new Set(s);
      if (on) next.add(id);
      else next.delete(id);
      return next;
    });
  const allPicked = alerts.length > 0 && picked.length === alerts.length;

  const tools = html`<${AlertTabs} current="board" />
    <span class="muted small" aria-live="off">${data?.at ? `Updated ${time(data.at, true)} · on every change` : ""}</span>`;
  return html`<${Page} title="Alerts" tools=${tools}>
    <${Filters} filters=${filters} places=${places.data} />
    <${ErrorNote} error=${places.error ?? error} />
    ${data === undefined && !error ? html`<${Loading} what="Loading the alerts" />` : null}
    ${data?.noPlace ? html`<p class="notice">Open the board from a link that names a plant or a function (the overview's alert counts link here).</p>` : null}
    ${data && !data.noPlace
      ? html`<${Summary} alerts=${alerts} total=${data.total} />
          <div class="bulk row">
            <button type="button" class="primary" disabled=${busy || picked.length === 0} onClick=${ackSelected}>Acknowledge selected</button>
            <span class="muted small">${picked.length} selected</span>
          </div>
          <${ErrorNote} error=${actionError} />
          ${result ? html`<p class="done" role="status">✓ ${result}</p>` : null}
          ${alerts.length === 0
            ? html`<p class="muted card">No alert matches these filters in ${sinceOf(filters.since)[1]}.</p>`
            : html`<div class="table-scroll">
                <table class="grid alert-board">
                  <caption>
                    Alerts that started within ${sinceOf(filters.since)[1]}${filters.state === "closed" ? "" : ", and every one still active"}, those wanting attention
                    first
                  </caption>
                  <thead>
                    <tr>
                      <th scope="col" class="pick">
                        <input
                          type="checkbox"
                          aria-label="Select all"
                          checked=${allPicked}
                          onChange=${(/** @type {ControlEvent<HTMLInputElement>} */ e) => setSelected(e.currentTarget.checked ? new Set(alerts.map((a) => a._id)) : new Set())}
                        />
                      </th>
                      <th scope="col">Severity</th>
                      <th scope="col">Alert</th>
                      <th scope="col">Started</th>
                      <th scope="col">State</th>
                      <th scope="col">Acknowledgement</th>
                      <th scope="col" class="act"><span class="sr-only">Action</span></th>
                    </tr>
                  </thead>
                  <tbody>
                    ${alerts.map(
                      (a) => html`<${AlertRow} key=${a._id} alert=${a} selected=${selected.has(a._id)} onSelect=${onSelect} onAck=${ackOne} busy=${busy} />`,
                    )}
                  </tbody>
                </table>
              </div>`}
          ${data.total > alerts.length && limit < 1000
            ? html`<p><button type="button" onClick=${() => setLimit(Math.min(1000, limit * 5))}>Show more</button></p>`
            : null}`
      : null}
  </${Page}>`;
}
