// @ts-check
// Energy: where a plant's energy goes. The functions' consumption and their shares of the plant,
// a function's meters (or assets) and their shares of the function (op 76), one meter's trend
// hourly to monthly (op 77), and the period compared with the one before it, meter by meter.
// Everything is in the units the service answers with (MWh, KW, V, A); periods follow the
// plant's site time zone (periods.js).
import { ApiError, get } from "../../lib/api.js";
import { bars as barPaths, timeAxis, usePlot, valueAxis } from "../../lib/chart.js";
import { INTERVALS, PERIODS, dateValue, defaultInterval, fittingInterval, periodOf, rangeLabel, zoneOr } from "./periods.js";
import { PlantSelect, go, loadPlants } from "../../lib/place.js";
import { ErrorNote, Field, Loading, Page, Table, html, num, unitOf, useData } from "../../lib/ui.js";
import { formatTime, viewSiteZone } from "../../lib/prefs.js";

/** @typedef {import("../../lib/types.js").EnergyMeter} EnergyMeter */
/** @typedef {import("../../lib/types.js").EnergyPoint} EnergyPoint */
/** @typedef {import("./periods.js").Range} Range */
/** @typedef {ReturnType<typeof periodOf>} Period */
/** @template {EventTarget} T @typedef {import("../../lib/types.js").ControlEvent<T>} ControlEvent */
/** @typedef {(patch: Record<string, string | undefined>) => void} SetQuery */
/**
 * A function's consumption over the period: its meters, their total, its share (%) of the plant.
 * @typedef {{ function_id: string, function_name: string, metrics: EnergyMeter[], total: number, unit: string, share: number }} FunctionShare
 */
/**
 * An asset's consumption (or what is on no asset): its meters, their total, its share (%) of the function.
 * @typedef {{ asset_id: string, asset_name: string, metrics: EnergyMeter[], total: number, share: number, unit: string }} AssetShare
 */
/**
 * A meter's consumption in the period and the one before; `total` for the sum of them all.
 * @typedef {{ id: string, name: string, unit: string, now: number, before: number, total?: boolean }} ComparisonRow
 */

/** @type {[id: string, label: string][]} */
const METRICS = [
  ["consumption_chart", "Consumption"],
  ["power_chart", "Power (mean)"],
  ["voltage_chart", "Voltage (mean)"],
  ["current_chart", "Current (mean)"],
];

const iso = (/** @type {number} */ ms) => new Date(ms).toISOString();
/** @type {<T>(list: T[], pick: (x: T) => unknown) => number} */
const sum = (list, pick) => list.reduce((s, x) => s + (Number(pick(x)) || 0), 0);
/** Energy in MWh with enough decimals for a small meter (0.042 MWh is 42 kWh). */
const mwh = (/** @type {unknown} */ value, unit = "MWh") => num(value, unit, Math.abs(Number(value)) < 10 ? 3 : 1);
const pct = (/** @type {unknown} */ value) => num(value, "%", 1);
/** The label of an interval; `chosen` and `interval` are always one of INTERVALS. */
const intervalLabel = (/** @type {string} */ id) => /** @type {[string, string]} */ (INTERVALS.find(([i]) => i === id))[1];

/**
 * Op 76 of each function of the plant over the range: the function's meters and its total.
 * @param {{ function_id: string, function_name: string }[]} functions
 * @param {Range} range
 * @returns {Promise<FunctionShare[]>}
 */
async function loadFunctionShares(functions, [from, to]) {
  const rows = await Promise.all(
    functions.map(async (fn) => {
      /** @type {EnergyMeter[]} */
      const metrics = await get("/_ems/monitor/_all", { function_id: fn.function_id, label: "function", from: iso(from), to: iso(to) });
      const name = fn.function_name || metrics[0]?.function_name || "This function";
      return { ...fn, function_name: name, metrics, total: sum(metrics, (m) => m.total_consumption), unit: metrics[0]?.energy_unit ?? "MWh" };
    }),
  );
  const plantTotal = sum(rows, (r) => r.total);
  return rows.map((r) => ({ ...r, share: plantTotal > 0 ? (100 * r.total) / plantTotal : 0 }));
}

