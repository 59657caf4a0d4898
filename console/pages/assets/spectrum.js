// @ts-check
// Vibration spectra of the asset page: the spectrum of a chosen capture (the one nearest to a time
// picked on the trend, or chosen from the list of capture times), its peaks labelled with their
// frequency, cursors at 1×, 2× and 3× the running speed, its envelope spectrum beside it with
// cursors at the bearing's defect frequencies, and a waterfall of the last captures.
//
// A spectrum is drawn straight from its bins with uPlot (which draws a dense line as one min/max
// stroke per pixel column), so 32,768 bins draw in a few milliseconds; the chart's element carries
// `data-draw-ms` (bins to pixels, the JSON already parsed), `data-bins` and `data-range-hz` (the
// upper end drawn) for a benchmark to read.
import { useEffect, useRef, useState } from "preact/hooks";
import uPlot from "uplot";
import { api, get } from "../../lib/api.js";
import { clockKey, displayZone, formatTime } from "../../lib/prefs.js";
import { ErrorNote, Field, html, num, time, useData } from "../../lib/ui.js";

const GREY = "#4d5963";
const CURSOR = "#33475b";
const SELECTED = "#1a5fb4";
const PANEL = "#f8f9fa";
const CAPTURE_HEADER = "X-Capture-Timestamp";
const BAND_HEADER = "X-Envelope-Band";
const BEARING = "#a2461d";
/** Peaks labelled on the chart, strongest first; the table lists more. */
const LABELLED_PEAKS = 6;
const LISTED_PEAKS = 12;
const CAPTURE_CHOICES = 200;

/** @typedef {import("../../lib/types.js").AssetMonitor} AssetMonitor */
/** @typedef {import("../../lib/types.js").AssetTag} AssetTag */
/** @typedef {import("../../lib/types.js").SpectrumBin} SpectrumBin */
/** @typedef {import("../../lib/api.js").Failure} Failure */
/** @template {EventTarget} T @typedef {import("../../lib/types.js").ControlEvent<T>} ControlEvent */
/**
 * One capture: its time (epoch ms, the service's answer), bins, refined peaks (null when they
 * could not be read, with the reason).
 * @typedef {{ ts: number | null, bins: SpectrumBin[], peaks: import("../../lib/types.js").SpectrumPeak[] | null, peaksError: Failure | null, envelope: Envelope | null }} Capture
 */
/**
 * A capture's envelope spectrum: the band demodulated (X-Envelope-Band, `<low>-<high>` Hz), its bins and peaks.
 * @typedef {{ band: string, bins: SpectrumBin[], peaks: import("../../lib/types.js").SpectrumPeak[] }} Envelope
 */
/**
 * A cursor at a frequency, with its label.
 * @typedef {{ freq: number, label: string }} Cursor
 */
/**
 * A peak to mark: frequency (Hz) and amplitude.
 * @typedef {{ freq: number, value: number }} Peak
 */
/**
 * A trace of the waterfall: a capture's time (epoch ms) and bins.
 * @typedef {{ ts: number, bins: SpectrumBin[] }} Trace
 */
/**
 * The spectrum's choice: monitor, tag and axis.
 * @typedef {{ monitor_id: string | undefined, tag: string | undefined, axis: string }} SpectrumChoice
 */

/** The tag a vibration capture is most likely of: a velocity or acceleration unit, else the first. */
export const vibrationTag = (/** @type {AssetMonitor | undefined} */ monitor) => monitor?.tags.find((/** @type {AssetTag} */ t) => /mm\/s|in\/s|^g$|m\/s²|m\/s2/i.test(t.tag_unit ?? ""))?.tag_name ?? monitor?.tags[0]?.tag_name;

/**
 * One capture's spectrum and peaks; `ts` is the capture the service answered with (X-Capture-Timestamp).
 * @param {{ monitor_id: string, tag: string, axis: string, timestamp: number }} capture
 * @returns {Promise<Capture>}
 */
async function loadCapture({ monitor_id, tag, axis, timestamp }) {
  const query = { monitor_id, tag, axis, timestamp, nearest: "true" };
  const [spectrum, peaks, envelope] = await Promise.all([
    api("GET", "/_cm/fft/_spectrum", { query, raw: true }),
    // The peaks add the refined frequencies and the running speed; without them the flagged bins do.
    api("GET", "/_cm/fft/_peaks", { query, raw: true }).catch((/** @type {Failure} */ error) => ({ error })),
    loadEnvelope(query).catch(() => null),
  ]);
  const ts = Number(spectrum.headers.get(CAPTURE_HEADER)) || null;
  const bins = await spectrum.json();
  const peakList = peaks.error ? null : await peaks.json();
  return { ts, bins, peaks: peakList, peaksError: peaks.error ?? null, envelope };
}

