// @ts-check
// The alarm system's performance (`_kpi`, docs/api-tour.md "Alarm management"; ISA-18.2
// section 16 / EEMUA 191) for a plant or one of its functions over a range (default the last 30
// days): the figures beside their targets, the 10-minute alarm rate with the flood line, the bad
// actors, the chattering and the stale alerts.
import { queryString, get } from "../../lib/api.js";
import { AlertTabs, alertHref, duration, listAlerts, loadPlaces, plantOfFunction, plantsOf, useWidth } from "../../lib/alerts.js";
import { THRESHOLD_COLORS, bars, pointsFor, timeAxis, usePlot, valueAxis } from "../../lib/chart.js";
import { ErrorNote, Loading, Page, Severity, Status, Table, html, num, time, useData } from "../../lib/ui.js";

const WINDOW_MS = 10 * 60_000; // the KPI's window: openings per 10 minutes, windows counted from `from`
const FLOOD = 10; // openings in one window that make it a flood (ISA-18.2, EEMUA 191)
const LIST_PAGE = 1000; // the list's most items per request
const LIST_PAGES = 20; // per kind of watcher: the chart reads at most 20,000 openings of each
const DAY_MS = 86_400_000;

/** @typedef {import("../../lib/types.js").Kpi} Kpi */
/** @typedef {import("../../lib/types.js").KpiTrigger} KpiTrigger */
/** @typedef {import("../../lib/types.js").KpiChattering} KpiChattering */
/** @typedef {import("../../lib/types.js").KpiStale} KpiStale */
/** @typedef {import("../../lib/types.js").PlaceSite} PlaceSite */
/** @typedef {import("../../lib/alerts.js").PlaceKey} PlaceKey */
/** @template {EventTarget} T @typedef {import("../../lib/types.js").ControlEvent<T>} ControlEvent */
/**
 * The place and range chosen (texts; "" for none).
 * @typedef {{ plant_id: string, function_id: string, site_id: string, from: string, to: string }} Choice
 */
/**
 * The openings of a range: their start times (epoch ms), the watchers' names by id, and whether
 * every opening was read.
 * @typedef {{ starts: number[], watchers: Map<string, string>, complete: boolean }} Openings
 */

/**
 * The hash query's place and range; a date is YYYY-MM-DD in the browser's zone.
 * @param {Record<string, string>} query
 * @param {PlaceSite[] | null | undefined} places
 * @returns {Choice}
 */
function choiceOf(query, places) {
  const function_id = query.function_id ?? "";
  const plant_id = query.plant_id || plantOfFunction(places, function_id)?.plant_id || (query.site_id ? "" : plantsOf(places)[0]?.plant_id) || "";
  return { plant_id, function_id, site_id: query.site_id ?? "", from: query.from ?? "", to: query.to ?? "" };
}