/**
 * Op 76 of each asset of the function: its meters' consumption and share of the function.
 * @param {string} functionId
 * @param {Range} range
 * @returns {Promise<AssetShare[]>}
 */
async function loadAssetShares(functionId, [from, to]) {
  /** @type {import("../../lib/types.js").Asset[]} */
  const assets = await get("/_config/assets/_list", { function_id: functionId });
  return Promise.all(
    assets.map(async (a) => {
      /** @type {EnergyMeter[]} */
      const metrics = await get("/_ems/monitor/_all", { function_id: a.asset_id, label: "asset", from: iso(from), to: iso(to) });
      return { ...a, metrics, total: sum(metrics, (m) => m.total_consumption), share: sum(metrics, (m) => m.percent_of_total), unit: metrics[0]?.energy_unit ?? "MWh" };
    }),
  );
}

/**
 * A share as a bar with its number beside it (the bar alone would be colour alone).
 * @param {{ percent: number }} props
 */
function ShareBar({ percent }) {
  const width = Math.max(0, Math.min(100, Number(percent) || 0));
  return html`<span class="share"><span class="bar" aria-hidden="true"><span class="bar-fill" style=${{ width: `${width}%` }}></span></span><span class="share-num">${pct(percent)}</span></span>`;
}

/** @param {{ rows: FunctionShare[], plantName: string, selectedId: string | undefined, onPick: (functionId: string) => void }} props */
function FunctionShares({ rows, plantName, selectedId, onPick }) {
  const total = sum(rows, (r) => r.total);
  return html`<section class="card" aria-labelledby="energy-functions">
    <h2 id="energy-functions">Consumption by function</h2>
    <${Table}
      caption=${`Functions of ${plantName}; ${mwh(total)} in all`}
      empty="This plant has no function yet."
      rows=${rows}
      rowKey=${(/** @type {FunctionShare} */ r) => r.function_id}
      rowClass=${(/** @type {FunctionShare} */ r) => (r.function_id === selectedId ? "selected" : "")}
      columns=${[
        {
          label: "Function",
          cell: (/** @type {FunctionShare} */ r) =>
            r.function_id === selectedId
              ? html`<strong aria-current="true">${r.function_name}</strong>`
              : html`<button type="button" class="link" onClick=${() => onPick(r.function_id)}>${r.function_name}</button>`,
        },
        { label: "Meters", num: true, cell: (/** @type {FunctionShare} */ r) => (r.metrics.length ? r.metrics.length : html`<span class="muted">none</span>`) },
        { label: "Consumption", num: true, cell: (/** @type {FunctionShare} */ r) => (r.metrics.length ? mwh(r.total, r.unit) : "—") },
        { label: "Share of the plant", cell: (/** @type {FunctionShare} */ r) => (r.metrics.length ? html`<${ShareBar} percent=${r.share} />` : "—") },
      ]}
    />
  </section>`;
}