/**
 * The envelope spectrum of the same capture in the service's default band, and its peaks; null
 * for a capture stored without its samples.
 * @param {Record<string, string | number>} query
 * @returns {Promise<Envelope | null>}
 */
async function loadEnvelope(query) {
  const ask = { ...query, envelope: "true" };
  const [spectrum, peaks] = await Promise.all([api("GET", "/_cm/fft/_spectrum", { query: ask, raw: true }), get("/_cm/fft/_peaks", ask)]);
  const bins = await spectrum.json();
  return bins.length ? { band: spectrum.headers.get(BAND_HEADER) ?? "", bins, peaks } : null;
}

/**
 * The bearing's defect frequencies (Hz) at running speed `f` from the monitor's `specs.bearing`,
 * the formulas the service uses (services/cm/faults.ts); empty without a usable geometry.
 * @param {Record<string, unknown> | undefined} specs
 * @param {number | null} f
 * @returns {Cursor[]}
 */
export function bearingCursors(specs, f) {
  const raw = /** @type {Record<string, unknown>} */ (specs?.bearing && typeof specs.bearing === "object" ? specs.bearing : (specs ?? {}));
  const n = Number(raw.rolling_elements ?? raw.number_of_balls);
  const d = Number(raw.ball_diameter);
  const D = Number(raw.pitch_diameter);
  const r = (d / D) * Math.cos((Number(raw.contact_angle ?? 0) * Math.PI) / 180);
  if (!f || !(n >= 1) || !(d > 0) || !(D > d) || !Number.isFinite(r)) return [];
  return [
    { label: "FTF", freq: (f / 2) * (1 - r) },
    { label: "BSF", freq: ((D * f) / (2 * d)) * (1 - r * r) },
    { label: "BPFO", freq: ((n * f) / 2) * (1 - r) },
    { label: "BPFI", freq: ((n * f) / 2) * (1 + r) },
  ];
}

/**
 * Peaks to mark: the service's refined peaks, else the bins it flagged `peak: true`; strongest first.
 * @param {Capture} capture
 * @returns {Peak[]}
 */
function peaksOf(capture) {
  if (capture.peaks && capture.peaks.length) return capture.peaks.map((p) => ({ freq: p.freq, value: p.tag_value }));
  return capture.bins
    .filter((b) => b.peak)
    .map((b) => ({ freq: b.freq, value: b.tag_value }))
    .sort((a, b) => b.value - a.value);
}

/** Running speed in Hz: `fundamental_freq` of the peaks (the asset's rotating_speed, else the service's own pick). */
const runningSpeedOf = (/** @type {Capture} */ capture) => {
  const f = capture.peaks?.[0]?.fundamental_freq;
  return typeof f === "number" && f > 0 ? f : null;
};

const hz = (/** @type {number} */ f) => num(f, "Hz", f < 100 ? 2 : 1);

/**
 * Labels over the plot, one per peak, lifted to a second or third row where they would overlap.
 * @param {uPlot} u
 * @param {HTMLElement} layer
 * @param {Peak[]} peaks
 */
function placePeakLabels(u, layer, peaks) {
  layer.textContent = "";
  const rowsEnd = [-Infinity, -Infinity, -Infinity];
  // The x scale is set once the plot has data, which is when it draws.
  const [xMin, xMax] = /** @type {[number, number]} */ ([u.scales.x.min, u.scales.x.max]);
  const shown = peaks.filter((p) => p.freq >= xMin && p.freq <= xMax).sort((a, b) => a.freq - b.freq);
  for (const p of shown) {
    const x = u.valToPos(p.freq, "x");
    const y = Math.max(14, u.valToPos(p.value, "y"));
    const text = hz(p.freq);
    const w = text.length * 6.5 + 6;
    const row = rowsEnd.findIndex((end) => x - w / 2 > end + 2);
    const r = row === -1 ? 0 : row;
    rowsEnd[r] = x + w / 2;
    const el = document.createElement("span");
    el.className = "peak-label";
    el.dataset.freq = String(p.freq);
    el.textContent = text;
    el.style.left = `${x}px`;
    el.style.top = `${Math.max(0, y - 18 - r * 15)}px`;
    layer.append(el);
  }
}