const dayStart = (/** @type {string} */ date) => new Date(`${date}T00:00:00`).getTime();
const dateOf = (/** @type {number} */ ms) => {
  const d = new Date(ms);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, "0")}-${String(d.getDate()).padStart(2, "0")}`;
};

/**
 * The range asked for: whole days from `from` to the end of `to` (not after now); none given: the API's default.
 * @param {Choice} choice
 */
function rangeOf(choice) {
  const now = Date.now();
  const to = choice.to ? Math.min(now, dayStart(choice.to) + DAY_MS - 1) : undefined;
  const from = choice.from ? dayStart(choice.from) : undefined;
  return { from: from === undefined ? undefined : new Date(from).toISOString(), to: to === undefined ? undefined : new Date(to).toISOString() };
}

/**
 * The openings per 10-minute window, from the alert list, not from op 9 `_trend`: `_trend`
 * buckets by the hour (ranges up to 2 days) or the day and takes a function or a trigger only,
 * too coarse to show a flood (10 in 10 minutes) and blind to a plant. The list gives each
 * alert's start, which is bucketed here into the KPI's own windows (from `from`), so the chart's
 * highest bar is the answer's `per_10min_peak`. Both kinds of watcher are read, as the KPI counts both.
 * @param {PlaceKey} key
 * @param {{ from: string, to: string }} range
 * @returns {Promise<Openings>}
 */
async function openingsOf(key, range) {
  /** @type {number[]} */
  const starts = [];
  /** @type {Map<string, string>} */
  const watchers = new Map(); // the bad actors name their watcher by id; the list names it
  let complete = true;
  for (const hidden of [0, 1]) {
    for (let page = 0; ; page++) {
      if (page === LIST_PAGES) {
        complete = false;
        break;
      }
      const { alerts, total } = await listAlerts([key], range, { hidden: [hidden], limit: LIST_PAGE, offset: page * LIST_PAGE });
      for (const a of alerts) {
        starts.push(Date.parse(a.start_time));
        watchers.set(a.watcher_id, a.watcher_name);
      }
      if ((page + 1) * LIST_PAGE >= total || alerts.length === 0) break;
    }
  }
  return { starts, watchers, complete };
}

/**
 * Windows to bars: one bar per window when they fit the chart's pixels; else each bar spans
 * several windows and shows the highest window among them, so a flood is never averaged away.
 * @param {number[]} starts
 * @param {number} from
 * @param {number} to
 * @param {number} width
 */
export function rateSeries(starts, from, to, width) {
  const windows = Math.max(1, Math.ceil((to - from) / WINDOW_MS));
  const counts = new Array(windows).fill(0);
  for (const s of starts) {
    if (s < from || s > to) continue;
    counts[Math.min(windows - 1, Math.floor((s - from) / WINDOW_MS))] += 1;
  }
  const per = Math.max(1, Math.ceil(windows / pointsFor(width)));
  /** @type {number[]} */
  const times = [];
  /** @type {number[]} */
  const values = [];
  for (let i = 0; i < windows; i += per) {
    times.push(from + i * WINDOW_MS);
    values.push(Math.max(...counts.slice(i, i + per)));
  }
  return { times, values, per };
}

/**
 * lib/chart.js's BarChart with the flood line always in view: its y scale fits the bars only, so
 * in a calm month the line at 10 would fall off the top; here the scale reaches past it, and
 * the headroom to a flood is seen at a glance.
 * @param {{ times: number[], values: number[], height?: number }} props
 */
function RateBarChart({ times, values, height = 220 }) {
  /** @type {import("uplot").AlignedData} */
  const data = [times.map((t) => t / 1000), values];
  const clock = timeAxis();
  const box = usePlot(
    (width) => ({
      width,
      height,
      title: "Alerts opened per 10 minutes",
      tzDate: clock.tzDate,
      scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(max, FLOOD) * 1.15] } },
      axes: [clock.axis, valueAxis("alerts / 10 min", 50)],
      series: [clock.legend, { label: "openings", stroke: "#4d5963", fill: "rgba(77,89,99,0.35)", paths: bars({ size: [0.8, 40] }), points: { show: false } }],
      hooks: {
        draw: [
          (u) => {
            const { ctx } = u;
            const { left, width: w } = u.bbox;
            const y = u.valToPos(FLOOD, "y", true);
            ctx.save();
            ctx.strokeStyle = THRESHOLD_COLORS.warning;
            ctx.fillStyle = THRESHOLD_COLORS.warning;
            ctx.setLineDash([6, 4]);
            ctx.lineWidth = 1.5 * devicePixelRatio;
            ctx.beginPath();
            ctx.moveTo(left, y);
            ctx.lineTo(left + w, y);
            ctx.stroke();
            ctx.font = `${11 * devicePixelRatio}px system-ui, sans-serif`;
            ctx.textAlign = "right";
            ctx.fillText(`Flood: ${FLOOD} per 10 min`, left + w - 4, y - 4);
            ctx.restore();
          },
        ],
      },
    }),
    data,
    `rate|${height}|${clock.key}`,
  );
  const peak = values.length ? Math.max(...values) : 0;
  return html`<div class="chart" ref=${box} role="img" aria-label=${`Alerts opened per 10 minutes, ${values.length} bars, highest ${peak}`}></div>`;
}

/**
 * A figure beside its target; the tone says (in a word, with a symbol) when it is off.
 * @param {{ label: string, value: import("preact").ComponentChildren, target: string, off?: string | null, word?: string }} props
 */
function Figure({ label, value, target, off, word }) {
  return html`<div class="figure card">
    <div class="figure-label">${label}</div>
    <div class="figure-value">${value}</div>
    <div class="small">${off ? html`<${Status} tone=${off}>${word ?? "Above target"}</${Status}>` : html`<span class="muted">${target}</span>`}</div>
  </div>`;
}

/** @param {{ kpi: Kpi }} props */
function Figures({ kpi }) {
  const avgTone = kpi.per_10min_avg > 2 ? "alarm" : kpi.per_10min_avg > 1 ? "warning" : null;
  const p = kpi.priority_distribution;
  return html`<div class="figures">
    <${Figure} label="Alerts" value=${html`<span data-figure="alerts">${num(kpi.alerts)}</span>`} target="opened in the range" />
    <${Figure}
      label="Average per 10 min"
      value=${num(kpi.per_10min_avg)}
      target="target ≤ 1 (EEMUA 191)"
      off=${avgTone}
      word=${avgTone === "alarm" ? "Over-demanding (> 2)" : "Manageable at most (> 1)"}
    />
    <${Figure} label="Peak in 10 min" value=${num(kpi.per_10min_peak)} target=${`flood at ${FLOOD} or more`} off=${kpi.per_10min_peak >= FLOOD ? "alarm" : null} word="Flood" />
    <${Figure} label="Time in flood" value=${`${num(kpi.flood_percent)} %`} target="target < 1 %" off=${kpi.flood_percent >= 1 ? "warning" : null} />
    <${Figure}
      label="Unacknowledged active"
      value=${num(kpi.unacknowledged_active)}
      target="now"
      off=${kpi.unacknowledged_active > 0 ? "warning" : null}
      word="Awaiting acknowledgement"
    />
    <${Figure} label="Mean time to acknowledge" value=${kpi.mean_time_to_ack_s === null ? "—" : duration(kpi.mean_time_to_ack_s)} target="of those acknowledged" />
    <${Figure} label="Mean time to close" value=${kpi.mean_time_to_close_s === null ? "—" : duration(kpi.mean_time_to_close_s)} target="of those closed" />
    <div class="figure card">
      <div class="figure-label">Priority distribution</div>
      <div class="prio">
        <span><${Severity} level="high" /> ${num(p.high)} %</span>
        <span><${Severity} level="medium" /> ${num(p.medium)} %</span>
        <span><${Severity} level="low" /> ${num(p.low)} %</span>
      </div>
      <div class="small muted">guide ≈ 5 / 15 / 80 % (EEMUA 191)</div>
    </div>
  </div>`;
}

/** @param {{ kpi: Kpi, openings: import("../../lib/ui.js").Data<Openings | undefined> }} props */
function RateChart({ kpi, openings }) {
  const from = Date.parse(kpi.from);
  const to = Date.parse(kpi.to);
  const [ref, width] = useWidth();
  const { data, error } = openings;
  return html`<div ref=${ref}>${width > 0 ? html`<${RateBars} data=${data} error=${error} from=${from} to=${to} width=${width} />` : null}</div>`;
}

/** @param {{ data: Openings | undefined, error: unknown, from: number, to: number, width: number }} props */
function RateBars({ data, error, from, to, width }) {
  if (error) return html`<${ErrorNote} error=${error} />`;
  if (!data) return html`<${Loading} what="Counting the openings" />`;
  const series = rateSeries(data.starts, from, to, width);
  const span = series.per === 1 ? "each bar: the openings of one 10-minute window" : `each bar: the busiest 10-minute window of ${duration((series.per * WINDOW_MS) / 1000)}`;
  return html`<div>
    <${RateBarChart} times=${series.times} values=${series.values} />
    <p class="legend-note">
      ${time(from)} – ${time(to)}; ${span}. Dashed: the flood line (${FLOOD} in 10 minutes).
      ${data.complete ? "" : ` Drawn from the first ${LIST_PAGE * LIST_PAGES} openings of each kind of watcher.`}
    </p>
  </div>`;
}

/** @param {{ kpi: Kpi, names: Map<string, string> }} props */
function BadActors({ kpi, names }) {
  return html`<div class="kpi-lists">
    <section aria-labelledby="bad-title">
      <h2 id="bad-title">Bad actors</h2>
      <${Table}
        caption="The 10 triggers that opened the most alerts"
        empty="No alert in the range."
        rows=${kpi.top_triggers}
        rowKey=${(/** @type {KpiTrigger} */ r) => `${r.watcher_id}|${r.trigger_id}`}
        columns=${[
          { label: "Trigger", cell: (/** @type {KpiTrigger} */ r) => r.trigger_name },
          { label: "Watcher", cell: (/** @type {KpiTrigger} */ r) => names.get(r.watcher_id) ?? html`<span class="muted small">${r.watcher_id}</span>` },
          { label: "Alerts", num: true, cell: (/** @type {KpiTrigger} */ r) => num(r.count) },
          { label: "Share", num: true, cell: (/** @type {KpiTrigger} */ r) => `${num(r.percent)} %` },
        ]}
      />
    </section>
    <section aria-labelledby="chatter-title">
      <h2 id="chatter-title">Chattering</h2>
      <${Table}
        caption="Triggers that opened 3 or more alerts within 60 s"
        empty="No chattering trigger."
        rows=${kpi.chattering}
        rowKey=${(/** @type {KpiChattering} */ r) => r.trigger_id}
        columns=${[
          { label: "Trigger", cell: (/** @type {KpiChattering} */ r) => html`<${Status} tone="warning">${r.trigger_name}</${Status}>` },
          { label: "Alerts", num: true, cell: (/** @type {KpiChattering} */ r) => num(r.count) },
        ]}
      />
    </section>
    <section aria-labelledby="stale-title">
      <h2 id="stale-title">Stale</h2>
      <${Table}
        caption="Alerts active for more than 24 h"
        empty="No stale alert."
        rows=${kpi.stale}
        rowKey=${(/** @type {KpiStale} */ r) => r.alert_id}
        columns=${[
          { label: "Alert", cell: (/** @type {KpiStale} */ r) => html`<a href=${alertHref(r.alert_id)}>${r.trigger_name}</a>` },
          { label: "Active for", num: true, cell: (/** @type {KpiStale} */ r) => num(r.active_hours, "h", 1) },
        ]}
      />
    </section>
  </div>`;
}

/** @param {{ choice: Choice, places: PlaceSite[] | null, kpi: Kpi | undefined }} props */
function Chooser({ choice, places, kpi }) {
  const plants = plantsOf(places);
  const functions = plants.find((p) => p.plant_id === choice.plant_id)?.functions ?? [];
  /** @param {ControlEvent<HTMLFormElement>} event */
  const submit = (event) => {
    event.preventDefault();
    const form = Object.fromEntries(new FormData(event.currentTarget).entries());
    location.hash = `#/alerts/kpi${queryString(form)}`;
  };
  // A new plant's functions are others: the function falls back to the whole plant.
  /** @param {ControlEvent<HTMLSelectElement>} event */
  const plantChanged = (event) => {
    location.hash = `#/alerts/kpi${queryString({ ...choice, plant_id: event.currentTarget.value, function_id: "" })}`;
  };
  // Without the configuration, the place is the link's, carried as it is; only the range is chosen.
  const placeFields =
    places === null
      ? html`${choice.plant_id ? html`<input type="hidden" name="plant_id" value=${choice.plant_id} />` : null}
          ${choice.function_id ? html`<input type="hidden" name="function_id" value=${choice.function_id} />` : null}
          ${choice.site_id ? html`<input type="hidden" name="site_id" value=${choice.site_id} />` : null}`
      : html`<div class="field">
      <label for="kpi-plant">Plant</label>
      <select id="kpi-plant" name="plant_id" value=${choice.plant_id} onChange=${plantChanged}>
        ${(places ?? []).map((s) => html`<optgroup label=${s.site_name}>${s.plants.map((p) => html`<option value=${p.plant_id}>${p.plant_name}</option>`)}</optgroup>`)}
      </select>
    </div>
    <div class="field">
      <label for="kpi-function">Function</label>
      <select id="kpi-function" name="function_id" value=${choice.function_id}>
        <option value="">Whole plant</option>
        ${functions.map((f) => html`<option value=${f.function_id}>${f.function_name}</option>`)}
      </select>
    </div>`;
  return html`<form class="row kpi-choice" aria-label="Place and range" onSubmit=${submit}>
    ${placeFields}
    <div class="field">
      <label for="kpi-from">From</label>
      <input id="kpi-from" name="from" type="date" value=${choice.from || (kpi ? dateOf(Date.parse(kpi.from)) : "")} />
    </div>
    <div class="field">
      <label for="kpi-to">To</label>
      <input id="kpi-to" name="to" type="date" value=${choice.to || (kpi ? dateOf(Date.parse(kpi.to)) : "")} />
    </div>
    <div class="field"><button type="submit" class="primary">Show</button></div>
  </form>`;
}

