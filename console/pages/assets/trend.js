// @ts-check
// Trends of the asset page: a small last-hour trend beside each latest value (ISA-101: a drift is
// seen before it alarms) and the big trend of one tag, with range presets and zoom by dragging.
// Both ask the history route (docs/api-tour.md, "Looking back") for about one point per pixel, so
// zooming in asks again for the narrower range and gets more detail (down to the raw readings).
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { get, routeUrl } from "../../lib/api.js";
import { THRESHOLD_COLORS, TrendChart, pointsFor } from "../../lib/chart.js";
import { ErrorNote, Field, html, num, time, useData } from "../../lib/ui.js";

/** @typedef {import("../../lib/types.js").History} History */
/** @typedef {import("../../lib/types.js").AssetMonitor} AssetMonitor */
/** @typedef {import("../../lib/types.js").AssetTag} AssetTag */
/** @template {EventTarget} T @typedef {import("../../lib/types.js").ControlEvent<T>} ControlEvent */

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
export const PRESETS = [
  { key: "1h", label: "1 h", span: HOUR },
  { key: "24h", label: "24 h", span: DAY },
  { key: "7d", label: "7 d", span: 7 * DAY },
  { key: "30d", label: "30 d", span: 30 * DAY },
  { key: "1y", label: "1 year", span: 365 * DAY },
];
/** A preset's range follows the clock: read again this often while it is shown unzoomed. */
const FOLLOW_MS = 30_000;
/** Narrower than this is no longer a trend (the route answers raw readings well before). */
const MIN_ZOOM_MS = 10_000;
/** The trend box's pixels that are not the plotting area (the value axis, the padding). */
const PLOT_INSET = 80;
/** The export route's longest range (docs/api-tour.md, "Looking back"). */
const EXPORT_MAX_MS = 31 * DAY;
/** A second period drawn over the first: the one just before it, or the same span a week or a year earlier. */
const COMPARE = [
  { key: "", label: "Nothing" },
  { key: "previous", label: "The period before" },
  { key: "week", label: "A week earlier", shift: 7 * DAY },
  { key: "year", label: "A year earlier", shift: 365 * DAY },
];

const iso = (/** @type {number} */ ms) => new Date(ms).toISOString();

/**
 * A tag's history in [from, to] at `points` buckets.
 * @type {(monitorId: string, tag: string, from: number, to: number, points: number) => Promise<History>}
 */
export const historyOf = (monitorId, tag, from, to, points) =>
  get(`/_cm/monitors/${encodeURIComponent(monitorId)}/_history`, { tag, from: iso(from), to: iso(to), points });

/** The width of an element in CSS px, following its resizes (0 before layout). */
/** @returns {[import("preact").RefObject<HTMLDivElement | null>, number]} */
export function useWidth() {
  const ref = useRef(/** @type {HTMLDivElement | null} */ (null));
  const [width, setWidth] = useState(0);
  useEffect(() => {
    if (!ref.current) return undefined;
    // Whole tens of pixels: a scrollbar coming and going must not ask the data again.
    const measure = () => setWidth(Math.round((ref.current?.clientWidth ?? 0) / 10) * 10);
    measure();
    const ro = new ResizeObserver(measure);
    ro.observe(ref.current);
    return () => ro.disconnect();
  }, []);
  return [ref, width];
}

/**
 * The chart in `box` saved as a PNG file, its canvas as drawn (its legend and title are the page's).
 * @param {HTMLElement | null} box
 * @param {string} name
 */
function savePng(box, name) {
  const canvas = box?.querySelector("canvas");
  if (!canvas) return;
  const a = document.createElement("a");
  a.href = canvas.toDataURL("image/png");
  a.download = `${name.replace(/[^\w.-]+/g, "_")}.png`;
  a.click();
}

/**
 * A threshold as a number, or undefined where the tag has none.
 * @type {(thresholds: Record<string, unknown> | null | undefined, name: string) => number | undefined}
 */
export const limitOf = (thresholds, name) => {
  const v = thresholds?.[name];
  return v === undefined || v === null || String(v).trim() === "" || !Number.isFinite(Number(v)) ? undefined : Number(v);
};

/**
 * The threshold lines a trend draws: caution and warning (the limits that make a value abnormal).
 * @param {Record<string, unknown> | null | undefined} thresholds
 * @param {string} unit
 */
export function thresholdLines(thresholds, unit) {
  /** @type {import("../../lib/chart.js").Line[]} */
  const lines = [];
  const caution = limitOf(thresholds, "caution");
  const warning = limitOf(thresholds, "warning");
  if (caution !== undefined) lines.push({ value: caution, label: `caution ${num(caution, unit)}`, color: THRESHOLD_COLORS.caution });
  if (warning !== undefined) lines.push({ value: warning, label: `warning ${num(warning, unit)}`, color: THRESHOLD_COLORS.warning });
  return lines;
}