/**
 * Labelled verticals: dashed ones at 1×, 2×, 3× the running speed (labels at the foot), solid
 * ones at the bearing's defect frequencies (labels at the head, staggered).
 * @param {uPlot} u
 * @param {Cursor[]} cursors
 * @param {{ color: string, dashed: boolean }} style
 */
function drawCursors(u, cursors, { color, dashed }) {
  const { ctx } = u;
  const { top, height } = u.bbox;
  const dpr = uPlot.pxRatio;
  ctx.save();
  ctx.strokeStyle = color;
  ctx.fillStyle = color;
  ctx.lineWidth = dpr;
  if (dashed) ctx.setLineDash([4 * dpr, 3 * dpr]);
  ctx.font = `${11 * dpr}px system-ui, sans-serif`;
  cursors.forEach((c, i) => {
    if (c.freq < /** @type {number} */ (u.scales.x.min) || c.freq > /** @type {number} */ (u.scales.x.max)) return;
    const x = u.valToPos(c.freq, "x", true);
    ctx.beginPath();
    ctx.moveTo(x, top);
    ctx.lineTo(x, top + height);
    ctx.stroke();
    ctx.fillText(c.label, x + 3 * dpr, dashed ? top + height - 4 * dpr : top + (12 + 12 * (i % 2)) * dpr);
  });
  ctx.restore();
}

/** The running speed's cursors: 1×, 2×, 3×. */
const speedCursors = (/** @type {number | null} */ speed) => (speed ? [1, 2, 3].map((k) => ({ freq: k * speed, label: `${k}×` })) : []);

/**
 * Small triangles on the labelled peaks.
 * @param {uPlot} u
 * @param {Peak[]} peaks
 */
function drawPeakMarks(u, peaks) {
  const { ctx } = u;
  const dpr = uPlot.pxRatio;
  ctx.save();
  ctx.fillStyle = GREY;
  for (const p of peaks) {
    if (p.freq < /** @type {number} */ (u.scales.x.min) || p.freq > /** @type {number} */ (u.scales.x.max)) continue;
    const x = u.valToPos(p.freq, "x", true);
    const y = Math.max(u.bbox.top + 6 * dpr, u.valToPos(p.value, "y", true));
    ctx.beginPath();
    ctx.moveTo(x, y - 2 * dpr);
    ctx.lineTo(x - 4 * dpr, y - 9 * dpr);
    ctx.lineTo(x + 4 * dpr, y - 9 * dpr);
    ctx.closePath();
    ctx.fill();
  }
  ctx.restore();
}

/**
 * A spectrum as a uPlot line from its bins: x in Hz (drag to zoom, double-click for the whole
 * range), y in the tag's unit; peaks labelled, running-speed cursors. Shows 0..`maxFreq` at first.
 * `cursors`: more verticals, solid and labelled (the envelope's bearing frequencies); `kind`: the
 * element's class, `spectrum-chart` or `envelope-chart` (what tests and bench:console pick by).
 * @param {{ bins: SpectrumBin[], unit: string, peaks: Peak[], speed: number | null, cursors?: Cursor[], maxFreq?: number, height?: number, label: string, kind?: string }} props
 */