/** @param {{ fn: FunctionShare, group: string, onGroup: (group: string) => void, assets: import("../../lib/ui.js").Data<AssetShare[] | undefined>, onTrend: (monitorId: string) => void, byAsset: boolean }} props */
function MonitorShares({ fn, group, onGroup, assets, onTrend, byAsset }) {
  const metrics = [...fn.metrics].sort((a, b) => b.total_consumption - a.total_consumption);
  const groupSelect = !byAsset ? null : html`<${Field} label="Show by" name="group" as="select" value=${group} onChange=${(/** @type {ControlEvent<HTMLSelectElement>} */ e) => onGroup(e.currentTarget.value)}>
    <option value="monitor">Meter</option>
    <option value="asset">Asset</option>
  </${Field}>`;
  let table;
  if (group === "asset") {
    if (assets.error) table = html`<${ErrorNote} error=${assets.error} />`;
    else if (!assets.data) table = html`<${Loading} what="Loading the assets' meters" />`;
    else {
      const onAssets = sum(assets.data, (a) => a.total);
      const rest = fn.total - onAssets;
      /** @type {AssetShare[]} */
      const rows = [...assets.data.filter((a) => a.metrics.length), ...(rest > 1e-9 ? [{ asset_id: "", asset_name: "Not on an asset", metrics: metrics.filter((m) => !/** @type {AssetShare[]} */ (assets.data).some((a) => a.metrics.some((x) => x.monitor_id === m.monitor_id))), total: rest, share: fn.total > 0 ? (100 * rest) / fn.total : 0, unit: fn.unit }] : [])].sort((a, b) => b.total - a.total);
      table = html`<${Table}
        caption=${`Assets of ${fn.function_name} with energy meters`}
        empty="No asset of this function has an energy meter."
        rows=${rows}
        rowKey=${(/** @type {AssetShare} */ a) => a.asset_id}
        columns=${[
          { label: "Asset", cell: (/** @type {AssetShare} */ a) => (a.asset_id ? a.asset_name : html`<span class="muted">${a.asset_name}</span>`) },
          { label: "Meters", cell: (/** @type {AssetShare} */ a) => a.metrics.map((m) => m.monitor_name).join(", ") },
          { label: "Consumption", num: true, cell: (/** @type {AssetShare} */ a) => mwh(a.total, a.unit) },
          { label: "Share of the function", cell: (/** @type {AssetShare} */ a) => html`<${ShareBar} percent=${a.share} />` },
        ]}
      />`;
    }
  } else {
    table = html`<${Table}
      caption=${`Energy meters of ${fn.function_name}; ${mwh(fn.total, fn.unit)} in all`}
      empty="This function has no energy meter."
      rows=${metrics}
      rowKey=${(/** @type {EnergyMeter} */ m) => m.monitor_id}
      columns=${[
        { label: "Meter", cell: (/** @type {EnergyMeter} */ m) => html`<button type="button" class="link" title="Show its trend" onClick=${() => onTrend(m.monitor_id)}>${m.monitor_name}</button>` },
        { label: "Consumption", num: true, cell: (/** @type {EnergyMeter} */ m) => mwh(m.total_consumption, m.energy_unit) },
        { label: "Share of the function", cell: (/** @type {EnergyMeter} */ m) => html`<${ShareBar} percent=${m.percent_of_total} />` },
        { label: "Power (mean)", num: true, cell: (/** @type {EnergyMeter} */ m) => num(m.Power, m.power_unit, 1) },
        { label: "Voltage (mean)", num: true, cell: (/** @type {EnergyMeter} */ m) => num(m.Voltage, m.voltage_unit, 1) },
        { label: "Current (mean)", num: true, cell: (/** @type {EnergyMeter} */ m) => num(m.Current, m.current_unit, 1) },
      ]}
    />`;
  }
  return html`<section class="card" aria-labelledby="energy-meters">
    <div class="section-head"><h2 id="energy-meters">${fn.function_name}: consumption by ${group === "asset" ? "asset" : "meter"}</h2>${groupSelect}</div>
    ${table}
  </section>`;
}

/**
 * The trend's chart. lib/chart.js's BarChart lets uPlot fit the y axis to the data, which makes a 1 %
 * change between two bars look like a doubling; consumption bars here start at zero. The means
 * (power, voltage, current) are a line on a fitted axis, where the variation is what matters.
 * @param {{ points: EnergyPoint[], unit: string, label: string, bars: boolean, title: string, interval: string, tz: string }} props
 */