const SPARK_W = 120;
const SPARK_H = 30;

/**
 * The last hour of a tag as a small SVG: the mean as a line over the min..max band, the caution
 * and warning lines where they fall inside the band's range. Its label says where it went.
 * @param {{ monitorId: string, tag: string, unit: string, thresholds: Record<string, unknown> | null | undefined, refreshMs?: number }} props
 */
export function Sparkline({ monitorId, tag, unit, thresholds, refreshMs = 10_000 }) {
  const { data, error } = useData(
    () => {
      const now = Date.now();
      return historyOf(monitorId, tag, now - HOUR, now, pointsFor(SPARK_W));
    },
    [monitorId, tag],
    refreshMs,
  );
  if (error) return html`<span class="muted small" title=${error.message}>no trend</span>`;
  const points = data?.points ?? [];
  if (points.length < 2) return html`<span class="muted small">${data ? "no readings in the last hour" : ""}</span>`;
  const t0 = points[0].timestamp;
  const t1 = points[points.length - 1].timestamp;
  let lo = Math.min(...points.map((p) => p.min));
  let hi = Math.max(...points.map((p) => p.max));
  const pad = (hi - lo) * 0.1 || Math.abs(hi) * 0.05 || 1;
  lo -= pad;
  hi += pad;
  const x = (/** @type {number} */ t) => ((t - t0) / Math.max(1, t1 - t0)) * (SPARK_W - 2) + 1;
  const y = (/** @type {number} */ v) => SPARK_H - 1 - ((v - lo) / (hi - lo)) * (SPARK_H - 2);
  const line = points.map((p) => `${x(p.timestamp).toFixed(1)},${y(p.value).toFixed(1)}`).join(" ");
  const upper = points.map((p) => `${x(p.timestamp).toFixed(1)},${y(p.max).toFixed(1)}`);
  const lower = points.map((p) => `${x(p.timestamp).toFixed(1)},${y(p.min).toFixed(1)}`).reverse();
  const band = [...upper, ...lower].join(" ");
  const limits = thresholdLines(thresholds, unit).filter((l) => l.value > lo && l.value < hi);
  const first = points[0].value;
  const last = points[points.length - 1].value;
  const label = `${tag}, last hour: from ${num(first, unit)} to ${num(last, unit)}`;
  return html`<svg class="spark" width=${SPARK_W} height=${SPARK_H} viewBox=${`0 0 ${SPARK_W} ${SPARK_H}`} role="img" aria-label=${label}>
    <title>${label}</title>
    <polygon points=${band} class="spark-band" />
    ${limits.map((l) => html`<line x1="0" x2=${SPARK_W} y1=${y(l.value)} y2=${y(l.value)} stroke=${l.color} stroke-dasharray="3 2" stroke-width="1" />`)}
    <polyline points=${line} class="spark-line" />
  </svg>`;
}

/**
 * "buckets of 5 min" / "raw readings" of a history answer.
 * @param {History | undefined} history
 */
function resolutionOf(history) {
  if (!history) return "";
  if (!history.bucket_ms) return "raw readings";
  const s = history.bucket_ms / 1000;
  const text = s < 60 ? `${s} s` : s < 3600 ? `${s / 60} min` : s < 86400 ? `${s / 3600} h` : `${s / 86400} d`;
  return `buckets of ${text}, min–max band`;
}

/**
 * The trend of one tag: choose the monitor and tag, a range preset, and drag across the chart to
 * zoom in (each zoom a new, narrower history request); "Zoom out" goes back one step. A click on
 * the chart picks a time (`onPick(ms)`: the spectrum nearest to it).
 * @param {{ monitors: AssetMonitor[], selected: { monitor_id: string, tag: string } | null, onSelect: (sel: { monitor_id: string, tag: string | undefined }) => void, onPick?: (ms: number) => void, marker: import("../../lib/chart.js").Marker | null }} props
 */