export function SpectrumChart({ bins, unit, peaks, speed, cursors = [], maxFreq, height = 300, label, kind = "spectrum-chart" }) {
  const box = useRef(/** @type {HTMLDivElement | null} */ (null));
  const plot = useRef(/** @type {uPlot | null} */ (null));
  const current = useRef({ peaks, speed, cursors });
  current.current = { peaks, speed, cursors };
  useEffect(() => {
    const el = box.current;
    if (!el || !bins || bins.length === 0) return undefined;
    // A benchmark waits for the attribute: it must not read the previous drawing's.
    delete el.dataset.drawMs;
    delete el.dataset.rangeHz;
    const started = performance.now();
    let timed = false;
    const n = bins.length;
    const xs = new Float64Array(n);
    const ys = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      xs[i] = bins[i].freq;
      ys[i] = bins[i].tag_value;
    }
    const layer = document.createElement("div");
    layer.className = "peak-labels";
    const u = new uPlot(
      {
        width: Math.max(280, el.clientWidth - 12),
        height,
        scales: { x: { time: false }, y: { range: (_u, _min, max) => [0, (max || 1) * 1.18] } },
        axes: [{ label: "Frequency (Hz)" }, { label: unit, size: 60 }],
        series: [
          { label: "Frequency", value: (_u, v) => (v == null ? "—" : hz(v)) },
          { label: "Amplitude", stroke: GREY, width: 1, points: { show: false }, value: (_u, v) => (v == null ? "—" : num(v, unit, 4)) },
        ],
        cursor: { drag: { x: true, y: false, setScale: true }, points: { show: false } },
        hooks: {
          ready: [(self) => self.over.append(layer)],
          draw: [
            (self) => {
              drawCursors(self, speedCursors(current.current.speed), { color: CURSOR, dashed: true });
              drawCursors(self, current.current.cursors, { color: BEARING, dashed: false });
              const marked = current.current.peaks.slice(0, LABELLED_PEAKS);
              drawPeakMarks(self, marked);
              placePeakLabels(self, layer, marked);
              if (!timed) {
                timed = true;
                el.dataset.drawMs = (performance.now() - started).toFixed(1);
                el.dataset.bins = String(n);
                el.dataset.rangeHz = String(Math.round(/** @type {number} */ (self.scales.x.max)));
              }
            },
          ],
        },
      },
      [xs, ys],
      el,
    );
    if (maxFreq && maxFreq < xs[n - 1]) u.setScale("x", { min: 0, max: maxFreq });
    plot.current = u;
    const ro = new ResizeObserver(() => u.setSize({ width: Math.max(280, el.clientWidth - 12), height }));
    ro.observe(el);
    return () => {
      ro.disconnect();
      u.destroy();
      plot.current = null;
    };
  }, [bins, unit, maxFreq, height]);
  // New cursors or peaks for the same bins: drawn again, not rebuilt.
  useEffect(() => {
    plot.current?.redraw(false);
  }, [speed, peaks, cursors]);
  return html`<div class=${`chart ${kind}`} ref=${box} role="img" aria-label=${label}></div>`;
}

/**
 * Per pixel column, the largest amplitude of the bins that fall in it (a spectrum's peaks survive).
 * @param {SpectrumBin[]} bins
 * @param {number} fMax
 * @param {number} columns
 */
function columnsOf(bins, fMax, columns) {
  const out = new Float32Array(columns);
  for (const b of bins) {
    if (b.freq > fMax) break;
    const c = Math.min(columns - 1, Math.floor((b.freq / fMax) * columns));
    if (b.tag_value > out[c]) out[c] = b.tag_value;
  }
  return out;
}

/**
 * Round tick steps for a frequency axis of `fMax` over `px` pixels.
 * @param {number} fMax
 * @param {number} px
 */
function tickStep(fMax, px) {
  const raw = (fMax / Math.max(1, px)) * 80;
  const mag = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag;
}

/**
 * A waterfall row's capture time, on the console's one clock (captures may be seconds apart): the
 * zone is named once, in the caption under it, as a chart's axis names it.
 */
const rowTime = (/** @type {number} */ ms) => formatTime(ms, { seconds: true, label: false });

const WF = { left: 118, right: 16, top: 12, bottom: 30, rowGap: 20, traceH: 80, depth: 4 };

/**
 * The waterfall: older captures behind and above, the newest in front; each trace hides what is
 * behind it. `traces` ascending by time. Answers the rows' baselines for hit-testing.
 * @param {HTMLCanvasElement} canvas
 * @param {Trace[]} traces
 * @param {{ fMax: number, selectedTs: number | null | undefined, unit: string, times: string[] }} view `times`: each trace's row time
 */