function EnergyChart({ points, unit, label, bars, title, interval, tz }) {
  /** @type {import("uplot").AlignedData} */
  const data = [points.map((p) => Date.parse(p.Date) / 1000), points.map((p) => p.Energy)];
  const digits = bars ? 3 : 1;
  // Days, weeks and months are labelled at their buckets' starts (uPlot's own ticks fall on hours);
  // an hourly trend has the console's one time axis (the site's zone unless the person chose another).
  const clock = timeAxis(tz);
  const daily = interval === "daily" || interval === "weekly" || interval === "monthly";
  /** @type {import("uplot").Axis} */
  const xAxis = daily
    ? {
        ...clock.axis,
        space: 50,
        splits: (u) => {
          // The x values are the buckets' times, an array (not a typed one).
          const xs = /** @type {number[]} */ (u.data[0]);
          const every = Math.max(1, Math.ceil(xs.length / Math.max(1, Math.floor(u.bbox.width / devicePixelRatio / 70))));
          return xs.filter((_x, i) => i % every === 0);
        },
        values: (_u, ticks) => ticks.map((t) => formatTime(t * 1000, { siteZone: tz, label: false }).slice(0, interval === "monthly" ? 7 : 10)),
      }
    : clock.axis;
  const box = usePlot(
    (width) => ({
      width,
      height: 240,
      title,
      tzDate: clock.tzDate,
      scales: { x: { time: true }, y: bars ? { range: (_u, _min, max) => [0, max > 0 ? max * 1.08 : 1] } : {} },
      axes: [xAxis, valueAxis(unit, 60)],
      series: [
        clock.legend,
        {
          label,
          stroke: "#4d5963",
          width: bars ? 1 : 1.5,
          fill: bars ? "rgba(77,89,99,0.35)" : undefined,
          paths: bars ? barPaths({ size: [0.8, 80] }) : undefined,
          points: { show: !bars && points.length < 60 },
          value: (_u, v) => (v === null || v === undefined ? "—" : `${v.toFixed(digits)} ${unitOf(unit)}`),
        },
      ],
    }),
    data,
    `${label}|${unit}|${bars}|${title}|${interval}|${clock.key}`,
  );
  return html`<div class="chart" ref=${box} role="img" aria-label=${`${title}, ${points.length} ${bars ? "bars" : "points"}`}></div>`;
}

/**
 * Total and peak of a consumption trend, mean and highest of the others.
 * @param {{ points: EnergyPoint[], metric: string, tz: string }} props
 */
function TrendFigures({ points, metric, tz }) {
  const values = /** @type {(EnergyPoint & { Energy: number })[]} */ (points.filter((p) => p.Energy !== null && p.Energy !== undefined));
  if (!values.length) return null;
  const unit = points[0].unit;
  const peak = values.reduce((a, b) => (b.Energy > a.Energy ? b : a));
  const when = formatTime(Date.parse(peak.Date), { siteZone: tz });
  const first = metric === "consumption_chart" ? `Total ${mwh(sum(values, (p) => p.Energy), unit)}` : `Mean ${num(sum(values, (p) => p.Energy) / values.length, unit, 1)}`;
  return html`<p class="trend-figures">${first} · highest ${metric === "consumption_chart" ? mwh(peak.Energy, unit) : num(peak.Energy, unit, 1)} (bucket of ${when}) · ${points.length} ${metric === "consumption_chart" ? "bars" : "points"}</p>`;
}

