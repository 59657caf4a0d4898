// @ts-check
// Charts on uPlot (small and fast: a canvas, no DOM per point). No chart is drawn from more
// points than it has pixels: trends ask the history route for about one bucket per pixel
// (`pointsFor`), and zooming asks again for the narrower range (more detail as one zooms).
import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import { clockKey, displayZone, formatTime } from "./prefs.js";
import { html, unitOf } from "./ui.js";

/** @typedef {import("./types.js").History} History */
/**
 * A horizontal line across a chart: a limit's value, its label and colour.
 * @typedef {{ value: number, label: string, color?: string }} Line
 */
/**
 * A vertical marker: its time (epoch ms), label and colour.
 * @typedef {{ at: number, label: string, color?: string }} Marker
 */

const GREY = "#4d5963";
/**
 * The last value of a series at or before `idx` (joined series hold nulls at the others' times).
 * @param {uPlot.AlignedData[number] | undefined} values
 * @param {number | null} idx
 * @returns {number | null}
 */
function heldValue(values, idx) {
  if (!values || idx === null) return null;
  for (let i = idx; i >= 0; i--) {
    const v = values[i];
    if (v !== null && v !== undefined) return Number(v);
  }
  return null;
}
/** The colours of the tags added to a trend (the first tag is the calm grey): told apart, each beside its name in the legend. */
const TAG_COLORS = ["#1a5fb4", "#8f5902", "#2a7b3a", "#813d9c", "#a51d2d", "#0b7285", "#986a44"];
/** uPlot's bar paths; its types mark the builder optional, its ESM build always has it. */
export const bars = /** @type {NonNullable<typeof uPlot.paths.bars>} */ (uPlot.paths.bars);
const BAND = "rgba(77, 89, 99, 0.15)";
/** @type {Record<string, string>} */
export const THRESHOLD_COLORS = { caution: "#c66a00", warning: "#c01c28", high: "#c01c28", medium: "#c66a00", low: "#8a7300" };

/** Buckets to ask for a chart `width` pixels wide: one per pixel, within the route's 1..10000. */
export const pointsFor = (/** @type {number | undefined} */ width) => Math.max(10, Math.min(10_000, Math.round(width || 800)));

/** Width of an element, or a default before layout. */
const widthOf = (/** @type {HTMLElement | null | undefined} */ el) => Math.max(280, Math.floor(el?.clientWidth || 800));

const DAY_S = 86_400;

/** A colour of the theme (console.css's variables), read when a chart is made. */
const themeColor = (/** @type {string} */ name, /** @type {string} */ fallback) => getComputedStyle(document.documentElement).getPropertyValue(name).trim() || fallback;

/**
 * A value axis in the theme's ink and grid (the dark theme's too), labelled with its unit.
 * @param {string} label
 * @param {number} size
 * @returns {uPlot.Axis}
 */
export function valueAxis(label, size) {
  return { label: unitOf(label), size, stroke: themeColor("--text", "#1f262e"), grid: { stroke: themeColor("--line", "#c9ced4"), width: 1 }, ticks: { stroke: themeColor("--line", "#c9ced4") } };
}
/**
 * A time axis in the display zone and clock, like every time of the console (lib/prefs.js): its
 * label names the zone once; ticks read `14:05` (the date, `2026-11-27`, where a day starts or
 * the ticks are days apart). The legend's time carries the zone. Charts re-draw on `clockKey`.
 * @param {string | null} [siteZone]
 * @returns {{ axis: uPlot.Axis, legend: uPlot.Series, key: string, tzDate: (ts: number) => Date }}
 */
export function timeAxis(siteZone = null) {
  const zone = displayZone(siteZone);
  /** @type {uPlot.Axis.Values} */
  const values = (_u, ticks, _ax, _space, incr) =>
    ticks.map((t, i) => {
      const day = formatTime(t * 1000, { siteZone, label: false }).slice(0, 10);
      if (incr >= DAY_S) return day;
      const clock = formatTime(t * 1000, { siteZone, date: false, label: false, seconds: incr < 60 });
      const before = i > 0 ? formatTime(ticks[i - 1] * 1000, { siteZone, label: false }).slice(0, 10) : null;
      return before === day ? clock : `${day}\n${clock}`;
    });
  return {
    axis: { label: `Time (${zone})`, values, space: 70, stroke: themeColor("--text", "#1f262e"), grid: { stroke: themeColor("--line", "#c9ced4"), width: 1 }, ticks: { stroke: themeColor("--line", "#c9ced4") } },
    legend: { value: (_u, t) => (t === null || t === undefined ? "—" : formatTime(t * 1000, { siteZone, seconds: true })) },
    key: clockKey(siteZone),
    // Ticks fall on the zone's whole hours and days.
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), zone),
  };
}