function drawWaterfall(canvas, traces, { fMax, selectedTs, unit, times }) {
  const cssW = canvas.clientWidth || 800;
  const rows = traces.length;
  const cssH = WF.top + WF.traceH + (rows - 1) * WF.rowGap + WF.bottom;
  const dpr = window.devicePixelRatio || 1;
  canvas.width = Math.round(cssW * dpr);
  canvas.height = Math.round(cssH * dpr);
  canvas.style.height = `${cssH}px`;
  // A canvas element always has a 2d context (it is asked for no other).
  const ctx = /** @type {CanvasRenderingContext2D} */ (canvas.getContext("2d"));
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, cssW, cssH);
  ctx.font = "11px system-ui, sans-serif";
  // The row times are as wide as the clock makes them (a 12-hour time is longer): the traces start after the widest.
  const labels = traces.map((t, i) => `${t.ts === selectedTs ? "▶ " : ""}${times[i]}`);
  const left = Math.max(WF.left, Math.ceil(Math.max(0, ...labels.map((l) => ctx.measureText(l).width))) + 12);
  const plotW = Math.max(50, cssW - left - WF.right - (rows - 1) * WF.depth);
  const columns = Math.round(plotW);
  const cols = traces.map((t) => columnsOf(t.bins, fMax, columns));
  let top = 0;
  for (const c of cols) for (const v of c) if (v > top) top = v;
  top = top || 1;
  /** @type {number[]} */
  const baselines = [];
  ctx.textBaseline = "middle";
  // Back to front: the oldest first, each newer trace painted over it.
  for (let i = 0; i < rows; i++) {
    const depth = rows - 1 - i;
    const x0 = left + depth * WF.depth;
    const y0 = cssH - WF.bottom - depth * WF.rowGap;
    baselines[i] = y0;
    const c = cols[i];
    ctx.beginPath();
    ctx.moveTo(x0, y0);
    for (let k = 0; k < columns; k++) ctx.lineTo(x0 + k, y0 - (c[k] / top) * WF.traceH);
    ctx.lineTo(x0 + columns, y0);
    ctx.closePath();
    ctx.fillStyle = PANEL;
    ctx.fill();
    const selected = traces[i].ts === selectedTs;
    ctx.strokeStyle = selected ? SELECTED : i === rows - 1 ? "#1f262e" : GREY;
    ctx.lineWidth = selected ? 1.6 : 1;
    ctx.stroke();
    ctx.fillStyle = selected ? SELECTED : "#5b6570";
    ctx.textAlign = "right";
    ctx.fillText(labels[i], left - 6, y0);
  }
  // The frequency axis under the newest trace.
  const yAxis = cssH - WF.bottom;
  const step = tickStep(fMax, plotW);
  ctx.fillStyle = "#5b6570";
  ctx.strokeStyle = "#c9ced4";
  ctx.textAlign = "center";
  ctx.textBaseline = "top";
  for (let f = 0; f <= fMax + 1e-9; f += step) {
    const x = left + (f / fMax) * plotW;
    ctx.beginPath();
    ctx.moveTo(x, yAxis);
    ctx.lineTo(x, yAxis + 4);
    ctx.stroke();
    ctx.fillText(`${Number(f.toFixed(6))}`, x, yAxis + 6);
  }
  ctx.textAlign = "left";
  ctx.fillText(`Hz · height: amplitude (${unit || "tag unit"}), largest ${num(top, unit, 3)}`, left + plotW + 4 > cssW - 200 ? left : left + plotW + 4, yAxis + 18 > cssH - 12 ? yAxis + 6 : yAxis + 18);
  return baselines;
}

/**
 * The last `count` captures of a tag and axis, stacked; a click on a trace opens that capture.
 * @param {{ traces: Trace[], unit: string, fMax: number, selectedTs: number | null | undefined, onChoose: (ts: number) => void, label: string }} props
 */
export function Waterfall({ traces, unit, fMax, selectedTs, onChoose, label }) {
  const canvas = useRef(/** @type {HTMLCanvasElement | null} */ (null));
  const baselines = useRef(/** @type {number[]} */ ([]));
  // The rows' times, drawn and named alike (the zone once, at the end).
  const times = traces.map((t) => rowTime(t.ts));
  const key = clockKey(null);
  useEffect(() => {
    const el = canvas.current;
    if (!el || traces.length === 0) return undefined;
    const draw = () => {
      baselines.current = drawWaterfall(el, traces, { fMax, selectedTs, unit, times });
    };
    draw();
    const ro = new ResizeObserver(draw);
    ro.observe(el);
    return () => ro.disconnect();
    // The row times follow the display zone and clock at once.
  }, [traces, fMax, selectedTs, unit, key]);
  /** @param {MouseEvent} e */
  const click = (e) => {
    const y = e.offsetY;
    let best = -1;
    let dist = Infinity;
    baselines.current.forEach((b, i) => {
      // A trace rises above its baseline: the click is on the nearest baseline at or below it.
      const d = b - y;
      if (d >= -4 && d < dist) {
        dist = d;
        best = i;
      }
    });
    if (best >= 0) onChoose(traces[best].ts);
  };
  return html`<canvas class="waterfall" ref=${canvas} role="img" aria-label=${`${label}; rows from the back: ${times.join(", ")} (${displayZone(null)})`} onClick=${click}></canvas>`;
}

const AXES = ["x", "y", "z"];
const WATERFALL_COUNTS = [5, 10, 20];

/**
 * "Show up to" choices: multiples of the running speed when it is known, and the whole range.
 * @param {number | null} speed
 * @param {number} fNyquist
 */
function rangeChoices(speed, fNyquist) {
  /** @type {{ key: string, label: string, fMax: number }[]} */
  const out = [];
  if (speed) for (const k of [10, 20, 50]) if (k * speed < fNyquist) out.push({ key: `${k}x`, label: `${k}× running speed (${hz(k * speed)})`, fMax: k * speed });
  out.push({ key: "full", label: `Whole range (${hz(fNyquist)})`, fMax: fNyquist });
  return out;
}