/** @param {{ fn: FunctionShare, period: Period, query: Record<string, string>, tz: string, set: SetQuery }} props */
function Trend({ fn, period, query, tz, set }) {
  const meters = [...fn.metrics].sort((a, b) => b.total_consumption - a.total_consumption);
  const monitorId = meters.some((m) => m.monitor_id === query.monitor_id) ? query.monitor_id : meters[0]?.monitor_id;
  const metric = METRICS.some(([id]) => id === query.metric) ? query.metric : "consumption_chart";
  const chosen = INTERVALS.some(([id]) => id === query.interval) ? query.interval : defaultInterval(period.range);
  // No chart from more bars than pixels: a finer interval than the width holds is coarsened.
  const pixels = Math.max(300, Math.min(window.innerWidth, 1600) - 120);
  const interval = fittingInterval(chosen, period.range, pixels);
  /** @type {import("../../lib/ui.js").Data<EnergyPoint[] | undefined>} */
  const trend = useData(
    () =>
      monitorId
        ? get(`/_ems/monitor/_trend/${encodeURIComponent(monitorId)}`, { from: iso(period.range[0]), to: iso(period.range[1]), metric, interval })
        : Promise.resolve(undefined),
    [monitorId, metric, interval, period.range.join()],
  );
  const meter = meters.find((m) => m.monitor_id === monitorId);
  const points = trend.data ?? [];
  const noData = trend.error instanceof ApiError && trend.error.status === 400 && /not available/i.test(trend.error.message);
  const unit = points[0]?.unit ?? (metric === "consumption_chart" ? "MWh" : "");
  const metricLabel = METRICS.find(([id]) => id === metric)?.[1] ?? metric;
  return html`<section class="card" aria-labelledby="energy-trend">
    <h2 id="energy-trend">Trend</h2>
    ${meters.length === 0
      ? html`<p class="muted">This function has no energy meter.</p>`
      : html`<div class="row">
            <${Field} label="Meter" name="monitor_id" as="select" value=${monitorId} onChange=${(/** @type {ControlEvent<HTMLSelectElement>} */ e) => set({ monitor_id: e.currentTarget.value })}>
              ${meters.map((m) => html`<option value=${m.monitor_id}>${m.monitor_name}</option>`)}
            </${Field}>
            <${Field} label="Metric" name="metric" as="select" value=${metric} onChange=${(/** @type {ControlEvent<HTMLSelectElement>} */ e) => set({ metric: e.currentTarget.value })}>
              ${METRICS.map(([id, label]) => html`<option value=${id}>${label}</option>`)}
            </${Field}>
            <${Field} label="Interval" name="interval" as="select" value=${chosen} onChange=${(/** @type {ControlEvent<HTMLSelectElement>} */ e) => set({ interval: e.currentTarget.value })}>
              ${INTERVALS.map(([id, label]) => html`<option value=${id}>${label}</option>`)}
            </${Field}>
          </div>
          ${interval !== chosen
            ? html`<p class="hint" role="status">${intervalLabel(chosen)} would make more bars than the chart has pixels: shown ${intervalLabel(interval).toLowerCase()}.</p>`
            : null}
          ${noData ? html`<p class="notice" role="status">ℹ ${trend.error?.message} for ${meter?.monitor_name ?? "this meter"} in this period.</p>` : html`<${ErrorNote} error=${trend.error} />`}
          ${trend.data === undefined && !trend.error ? html`<${Loading} what="Loading the trend" />` : null}
          ${points.length && !trend.error
            ? html`<${EnergyChart}
                  title=${`${meter?.monitor_name ?? ""}: ${metricLabel.toLowerCase()} ${interval} (${unit})`}
                  label=${metricLabel}
                  unit=${unit}
                  points=${points}
                  bars=${metric === "consumption_chart"}
                  interval=${interval}
                  tz=${tz}
                />
                <${TrendFigures} points=${points} metric=${metric} tz=${tz} />`
            : null}`}
  </section>`;
}

/**
 * Change from `before` to `now` in words and symbols; "new" when there was nothing before.
 * @param {{ before: number, now: number, unit: string }} props
 */
function Change({ before, now, unit }) {
  const delta = now - before;
  if (Math.abs(delta) < 1e-9) return html`<span class="muted">no change</span>`;
  const arrow = delta > 0 ? "▲" : "▼";
  const share = before > 0 ? (100 * Math.abs(delta)) / before : null;
  const percent = share === null ? " (new)" : share < 0.1 ? " (< 0.1 %)" : ` (${delta > 0 ? "+" : "−"}${num(share, "%", 1)})`;
  const amount = Math.abs(delta) < 0.001 ? `< 0.001 ${unit}` : mwh(Math.abs(delta), unit);
  return html`<span class="change"><span aria-hidden="true">${arrow} </span>${delta > 0 ? "up" : "down"} ${amount}${percent}</span>`;
}

/**
 * Two bars on one scale: the previous period light, this one dark.
 * @param {{ before: number, now: number, max: number }} props
 */
function PairBars({ before, now, max }) {
  const w = (/** @type {number} */ v) => `${max > 0 ? Math.max(0, (100 * v) / max) : 0}%`;
  return html`<span class="pair" aria-hidden="true"><span class="bar prev"><span class="bar-fill" style=${{ width: w(before) }}></span></span><span class="bar"><span class="bar-fill" style=${{ width: w(now) }}></span></span></span>`;
}