/**
 * Mounts a uPlot in the returned ref's element with `makeOpts(width)` and `data`, re-made when
 * `key` changes and given new data otherwise; resized with its container.
 * @param {(width: number) => uPlot.Options} makeOpts
 * @param {uPlot.AlignedData} data
 * @param {unknown} key
 */
export function usePlot(makeOpts, data, key) {
  const box = useRef(/** @type {HTMLDivElement | null} */ (null));
  const plot = useRef(/** @type {uPlot | null} */ (null));
  useEffect(() => {
    if (!box.current) return undefined;
    plot.current = new uPlot(makeOpts(widthOf(box.current)), data, box.current);
    const ro = new ResizeObserver(() => plot.current?.setSize({ width: widthOf(box.current), height: plot.current.height }));
    ro.observe(box.current);
    return () => {
      ro.disconnect();
      plot.current?.destroy();
      plot.current = null;
    };
  }, [key]);
  useEffect(() => {
    if (plot.current) plot.current.setData(data);
  }, [data]);
  return box;
}

/**
 * Marks a chart's element with the time (performance.now(), ms since the page's start) of the
 * first frame painted with data: the "first meaningful paint" bench:console reads.
 * @param {import("preact").RefObject<HTMLElement | null>} box
 * @param {number} count
 */
function usePaintedMark(box, count) {
  useEffect(() => {
    const el = box.current;
    if (!el || count === 0 || el.dataset.paintedAt) return;
    requestAnimationFrame(() => {
      el.dataset.paintedAt = String(Math.round(performance.now()));
    });
  }, [count]);
}

/**
 * Draws horizontal lines (thresholds) across the plot, labelled at the right.
 * @param {Line[]} lines
 * @returns {uPlot.Plugin}
 */
function thresholdsPlugin(lines) {
  return {
    hooks: {
      draw: [
        (u) => {
          const { ctx } = u;
          const { left, top, width, height } = u.bbox;
          const ground = themeColor("--field", "#fff");
          ctx.save();
          for (const line of lines) {
            const y = u.valToPos(line.value, "y", true);
            if (y < top || y > top + height) continue;
            ctx.strokeStyle = line.color ?? THRESHOLD_COLORS.warning;
            ctx.setLineDash([6, 4]);
            ctx.lineWidth = 1.5 * devicePixelRatio;
            ctx.beginPath();
            ctx.moveTo(left, y);
            ctx.lineTo(left + width, y);
            ctx.stroke();
            ctx.setLineDash([]);
            ctx.font = `${11 * devicePixelRatio}px system-ui, sans-serif`;
            ctx.textAlign = "right";
            // On the chart's ground, so that a trace running through the label does not hide it.
            const w = ctx.measureText(line.label).width;
            const h = 13 * devicePixelRatio;
            ctx.fillStyle = ground;
            ctx.fillRect(left + width - 6 - w, y - 3 - h, w + 4, h);
            ctx.fillStyle = line.color ?? THRESHOLD_COLORS.warning;
            ctx.fillText(line.label, left + width - 4, y - 4 - 2 * devicePixelRatio);
          }
          ctx.restore();
        },
      ],
    },
  };
}

/**
 * Draws vertical markers (an alert's opening, a chosen capture).
 * @param {Marker[]} markers
 * @returns {uPlot.Plugin}
 */
function markersPlugin(markers) {
  return {
    hooks: {
      draw: [
        (u) => {
          const { ctx } = u;
          const { top, height } = u.bbox;
          const ground = themeColor("--field", "#fff");
          ctx.save();
          ctx.font = `${11 * devicePixelRatio}px system-ui, sans-serif`;
          // Labels never print over each other ("Opened" and "Closed" a second apart): a label
          // that would meet the one before it goes a line lower.
          /** @type {{ right: number, row: number }[]} */
          const placed = [];
          for (const m of [...markers].sort((a, b) => a.at - b.at)) {
            const x = u.valToPos(m.at / 1000, "x", true);
            ctx.strokeStyle = m.color ?? "#1a5fb4";
            ctx.lineWidth = 1.5 * devicePixelRatio;
            ctx.beginPath();
            ctx.moveTo(x, top);
            ctx.lineTo(x, top + height);
            ctx.stroke();
            const width = ctx.measureText(m.label).width;
            let row = 0;
            while (placed.some((p) => p.row === row && p.right > x)) row++;
            placed.push({ right: x + 4 + width + 4 * devicePixelRatio, row });
            const baseline = top + (12 + row * 13) * devicePixelRatio;
            ctx.fillStyle = ground;
            ctx.fillRect(x + 2, baseline - 11 * devicePixelRatio, width + 4, 13 * devicePixelRatio);
            ctx.fillStyle = ctx.strokeStyle;
            ctx.fillText(m.label, x + 4, baseline);
          }
          ctx.restore();
        },
      ],
    },
  };
}