/**
 * The spectrum of one capture and the waterfall of the last ones, for a monitor, tag and axis.
 * @param {{ monitors: AssetMonitor[], picked: { at: number } | null }} props
 */
export function SpectrumSection({ monitors, picked }) {
  const withCaptures = monitors.filter((/** @type {AssetMonitor} */ m) => m.tags.length > 0);
  const [choice, setChoice] = useState(() => {
    const m = withCaptures.find((/** @type {AssetMonitor} */ x) => x.monitor_type === "condition-monitor") ?? withCaptures[0];
    return { monitor_id: m?.monitor_id, tag: vibrationTag(m), axis: "x" };
  });
  // The capture asked for: a time (nearest=true) or null for the latest.
  const [asked, setAsked] = useState(/** @type {{ at: number, from?: string } | null} */ (null));
  const [rangeKey, setRangeKey] = useState("20x");
  const [count, setCount] = useState(10);
  const monitor = withCaptures.find((/** @type {AssetMonitor} */ m) => m.monitor_id === choice.monitor_id);

  // A time picked on the trend: the capture nearest to it.
  useEffect(() => {
    if (picked) setAsked({ at: picked.at, from: "trend" });
  }, [picked]);

  /** @type {import("../../lib/ui.js").Data<number[]>} */
  const captures = useData(
    () => (monitor ? get("/_cm/fft/_timestamps", { monitor_id: monitor.monitor_id, limit: CAPTURE_CHOICES }) : Promise.resolve([])),
    [monitor?.monitor_id],
    30_000,
  );
  const times = captures.data ?? [];
  const latestTs = times.length ? times[times.length - 1] : null;
  const timestamp = asked ? asked.at : latestTs;
  const capture = useData(
    () =>
      monitor && choice.tag && timestamp !== null
        ? loadCapture({ monitor_id: monitor.monitor_id, tag: choice.tag, axis: choice.axis, timestamp })
        : Promise.resolve(null),
    [monitor?.monitor_id, choice.tag, choice.axis, timestamp],
  );
  const waterfall = useData(
    async () => {
      if (!monitor || !choice.tag || latestTs === null) return [];
      /** @type {number[]} */
      const last = await get("/_cm/fft/_timestamps", { monitor_id: monitor.monitor_id, limit: count });
      /** @type {SpectrumBin[][]} */
      const spectra = await Promise.all(last.map((ts) => get("/_cm/fft/_spectrum", { monitor_id: monitor.monitor_id, tag: choice.tag, axis: choice.axis, timestamp: ts })));
      return last.map((ts, i) => ({ ts, bins: spectra[i] })).filter((t) => t.bins.length > 0);
    },
    [monitor?.monitor_id, choice.tag, choice.axis, count, latestTs],
  );

  if (withCaptures.length === 0) return html`<p class="muted">This asset has no monitor with tags.</p>`;
  const c = capture.data;
  const unit = monitor?.tags.find((/** @type {AssetTag} */ t) => t.tag_name === choice.tag)?.tag_unit ?? "";
  const speed = c ? runningSpeedOf(c) : null;
  const peaks = c ? peaksOf(c) : [];
  const fNyquist = c && c.bins.length ? c.bins[c.bins.length - 1].freq : 0;
  const ranges = rangeChoices(speed, fNyquist);
  const range = ranges.find((r) => r.key === rangeKey) ?? ranges[0];
  const set = (/** @type {Partial<SpectrumChoice>} */ patch) => setChoice((old) => ({ ...old, ...patch }));

  return html`<div class="spectrum">
    <div class="row">
      <${Field} label="Spectrum monitor" name="fft_monitor" as="select" value=${choice.monitor_id}
        onChange=${(/** @type {ControlEvent<HTMLSelectElement>} */ e) => {
          // The options are the monitors': one is found.
          const m = /** @type {AssetMonitor} */ (withCaptures.find((x) => x.monitor_id === e.currentTarget.value));
          setAsked(null);
          set({ monitor_id: m.monitor_id, tag: vibrationTag(m) });
        }}>
        ${withCaptures.map((/** @type {AssetMonitor} */ m) => html`<option value=${m.monitor_id}>${m.monitor_name}</option>`)}
      </${Field}>
      <${Field} label="Spectrum tag" name="fft_tag" as="select" value=${choice.tag} onChange=${(/** @type {ControlEvent<HTMLSelectElement>} */ e) => set({ tag: e.currentTarget.value })}>
        ${monitor?.tags.map((/** @type {AssetTag} */ t) => html`<option value=${t.tag_name}>${t.tag_name}${t.tag_unit ? ` (${t.tag_unit})` : ""}</option>`)}
      </${Field}>
      <${Field} label="Axis" name="fft_axis" as="select" value=${choice.axis} onChange=${(/** @type {ControlEvent<HTMLSelectElement>} */ e) => set({ axis: e.currentTarget.value })}>
        ${AXES.map((a) => html`<option value=${a}>${a}</option>`)}
      </${Field}>
      <${Field} label="Capture" name="fft_capture" as="select" value=${c?.ts ? String(c.ts) : ""}
        onChange=${(/** @type {ControlEvent<HTMLSelectElement>} */ e) => setAsked(e.currentTarget.value ? { at: Number(e.currentTarget.value), from: "list" } : null)}>
        ${c?.ts && !times.includes(c.ts) ? html`<option value=${String(c.ts)}>${time(c.ts, true)}</option>` : null}
        ${[...times].reverse().map((ts) => html`<option value=${String(ts)}>${time(ts, true)}</option>`)}
        ${times.length === 0 ? html`<option value="">no capture</option>` : null}
      </${Field}>
      <div class="field">
        <span class="label-like" aria-hidden="true"> </span>
        <button type="button" disabled=${!asked} onClick=${() => setAsked(null)}>Latest capture</button>
      </div>
      <${Field} label="Show up to" name="fft_range" as="select" value=${range?.key} onChange=${(/** @type {ControlEvent<HTMLSelectElement>} */ e) => setRangeKey(e.currentTarget.value)}>
        ${ranges.map((r) => html`<option value=${r.key}>${r.label}</option>`)}
      </${Field}>
    </div>
    <${ErrorNote} error=${captures.error ?? capture.error} />
    ${times.length === 0 && captures.data ? html`<p class="muted">No vibration capture from this monitor yet.</p>` : null}
    ${c && c.bins.length === 0 ? html`<p class="muted">No capture of ${choice.tag} on axis ${choice.axis}.</p>` : null}
    ${c && c.bins.length > 0
      ? html`<p class="legend-note" aria-live="polite">
            Capture of <strong>${time(c.ts, true)}</strong>${asked?.from === "trend" ? (asked.at === c.ts ? ", picked on the trend" : `, the nearest to ${time(asked.at, true)} picked on the trend`) : ""}${` · ${c.bins.length.toLocaleString()} bins of ${hz(c.bins[1]?.freq ?? 0)} · `}${speed
              ? html`running speed <strong>${hz(speed)}</strong> (${num(speed * 60, "rpm", 0)}), the peaks' fundamental frequency; cursors at 1×, 2×, 3×`
              : "running speed unknown (no rotating speed on the asset, no peak below 100 Hz): no cursors"}
          </p>
          <div class="spectrum-grid">
            <${SpectrumChart}
              bins=${c.bins}
              unit=${unit}
              peaks=${peaks}
              speed=${speed}
              maxFreq=${range?.fMax}
              label=${`Spectrum of ${choice.tag} axis ${choice.axis} at ${time(c.ts, true)}; peaks at ${peaks.slice(0, LABELLED_PEAKS).map((p) => hz(p.freq)).join(", ")}`}
            />
            <${PeakTable} peaks=${peaks.slice(0, LISTED_PEAKS)} speed=${speed} unit=${unit} />
          </div>
          <p class="hint">Drag across the spectrum to zoom in on a band; double-click for the whole range.</p>`
      : null}
    ${c && c.peaksError ? html`<p class="muted small">Peaks: ${c.peaksError.message}; the flagged bins are marked instead.</p>` : null}
    ${c && c.bins.length > 0 ? html`<${EnvelopeView} capture=${c} monitor=${monitor} speed=${speed} unit=${unit} label=${`${choice.tag} axis ${choice.axis} at ${time(c.ts, true)}`} />` : null}
    <h3 id="waterfall-title">Waterfall</h3>
    <div class="row">
      <${Field} label="Captures in the waterfall" name="wf_count" as="select" value=${String(count)} onChange=${(/** @type {ControlEvent<HTMLSelectElement>} */ e) => setCount(Number(e.currentTarget.value))}>
        ${WATERFALL_COUNTS.map((n) => html`<option value=${String(n)}>last ${n}</option>`)}
      </${Field}>
    </div>
    <${ErrorNote} error=${waterfall.error} />
    ${waterfall.data && waterfall.data.length > 0 && range
      ? html`<figure class="waterfall-box" aria-labelledby="waterfall-title">
          <${Waterfall}
            traces=${waterfall.data}
            unit=${unit}
            fMax=${range.fMax}
            selectedTs=${c?.ts}
            onChoose=${(/** @type {number} */ ts) => setAsked({ at: ts, from: "waterfall" })}
            label=${`Waterfall of ${waterfall.data.length} captures of ${choice.tag} axis ${choice.axis}`}
          />
          <figcaption class="legend-note">
            ${`${waterfall.data.length} captures of ${choice.tag}, axis ${choice.axis}, from ${time(waterfall.data[0].ts, true)} (back) to ${time(waterfall.data[waterfall.data.length - 1].ts, true)} (front), 0–${hz(range.fMax)}. Click a trace to open that capture.`}
          </figcaption>
        </figure>`
      : waterfall.loading
        ? html`<p class="muted">Loading the last captures…</p>`
        : null}
  </div>`;
}