/** @param {{ fn: FunctionShare, period: Period, tz: string }} props */
function Comparison({ fn, period, tz }) {
  /** @type {import("../../lib/ui.js").Data<EnergyMeter[]>} */
  const before = useData(
    () => get("/_ems/monitor/_all", { function_id: fn.function_id, label: "function", from: iso(period.previous[0]), to: iso(period.previous[1]) }),
    [fn.function_id, period.previous.join()],
  );
  const nowLabel = rangeLabel(period.range, tz);
  const beforeLabel = rangeLabel(period.previous, tz);
  let body = null;
  if (before.error) body = html`<${ErrorNote} error=${before.error} />`;
  else if (!before.data) body = html`<${Loading} what="Loading the previous period" />`;
  else {
    const prevOf = new Map(before.data.map((m) => [m.monitor_id, m.total_consumption]));
    /** @type {{ id: string, name: string, unit: string, now: number, before: number, total?: boolean }[]} */
    const rows = [...fn.metrics].sort((a, b) => b.total_consumption - a.total_consumption).map((m) => ({ id: m.monitor_id, name: m.monitor_name, unit: m.energy_unit, now: m.total_consumption, before: prevOf.get(m.monitor_id) ?? 0 }));
    if (rows.length) rows.push({ id: "", name: "All meters", unit: fn.unit, now: sum(rows, (r) => r.now), before: sum(rows, (r) => r.before), total: true });
    const max = Math.max(0, ...rows.filter((r) => !r.total).flatMap((r) => [r.now, r.before]));
    body = html`<${Table}
      caption=${`${period.label} (${nowLabel}) against ${beforeLabel}`}
      empty="This function has no energy meter."
      rows=${rows}
      rowKey=${(/** @type {ComparisonRow} */ r) => r.id}
      rowClass=${(/** @type {ComparisonRow} */ r) => (r.total ? "total" : "")}
      columns=${[
        { label: "Meter", cell: (/** @type {ComparisonRow} */ r) => r.name },
        { label: "Previous period", num: true, cell: (/** @type {ComparisonRow} */ r) => mwh(r.before, r.unit) },
        { label: "This period", num: true, cell: (/** @type {ComparisonRow} */ r) => mwh(r.now, r.unit) },
        { label: "Change", cell: (/** @type {ComparisonRow} */ r) => html`<${Change} before=${r.before} now=${r.now} unit=${r.unit} />` },
        { label: "", cell: (/** @type {ComparisonRow} */ r) => (r.total ? null : html`<${PairBars} before=${r.before} now=${r.now} max=${max} />`) },
      ]}
    />
    <p class="hint"><span class="key prev"></span> previous period <span class="key"></span> this period</p>`;
  }
  return html`<section class="card" aria-labelledby="energy-compare">
    <h2 id="energy-compare">Compared with the previous period</h2>
    ${body}
  </section>`;
}

/** @param {{ period: Period, query: Record<string, string>, tz: string, set: SetQuery }} props */
function PeriodPicker({ period, query, tz, set }) {
  return html`<${Field} label="Period" name="period" as="select" value=${period.id} onChange=${(/** @type {ControlEvent<HTMLSelectElement>} */ e) => {
      const id = e.currentTarget.value;
      // Custom dates start from the period shown, so the fields are never blank.
      set(id === "custom" ? { period: id, from: dateValue(period.range[0], tz), to: dateValue(period.range[1] - 1, tz) } : { period: id, from: undefined, to: undefined });
    }}>
      ${PERIODS.map((p) => html`<option value=${p.id}>${p.label}</option>`)}
    </${Field}>
    ${period.id === "custom"
      ? html`<${Field} label="From" name="from" type="date" value=${query.from ?? dateValue(period.range[0], tz)} onChange=${(/** @type {ControlEvent<HTMLInputElement>} */ e) => set({ from: e.currentTarget.value })} />
          <${Field} label="To" name="to" type="date" value=${query.to ?? dateValue(period.range[1] - 1, tz)} onChange=${(/** @type {ControlEvent<HTMLInputElement>} */ e) => set({ to: e.currentTarget.value })} />`
      : null}`;
}