export function TrendSection({ monitors, selected, onSelect, onPick, marker }) {
  const monitor = monitors.find((/** @type {AssetMonitor} */ m) => m.monitor_id === selected?.monitor_id) ?? monitors[0];
  const tag = monitor?.tags.find((/** @type {AssetTag} */ t) => t.tag_name === selected?.tag) ?? monitor?.tags[0];
  const [preset, setPreset] = useState("24h");
  const [range, setRange] = useState(() => ({ from: Date.now() - DAY, to: Date.now() }));
  const [zooms, setZooms] = useState(/** @type {{ from: number, to: number }[]} */ ([]));
  const [box, width] = useWidth();
  const zoomed = zooms.length > 0;
  const shown = zoomed ? zooms[zooms.length - 1] : range;

  const follow = useCallback(
    (/** @type {string} */ key = preset) => {
      const span = PRESETS.find((p) => p.key === key)?.span ?? DAY;
      const now = Date.now();
      setRange({ from: now - span, to: now });
    },
    [preset],
  );
  // An unzoomed preset follows the clock.
  useEffect(() => {
    if (zoomed) return undefined;
    const timer = setInterval(() => document.visibilityState === "visible" && follow(), FOLLOW_MS);
    return () => clearInterval(timer);
  }, [zoomed, follow]);

  // One point per pixel of the plotting area: the box less the value axis and the chart's padding.
  const points = width ? pointsFor(width - PLOT_INSET) : 0;
  const history = useData(
    () => (monitor && tag && points ? historyOf(monitor.monitor_id, tag.tag_name, shown.from, shown.to, points) : Promise.resolve(undefined)),
    [monitor?.monitor_id, tag?.tag_name, shown.from, shown.to, points],
  );
  // Up to seven more tags of the asset's monitors on the same trend (eight in all).
  const [more, setMore] = useState(/** @type {{ monitor_id: string, tag: string }[]} */ ([]));
  const tagsOf = (/** @type {{ monitor_id: string, tag: string }} */ sel) => {
    const m = monitors.find((/** @type {AssetMonitor} */ x) => x.monitor_id === sel.monitor_id);
    return { monitor: m, tag: m?.tags.find((/** @type {AssetTag} */ t) => t.tag_name === sel.tag) };
  };
  const others = useData(
    () =>
      points
        ? Promise.all(
            more.map(async (sel) => {
              const { monitor: m, tag: t } = tagsOf(sel);
              return { label: `${t?.tag_name ?? sel.tag} (${m?.monitor_name ?? ""})`, unit: t?.tag_unit ?? "", history: await historyOf(sel.monitor_id, sel.tag, shown.from, shown.to, points) };
            }),
          )
        : Promise.resolve([]),
    [JSON.stringify(more), shown.from, shown.to, points],
  );
  const [compare, setCompare] = useState("");
  const shift = compare === "previous" ? shown.to - shown.from : (COMPARE.find((c) => c.key === compare)?.shift ?? 0);
  const earlier = useData(
    () => (monitor && tag && points && shift ? historyOf(monitor.monitor_id, tag.tag_name, shown.from - shift, shown.to - shift, points) : Promise.resolve(undefined)),
    [monitor?.monitor_id, tag?.tag_name, shown.from, shown.to, points, shift],
  );

  // uPlot keeps the handlers it was made with: these stay the same and call the current ones.
  const latest = useRef(/** @type {{ zoom: (from: number, to: number) => void, pick: (ms: number) => void, zoomedAt?: number }} */ ({}));
  latest.current = {
    zoom: (from, to) => {
      if (to - from < MIN_ZOOM_MS) return;
      latest.current.zoomedAt = performance.now();
      setZooms((z) => [...z, { from, to }]);
    },
    // The mouse-up that ends a drag also clicks: that click is not a pick.
    pick: (ms) => {
      if (performance.now() - (latest.current.zoomedAt ?? 0) < 400) return;
      onPick?.(ms);
    },
  };
  const onZoom = useCallback((/** @type {number} */ from, /** @type {number} */ to) => latest.current.zoom(from, to), []);
  const onChartPick = useCallback((/** @type {number} */ ms) => latest.current.pick(ms), []);

  if (!monitor || !tag) return html`<p class="muted">This asset has no monitor with tags yet.</p>`;
  const unit = tag.tag_unit ?? "";
  const thresholds = thresholdLines(tag.thresholds, unit);
  const markers = marker && marker.at >= shown.from && marker.at <= shown.to ? [marker] : [];
  const h = history.data;
  const choosePreset = (/** @type {string} */ key) => {
    setPreset(key);
    setZooms([]);
    follow(key);
  };
  return html`<div class="trend">
    <div class="row trend-tools">
      <${Field} label="Monitor" name="trend_monitor" as="select" value=${monitor.monitor_id}
        onChange=${(/** @type {ControlEvent<HTMLSelectElement>} */ e) => onSelect({ monitor_id: e.currentTarget.value, tag: monitors.find((/** @type {AssetMonitor} */ m) => m.monitor_id === e.currentTarget.value)?.tags[0]?.tag_name })}>
        ${monitors.map((/** @type {AssetMonitor} */ m) => html`<option value=${m.monitor_id}>${m.monitor_name}</option>`)}
      </${Field}>
      <${Field} label="Tag" name="trend_tag" as="select" value=${tag.tag_name} onChange=${(/** @type {ControlEvent<HTMLSelectElement>} */ e) => onSelect({ monitor_id: monitor.monitor_id, tag: e.currentTarget.value })}>
        ${monitor.tags.map((/** @type {AssetTag} */ t) => html`<option value=${t.tag_name}>${t.tag_name}${t.tag_unit ? ` (${t.tag_unit})` : ""}</option>`)}
      </${Field}>
      <div class="field">
        <span class="label-like" id="trend-range-label">Range</span>
        <div class="seg" role="group" aria-labelledby="trend-range-label">
          ${PRESETS.map((p) => html`<button type="button" aria-pressed=${!zoomed && preset === p.key ? "true" : "false"} onClick=${() => choosePreset(p.key)}>${p.label}</button>`)}
        </div>
      </div>
      <${Field} label="Add a tag" name="trend_add" as="select" value="" disabled=${more.length >= 7}
        onChange=${(/** @type {ControlEvent<HTMLSelectElement>} */ e) => {
          const [monitor_id, ...rest] = e.currentTarget.value.split("|");
          if (monitor_id) setMore((list) => [...list, { monitor_id, tag: rest.join("|") }].slice(0, 7));
        }}>
        <option value="">${more.length >= 7 ? "Eight tags at most" : "Choose a tag"}</option>
        ${monitors.flatMap((/** @type {AssetMonitor} */ m) =>
          m.tags
            .filter((/** @type {AssetTag} */ t) => !(m.monitor_id === monitor.monitor_id && t.tag_name === tag.tag_name) && !more.some((x) => x.monitor_id === m.monitor_id && x.tag === t.tag_name))
            .map((/** @type {AssetTag} */ t) => html`<option value=${`${m.monitor_id}|${t.tag_name}`}>${t.tag_name}${t.tag_unit ? ` (${t.tag_unit})` : ""} · ${m.monitor_name}</option>`),
        )}
      </${Field}>
      <${Field} label="Compare with" name="trend_compare" as="select" value=${compare} onChange=${(/** @type {ControlEvent<HTMLSelectElement>} */ e) => setCompare(e.currentTarget.value)}>
        ${COMPARE.map((c) => html`<option value=${c.key}>${c.label}</option>`)}
      </${Field}>
      <div class="field">
        <span class="label-like">Zoom</span>
        <div class="seg">
          <button type="button" disabled=${!zoomed} onClick=${() => setZooms((z) => z.slice(0, -1))}>Zoom out</button>
          <button type="button" disabled=${!zoomed} onClick=${() => setZooms([])}>Reset zoom</button>
        </div>
      </div>
    </div>
    ${more.length > 0
      ? html`<p class="row trend-more">${more.map(
          (sel) => html`<button type="button" class="small-button" aria-label=${`Remove ${sel.tag} from the trend`} onClick=${() => setMore((list) => list.filter((x) => x !== sel))}>${sel.tag} ✕</button>`,
        )}</p>`
      : null}
    <p class="legend-note" aria-live="polite">
      ${`${time(shown.from)} – ${time(shown.to)}${zoomed ? ` (zoomed ${zooms.length}×)` : ""} · `}
      ${h ? `${h.points.length} points, ${resolutionOf(h)}` : history.loading ? "loading…" : ""}
      ${thresholds.length ? ` · limits: ${thresholds.map((l) => l.label).join(", ")}` : ""}
    </p>
    <${ErrorNote} error=${history.error} />
    <div ref=${box} class="trend-box">
      ${h && h.points.length === 0 ? html`<p class="muted empty-chart">No readings of ${tag.tag_name} in this range.</p>` : null}
      ${h && h.points.length > 0
        ? html`<${TrendChart}
            history=${h}
            unit=${unit}
            label=${tag.tag_name}
            title=${`${monitor.monitor_name} · ${tag.tag_name}`}
            thresholds=${thresholds}
            markers=${markers}
            height=${280}
            onZoom=${onZoom}
            onPick=${onChartPick}
            span=${shown}
            others=${others.data ?? []}
            compared=${shift && earlier.data ? { label: `${COMPARE.find((c) => c.key === compare)?.label} (${time(shown.from - shift)} – ${time(shown.to - shift)})`, shiftMs: shift, history: earlier.data } : null}
          />`
        : null}
    </div>
    <div class="row trend-export">
      <a class="button" href=${routeUrl(`/_cm/monitors/${encodeURIComponent(monitor.monitor_id)}/_export`, { from: iso(Math.max(shown.from, shown.to - EXPORT_MAX_MS)), to: iso(shown.to) })} download>Export CSV</a>
      <button type="button" onClick=${() => savePng(box.current, `${monitor.monitor_name} ${tag.tag_name}`)}>Save PNG</button>
      <span class="hint">CSV: every tag of ${monitor.monitor_name}, one row a time (UTC)${shown.to - shown.from > EXPORT_MAX_MS ? ", the last 31 days of this range (the export's longest)" : ", this range"}.</span>
    </div>
    <p class="hint">Drag across the chart to zoom in (more detail at each step); click a time to see the vibration spectrum captured nearest to it.</p>
  </div>`;
}