/**
 * The envelope spectrum of the capture beside its spectrum: cursors at the bearing's defect
 * frequencies, and which of them the envelope's peaks match (the service's `bearing`).
 * @param {{ capture: Capture, monitor: AssetMonitor | undefined, speed: number | null, unit: string, label: string }} props
 */
function EnvelopeView({ capture, monitor, speed, unit, label }) {
  const env = capture.envelope;
  if (!env) return html`<p class="muted small">No envelope spectrum: this capture was stored without its samples.</p>`;
  const cursors = bearingCursors(monitor?.specs, speed);
  const peaks = env.peaks.map((p) => ({ freq: p.freq, value: p.tag_value }));
  const matched = env.peaks.filter((p) => p.bearing);
  // Up to the fifth harmonic of the highest defect frequency, else 20× running speed.
  const top = Math.max(0, ...cursors.map((x) => x.freq));
  const maxFreq = top ? 5.5 * top : speed ? 20 * speed : undefined;
  const where = cursors.length ? `; bearing cursors at ${cursors.map((x) => `${x.label} ${hz(x.freq)}`).join(", ")}` : "";
  return html`<h3 id="envelope-title">Envelope spectrum</h3>
    <p class="legend-note">
      Band ${env.band} Hz demodulated (band-pass, Hilbert envelope, its spectrum) ·
      ${cursors.length ? "solid cursors at the bearing's defect frequencies (specs.bearing)" : "no bearing geometry on the monitor (specs.bearing): no bearing cursors"}
    </p>
    <div class="spectrum-grid">
      <${SpectrumChart} bins=${env.bins} unit=${unit} peaks=${peaks} speed=${speed} cursors=${cursors} maxFreq=${maxFreq} height=${240} kind="envelope-chart"
        label=${`Envelope spectrum of ${label}, band ${env.band} Hz${where}`} />
      <table class="grid bearing-peaks">
        <caption>Bearing peaks in the envelope</caption>
        <thead><tr><th scope="col">Defect</th><th scope="col" class="num">Peak</th><th scope="col" class="num">Sidebands</th></tr></thead>
        <tbody>
          ${matched.map(
            (p) => html`<tr>
              <th scope="row">${p.bearing?.harmonic === 1 ? "" : `${p.bearing?.harmonic}×`}${p.bearing?.defect}</th>
              <td class="num">${hz(p.freq)}</td>
              <td class="num">${p.bearing?.sidebands.length ? p.bearing.sidebands.map(hz).join(", ") : "—"}</td>
            </tr>`,
          )}
          ${matched.length === 0 ? html`<tr><td colspan="3" class="muted">none matches a defect frequency</td></tr>` : null}
        </tbody>
      </table>
    </div>`;
}

/** @param {{ peaks: Peak[], speed: number | null, unit: string }} props */
function PeakTable({ peaks, speed, unit }) {
  if (peaks.length === 0) return html`<p class="muted">No peak above the noise floor.</p>`;
  return html`<table class="grid peaks">
    <caption>Peaks, strongest first</caption>
    <thead><tr><th scope="col" class="num">Frequency</th><th scope="col" class="num">Order</th><th scope="col" class="num">Amplitude</th></tr></thead>
    <tbody>
      ${peaks.map(
        (p) => html`<tr>
          <td class="num">${hz(p.freq)}</td>
          <td class="num">${speed ? `${(p.freq / speed).toFixed(2)}×` : "—"}</td>
          <td class="num">${num(p.value, unit, 3)}</td>
        </tr>`,
      )}
    </tbody>
  </table>`;
}