/** @param {import("../../lib/types.js").PageProps} props */
export function AlertKpi({ user, route }) {
  const places = useData(() => loadPlaces(user), [user.username]);
  const choice = choiceOf(route.query, places.data);
  /** @type {PlaceKey | null} */
  const place = choice.function_id ? { function_id: choice.function_id } : choice.plant_id ? { plant_id: choice.plant_id } : choice.site_id ? { site_id: choice.site_id } : null;
  const range = rangeOf(choice);
  /** @type {import("../../lib/ui.js").Data<Kpi | undefined>} */
  const { data: kpi, error } = useData(() => (place ? get("/_alerting/alerts/_kpi", { ...place, ...range }) : Promise.resolve(undefined)), [JSON.stringify(place), range.from, range.to]);
  // A KPI answer is asked for with a place only.
  const openings = useData(() => (kpi ? openingsOf(/** @type {PlaceKey} */ (place), { from: kpi.from, to: kpi.to }) : Promise.resolve(undefined)), [JSON.stringify(place), kpi?.from, kpi?.to]);
  const tools = html`<${AlertTabs} current="kpi" />`;
  return html`<${Page} title="Alarm performance" tools=${tools}>
    <${ErrorNote} error=${places.error} />
    ${places.data === undefined && !places.error ? html`<${Loading} what="Loading the plants" />` : null}
    ${places.data && !place ? html`<p class="muted card">No plant in your scope.</p>` : null}
    ${places.data === null && !place
      ? html`<p class="notice">Without the Configuration module the plants cannot be listed here: open this view from a link that names a plant or a function.</p>`
      : null}
    ${places.data !== undefined && place ? html`<${Chooser} choice=${choice} places=${places.data} kpi=${kpi} />` : null}
    <${ErrorNote} error=${error} />
    ${place && kpi === undefined && !error ? html`<${Loading} what="Measuring" />` : null}
    ${kpi
      ? html`<p class="muted small">Alerts that opened ${time(kpi.from)} – ${time(kpi.to)}; unacknowledged and stale as of the end.</p>
          <${Figures} kpi=${kpi} />
          <section aria-labelledby="rate-title">
            <h2 id="rate-title">Alarm rate</h2>
            <${RateChart} kpi=${kpi} openings=${openings} />
          </section>
          <${BadActors} kpi=${kpi} names=${openings.data?.watchers ?? new Map()} />`
      : null}
  </${Page}>`;
}