/** @param {import("../../lib/types.js").PageProps} props */
export function Energy({ user, route }) {
  const q = route.query;
  // Plants, functions and assets are listed by /_config. A user without the Configuration module
  // is refused them, and sees a function's energy only through a link that names it.
  const canConfig = user.modules.includes("Configuration");
  const plants = useData(() => (canConfig ? loadPlants() : Promise.resolve(undefined)), [user.username, canConfig]);
  const plant = plants.data?.find((p) => p.plant_id === q.plant_id) ?? plants.data?.[0];
  const tz = zoneOr(plant?.timezone);
  viewSiteZone(tz);
  const period = periodOf(q, tz);
  /** @type {SetQuery} */
  const set = (patch) => go(["energy"], { ...q, plant_id: plant?.plant_id, ...patch });

  /** @type {import("../../lib/ui.js").Data<import("../../lib/types.js").PlantFunction[] | undefined>} */
  const functions = useData(() => (plant ? get("/_config/functions/_list", { plant_id: plant.plant_id }) : Promise.resolve(undefined)), [plant?.plant_id]);
  const linked = !canConfig && q.function_id ? [{ function_id: q.function_id, function_name: "" }] : null;
  const shares = useData(
    () => ((functions.data ?? linked) ? loadFunctionShares(/** @type {{ function_id: string, function_name: string }[]} */ (functions.data ?? linked), period.range) : Promise.resolve(undefined)),
    [functions.data, linked?.[0].function_id, period.range.join()],
  );
  const rows = shares.data ?? [];
  const fn = rows.find((r) => r.function_id === q.function_id) ?? rows.find((r) => r.metrics.length) ?? rows[0];
  const group = canConfig && q.group === "asset" ? "asset" : "monitor";
  const assets = useData(
    () => (fn && group === "asset" ? loadAssetShares(fn.function_id, period.range) : Promise.resolve(undefined)),
    [fn?.function_id, group, period.range.join()],
  );

  const tools = html`
    ${plants.data?.length ? html`<${PlantSelect} plants=${plants.data} value=${plant?.plant_id} onChange=${(/** @type {string} */ id) => go(["energy"], { plant_id: id, period: q.period, from: q.from, to: q.to })} />` : null}
    ${functions.data?.length
      ? html`<${Field} label="Function" name="function_id" as="select" value=${fn?.function_id ?? ""} onChange=${(/** @type {ControlEvent<HTMLSelectElement>} */ e) => set({ function_id: e.currentTarget.value, monitor_id: undefined })}>
          ${functions.data.map((f) => html`<option value=${f.function_id}>${f.function_name}</option>`)}
        </${Field}>`
      : null}
    ${plant || linked ? html`<${PeriodPicker} period=${period} query=${q} tz=${tz} set=${set} />` : null}`;

  return html`<${Page} title="Energy" tools=${tools}>
    <div class="energy">
      <${ErrorNote} error=${plants.error ?? functions.error ?? shares.error} />
      ${plants.data && plants.data.length === 0 ? html`<p class="muted">No plant yet. An administrator adds one under Settings.</p>` : null}
      ${!canConfig && !linked
        ? html`<p class="notice">ℹ Choosing a plant and a function needs the Configuration module, which your account does not have. Ask an administrator for it, or open a link to a function's energy.</p>`
        : null}
      ${plant || linked ? html`<p class="muted small period-line">${period.label}: ${rangeLabel(period.range, tz)}</p>` : null}
      ${(plant || linked) && shares.data === undefined && !shares.error ? html`<${Loading} what="Loading the consumption" />` : null}
      ${shares.data
        ? html`<div class="energy-grid">
            ${plant ? html`<${FunctionShares} rows=${rows} plantName=${plant.plant_name} selectedId=${fn?.function_id} onPick=${(/** @type {string} */ id) => set({ function_id: id, monitor_id: undefined })} />` : null}
            ${fn ? html`<${MonitorShares} fn=${fn} group=${group} byAsset=${canConfig} onGroup=${(/** @type {string} */ g) => set({ group: g })} assets=${assets} onTrend=${(/** @type {string} */ id) => set({ monitor_id: id })} />` : null}
          </div>
          ${fn ? html`<${Trend} key=${fn.function_id} fn=${fn} period=${period} query=${q} tz=${tz} set=${set} />` : null}
          ${fn ? html`<${Comparison} fn=${fn} period=${period} tz=${tz} />` : null}`
        : null}
    </div>
  </${Page}>`;
}