/** The y range of the data widened to hold the limits, unless a limit is far off (it would flatten the trend). */
/**
 * @param {number | null} min
 * @param {number | null} max
 * @param {Line[]} thresholds
 * @returns {[number, number]}
 */
function yRangeWith(min, max, thresholds) {
  if (min === null || max === null || !Number.isFinite(min) || !Number.isFinite(max)) return [0, 1];
  const span = Math.max(max - min, Math.abs(max) * 0.05, 1e-6);
  let lo = min;
  let hi = max;
  for (const t of thresholds) {
    if (t.value > hi && t.value - min <= 4 * span) hi = t.value;
    if (t.value < lo && max - t.value <= 4 * span) lo = t.value;
  }
  const pad = (hi - lo) * 0.06 || 1;
  return [lo - pad, hi + pad];
}

/**
 * A trend of one tag from a history answer (docs/api-tour.md, "Looking back"): the mean as a line,
 * min..max as a band (so that a spike survives the zoom-out), thresholds as dashed lines, markers
 * as verticals. Selecting a range with the mouse calls `onZoom(fromMs, toMs)`; the caller fetches
 * that range again at one bucket per pixel.
 * `span`: the range asked, drawn whole however much of it holds readings (a year is a year wide).
 * `compared`: the same tag in an earlier period, shifted onto this one (its label says which).
 * `others`: more tags on the same time axis, each on the scale of its unit (an axis on the right
 * for each unit other than the first tag's).
 * @param {{ history: History | null | undefined, unit?: string, label?: string, thresholds?: Line[], markers?: Marker[], height?: number, onZoom?: (fromMs: number, toMs: number) => void, onPick?: (atMs: number) => void, title?: string, span?: { from: number, to: number }, compared?: { label: string, shiftMs: number, history: History } | null, others?: { label: string, unit: string, history: History }[] }} props
 */
export function TrendChart({ history, unit = "", label = "value", thresholds = [], markers = [], height = 260, onZoom, onPick, title, span, compared, others = [] }) {
  const points = history?.points ?? [];
  /** @type {uPlot.AlignedData} */
  const own = [points.map((p) => p.timestamp / 1000), points.map((p) => p.value), points.map((p) => p.min), points.map((p) => p.max)];
  const before = compared?.history.points ?? [];
  /** @type {uPlot.AlignedData[]} */
  const more = [
    ...others.map((o) => /** @type {uPlot.AlignedData} */ ([o.history.points.map((p) => p.timestamp / 1000), o.history.points.map((p) => p.value)])),
    ...(compared ? [/** @type {uPlot.AlignedData} */ ([before.map((p) => (p.timestamp + compared.shiftMs) / 1000), before.map((p) => p.value)])] : []),
  ];
  /** @type {uPlot.AlignedData} */
  const data = more.length ? uPlot.join([own, ...more]) : own;
  const clock = timeAxis();
  const scaleOf = (/** @type {string} */ u) => (u === unit ? "y" : `unit:${u}`);
  const otherUnits = [...new Set(others.map((o) => o.unit).filter((u) => u !== unit))];
  const key = `${label}|${unit}|${JSON.stringify(thresholds)}|${JSON.stringify(markers)}|${height}|${clock.key}|${span ? `${span.from}-${span.to}` : ""}|${compared?.label ?? ""}|${others.map((o) => o.label).join(",")}`;
  let zoomedAt = 0;
  const box = usePlot(
    (width) => ({
      width,
      height,
      title,
      tzDate: clock.tzDate,
      cursor: { drag: { x: true, y: false, setScale: false } },
      // The limits stay in view (ISA-101: a value is read against its limits), within 4× the data's span.
      scales: {
        x: { time: true, ...(span ? { range: () => /** @type {[number, number]} */ ([span.from / 1000, span.to / 1000]) } : {}) },
        y: { range: (_u, min, max) => yRangeWith(min, max, thresholds) },
        ...Object.fromEntries(otherUnits.map((u) => [scaleOf(u), {}])),
      },
      axes: [clock.axis, valueAxis(unit, 60), ...otherUnits.map((u) => ({ ...valueAxis(u, 60), scale: scaleOf(u), side: 1, grid: { show: false } }))],
      series: [
        clock.legend,
        { label, stroke: themeColor("--ok", GREY), width: 1.5, spanGaps: more.length > 0, value: (_u, v) => (v === null || v === undefined ? "—" : `${v.toFixed(3)} ${unit}`) },
        { label: "min", stroke: "transparent", value: (_u, v) => (v == null ? "—" : `${v.toFixed(3)} ${unit}`) },
        { label: "max", stroke: "transparent", value: (_u, v) => (v == null ? "—" : `${v.toFixed(3)} ${unit}`) },
        ...others.map((o, i) => ({
          label: o.label,
          scale: scaleOf(o.unit),
          stroke: TAG_COLORS[i % TAG_COLORS.length],
          width: 1.5,
          spanGaps: true,
          // Its readings fall at other times than the first tag's: the legend reads its latest at or before the cursor.
          value: (/** @type {uPlot} */ u, /** @type {number | null} */ v, /** @type {number} */ si, /** @type {number | null} */ idx) => {
            const held = v ?? heldValue(u.data[si], idx);
            return held == null ? "—" : `${held.toFixed(3)} ${unitOf(o.unit)}`;
          },
        })),
        ...(compared
          ? [
              {
                label: compared.label,
                stroke: themeColor("--stale", "#7a6f9b"),
                width: 1.5,
                dash: [6, 4],
                spanGaps: true,
                value: (/** @type {uPlot} */ u, /** @type {number | null} */ v, /** @type {number} */ si, /** @type {number | null} */ idx) => {
                  const held = v ?? heldValue(u.data[si], idx);
                  return held == null ? "—" : `${held.toFixed(3)} ${unitOf(unit)}`;
                },
              },
            ]
          : []),
      ],
      bands: [{ series: [3, 2], fill: BAND }],
      plugins: [thresholdsPlugin(thresholds), markersPlugin(markers)],
      hooks: {
        setSelect: [
          (u) => {
            if (u.select.width < 3) return;
            const from = u.posToVal(u.select.left, "x") * 1000;
            const to = u.posToVal(u.select.left + u.select.width, "x") * 1000;
            u.setSelect({ left: 0, width: 0, top: 0, height: 0 }, false);
            zoomedAt = performance.now();
            onZoom?.(Math.round(from), Math.round(to));
          },
        ],
        ready: [
          // The legend reads the latest values until the pointer is on the chart (not "—").
          (u) => {
            const own = u.data[1] ?? [];
            let idx = own.length - 1;
            while (idx >= 0 && own[idx] == null) idx--;
            if (idx >= 0) u.setLegend({ idx });
          },
          (u) => {
            if (!onPick) return;
            u.over.addEventListener("click", () => {
              // The mouse-up that ends a drag-to-zoom is also a click: not a pick.
              if (performance.now() - zoomedAt < 300) return;
              const idx = u.cursor.idx;
              if (idx !== null && idx !== undefined) onPick(Math.round(u.data[0][idx] * 1000));
            });
          },
        ],
      },
    }),
    data,
    key,
  );
  usePaintedMark(box, points.length);
  return html`<div class="chart" ref=${box} role="img" aria-label=${`${title ?? label} trend, ${points.length} points${unit ? ` in ${unit}` : ""}`}></div>`;
}

/**
 * Bars over time (alarm rate per 10 minutes, energy per interval): `times` epoch ms, `values`,
 * an optional `limit` line (e.g. the flood threshold of 10 per 10 minutes).
 * @param {{ times: number[], values: (number | null)[], unit?: string, label?: string, limit?: Line, height?: number, title?: string }} props
 */
export function BarChart({ times, values, unit = "", label = "value", limit, height = 200, title }) {
  /** @type {uPlot.AlignedData} */
  const data = [times.map((t) => t / 1000), values];
  const clock = timeAxis();
  const key = `${label}|${unit}|${limit?.value}|${height}|${clock.key}`;
  const box = usePlot(
    (width) => ({
      width,
      height,
      title,
      tzDate: clock.tzDate,
      // Bars start at zero: a bar's height is its amount (a 1 % difference must not look like double).
      scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(max ?? 0, limit?.value ?? 0, 1e-9) * 1.1] } },
      axes: [clock.axis, valueAxis(unit, 50)],
      series: [clock.legend, { label, stroke: themeColor("--ok", GREY), fill: "rgba(128,140,150,0.35)", paths: bars({ size: [0.8, 40] }), points: { show: false } }],
      plugins: limit ? [thresholdsPlugin([limit])] : [],
    }),
    data,
    key,
  );
  return html`<div class="chart" ref=${box} role="img" aria-label=${`${title ?? label} chart`}></div>`;
}
