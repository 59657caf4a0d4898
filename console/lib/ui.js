// @ts-check
// What every view of the console shares: the `html` template tag (preact + htm, no build step),
// data hooks that refresh without a reload, and the few components that carry the ISA-101 rules
// of docs/console.md: calm greys for the normal, colour for the abnormal and never colour alone
// (a word and a symbol beside it), numbers with their units.
import { h } from "preact";
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import htm from "htm";
import { ApiError, get } from "./api.js";
import { formatTime } from "./prefs.js";

/** @typedef {import("./api.js").Failure} Failure */
/** @typedef {import("preact").ComponentChildren} Children */

/**
 * The hash route: `#/assets/abc?tag=x` is `{parts: ["assets", "abc"], query: {tag: "x"}}`.
 * @typedef {{ parts: string[], query: Record<string, string> }} Route
 */

/**
 * What `useData` answers: the data once loaded (kept while a reload runs or fails), the last
 * error, whether a request is running, and a way to ask again now.
 * @template T
 * @typedef {{ data: T | undefined, error: Failure | null, loading: boolean, reload: () => Promise<void> }} Data
 */

export const html = htm.bind(h);

/**
 * Data from the API, reloaded when `deps` change and every `refreshMs` (when given) while the
 * page is visible. `load` is an async function; answers `{data, error, loading, reload}`.
 * An answer arriving after a newer request started is dropped.
 * @template T
 * @param {() => Promise<T>} load
 * @param {unknown[]} [deps]
 * @param {number} [refreshMs]
 * @returns {Data<T>}
 */
export function useData(load, deps = [], refreshMs = 0) {
  const [state, setState] = useState(/** @type {{ data: T | undefined, error: Failure | null, loading: boolean }} */ ({ data: undefined, error: null, loading: true }));
  const seq = useRef(0);
  const reload = useCallback(async () => {
    const mine = ++seq.current;
    try {
      const data = await load();
      if (mine === seq.current) setState({ data, error: null, loading: false });
    } catch (error) {
      if (mine === seq.current) setState((s) => ({ data: s.data, error: /** @type {Failure} */ (error), loading: false }));
    }
  }, deps);
  useEffect(() => {
    setState((s) => ({ ...s, loading: true }));
    void reload();
    if (!refreshMs) return undefined;
    const timer = setInterval(() => {
      if (document.visibilityState === "visible") void reload();
    }, refreshMs);
    return () => clearInterval(timer);
  }, [reload, refreshMs]);
  return { ...state, reload };
}

/**
 * `useData` of one GET.
 * @type {(path: string | null | undefined, query?: import("./api.js").Query, refreshMs?: number) => Data<any>}
 */
export const useGet = (path, query, refreshMs = 0) => useData(() => (path ? get(path, query) : Promise.resolve(undefined)), [path, JSON.stringify(query ?? {})], refreshMs);

/**
 * A view's frame: its heading (each view has one), optional tools beside it, its content.
 * @param {{ title: Children, tools?: Children, children?: Children }} props
 */
export function Page({ title, tools, children }) {
  return html`<section class="page" aria-labelledby="page-title">
    <header class="page-head"><h1 id="page-title">${title}</h1>${tools ? html`<div class="tools">${tools}</div>` : null}</header>
    ${children}
  </section>`;
}

/**
 * What went wrong, in the service's own words.
 * @param {{ error: unknown }} props
 */
export function ErrorNote({ error }) {
  if (!error) return null;
  const text = error instanceof ApiError ? `${error.message}${error.field ? ` (${error.field})` : ""}` : String(/** @type {{ message?: unknown }} */ (error).message ?? error);
  return html`<p class="error" role="alert">⚠ ${text}</p>`;
}

/** @param {{ what?: string }} props */
export function Loading({ what = "Loading" }) {
  return html`<p class="muted" aria-live="polite">${what}…</p>`;
}

/**
 * Severity of an alert: colour, symbol and word together (never colour alone).
 * @type {Record<string, { symbol: string, word: string }>}
 */
const SEVERITY = {
  high: { symbol: "▲", word: "High" },
  medium: { symbol: "◆", word: "Medium" },
  low: { symbol: "●", word: "Low" },
};
/** @param {{ level: string | null | undefined }} props */
export function Severity({ level }) {
  // An unknown or missing level finds no entry (an object's `null` key is "null"): a circle and its word.
  const s = SEVERITY[/** @type {string} */ (level)] ?? { symbol: "○", word: String(level ?? "—") };
  return html`<span class=${`sev sev-${level}`}><span aria-hidden="true">${s.symbol}</span> ${s.word}</span>`;
}

/**
 * A state word with its tone: "normal" is grey; "warning", "alarm" and "critical" carry colour
 * and a symbol. `tone` is one of normal, info, warning, alarm, critical, stale.
 */
/** @type {Record<string, string>} */
const TONE_SYMBOL = { normal: "", info: "ℹ", warning: "◆", alarm: "▲", critical: "▲", stale: "◌" };
/** @param {{ tone?: string, children?: Children }} props */
export function Status({ tone = "normal", children }) {
  const symbol = TONE_SYMBOL[tone] ?? "";
  return html`<span class=${`status tone-${tone}`}>${symbol ? html`<span aria-hidden="true">${symbol} </span>` : null}${children}</span>`;
}

/**
 * A CM value's colour (op 72's `color`) as a tone.
 * @param {unknown} color
 */
export function toneOfColor(color) {
  const c = String(color ?? "").toLowerCase();
  if (["red", "#ff0000", "danger", "critical"].includes(c)) return "critical";
  if (["orange", "amber", "yellow", "#ffa500", "warning"].includes(c)) return "warning";
  if (["grey", "gray", "stale"].includes(c)) return "stale";
  return "normal";
}

/**
 * A unit as people write it: the spec spells kilowatts `KW`; the SI symbol is kW.
 * @param {string} unit
 */
export const unitOf = (unit) => (unit === "KW" ? "kW" : unit);

/**
 * A number with its unit, `digits` significant decimals; "—" for none.
 * @param {unknown} value
 */
export function num(value, unit = "", digits = 2) {
  if (value === null || value === undefined || value === "" || Number.isNaN(Number(value))) return "—";
  const n = Number(value);
  const text = Math.abs(n) >= 1000 ? n.toLocaleString(undefined, { maximumFractionDigits: 0 }) : n.toLocaleString(undefined, { maximumFractionDigits: digits });
  return unit ? `${text} ${unitOf(unit)}` : text;
}

/** A monitor type (the API's `condition-monitor`) in words: "Condition monitor". */
export const monitorKind = (/** @type {string | null | undefined} */ type) => {
  const t = String(type ?? "");
  return t ? `${t[0].toUpperCase()}${t.slice(1).replace(/-/g, " ")}` : "";
};

/**
 * Every time the console shows, in one format with its zone (lib/prefs.js's `formatTime`): to the
 * minute, seconds when `seconds`; `siteZone` the record's site zone when the view knows it.
 * @param {unknown} value epoch ms or a date text
 * @param {string | null} [siteZone]
 */
export function time(value, seconds = false, siteZone = null) {
  return formatTime(value, { seconds, siteZone });
}

/**
 * "3 min ago" of an epoch ms or ISO time.
 * @param {unknown} value
 */
export function age(value, now = Date.now()) {
  const t = typeof value === "number" ? value : Date.parse(String(value));
  if (!Number.isFinite(t)) return "—";
  const s = Math.max(0, Math.round((now - t) / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86400) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86400)} d ago`;
}

/**
 * What a page found wrong in a form before sending it, every problem at once: each input's name
 * (as the service would name it: `triggers[0].minimum_duration`) → what is wrong, in plain words.
 * Thrown by a form's submission like an ApiError, and shown the same way, beside each field.
 */
export class Problems extends Error {
  /** @param {Record<string, string>} map */
  constructor(map) {
    super(Object.values(map)[0] ?? "");
    this.map = map;
  }
}

/**
 * The message of `error` for the input `name`: the page's own problem with it, or the service's
 * error when it names it.
 * @param {unknown} error
 * @param {string | undefined} name
 * @returns {string | null}
 */
export function messageFor(error, name) {
  if (name === undefined) return null;
  if (error instanceof Problems) return error.map[name] ?? null;
  return error instanceof ApiError && error.field === name ? error.message : null;
}

let fieldSeq = 0;
/**
 * A labelled form field; the page's problem with it or the service's error naming it
 * (ApiError.field === name) is shown next to it and announced, under its hint, which stays. `as`
 * is "input" (default), "select" or "textarea"; the other props go to the control.
 * @param {{ label: Children, name?: string, error?: unknown, as?: "input" | "select" | "textarea", children?: Children, hint?: Children, [attribute: string]: unknown }} props
 */
export function Field({ label, name, error, as = "input", children, hint, ...rest }) {
  const id = useRef(`f${++fieldSeq}`).current;
  const mine = messageFor(error, name);
  const describedBy = [hint ? `${id}-hint` : "", mine ? `${id}-err` : ""].filter(Boolean).join(" ") || undefined;
  const control =
    as === "select"
      ? html`<select id=${id} name=${name} aria-invalid=${mine ? "true" : undefined} aria-describedby=${describedBy} ...${rest}>${children}</select>`
      : as === "textarea"
        ? html`<textarea id=${id} name=${name} aria-invalid=${mine ? "true" : undefined} aria-describedby=${describedBy} ...${rest}></textarea>`
        : html`<input id=${id} name=${name} aria-invalid=${mine ? "true" : undefined} aria-describedby=${describedBy} ...${rest} />`;
  return html`<div class="field">
    <label for=${id}>${label}</label>
    ${control}
    ${hint ? html`<span class="hint" id=${`${id}-hint`}>${hint}</span>` : null}
    ${mine ? html`<span class="field-error" id=${`${id}-err`} role="alert">${mine}</span>` : null}
  </div>`;
}

/**
 * A form that posts through `submit(values)` and shows the service's answer: an error next to
 * its field (or above the buttons when it names none), a success text after (the text `submit`
 * answers, or "Saved").
 * @param {(values: Record<string, FormDataEntryValue>, form: HTMLFormElement) => Promise<unknown>} submit
 */
export function useForm(submit) {
  const [error, setError] = useState(/** @type {unknown} */ (null));
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState(/** @type {string | null} */ (null));
  /** @param {SubmitEvent & { currentTarget: HTMLFormElement }} event */
  const onSubmit = async (event) => {
    event.preventDefault();
    const values = Object.fromEntries(new FormData(event.currentTarget).entries());
    setBusy(true);
    setError(null);
    setDone(null);
    try {
      const answer = await submit(values, event.currentTarget);
      setDone(typeof answer === "string" ? answer : "Saved");
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return { error, busy, done, onSubmit, setError, setDone };
}

/**
 * The error of a form that names no field of it, and the success text.
 * @param {{ error: unknown, done: string | null, fields?: string[] }} props
 */
export function FormResult({ error, done, fields = [] }) {
  const general = error && !(error instanceof ApiError && error.field && fields.includes(error.field));
  return html`${general ? html`<${ErrorNote} error=${error} />` : null}${done ? html`<p class="done" role="status">✓ ${done}</p>` : null}`;
}

/**
 * A table's column: its heading, what a row shows in it, `num` for figures (aligned right).
 * @template Row
 * @typedef {{ label: Children, cell: (row: Row) => Children, num?: boolean }} Column
 */

/**
 * A simple table: `columns` of `{label, cell(row)}`, with a caption for screen readers.
 * @template Row
 * @param {{ caption?: Children, columns: Column<Row>[], rows: Row[] | null | undefined, empty?: Children, rowKey?: (row: Row) => string | number, rowClass?: (row: Row) => string }} props
 */
export function Table({ caption, columns, rows, empty = "Nothing to show", rowKey, rowClass }) {
  if (!rows || rows.length === 0) return html`<p class="muted">${empty}</p>`;
  return html`<table class="grid">
    ${caption ? html`<caption>${caption}</caption>` : null}
    <thead><tr>${columns.map((c) => html`<th scope="col" class=${c.num ? "num" : ""}>${c.label}</th>`)}</tr></thead>
    <tbody>
      ${rows.map(
        (row, i) => html`<tr key=${rowKey ? rowKey(row) : i} class=${rowClass ? rowClass(row) : ""}>
          ${columns.map((c) => html`<td class=${c.num ? "num" : ""}>${c.cell(row)}</td>`)}
        </tr>`,
      )}
    </tbody>
  </table>`;
}

/**
 * The hash route's parts: `#/assets/abc?tag=x` → {parts: ["assets","abc"], query: {tag: "x"}}.
 * @returns {Route}
 */
export function parseRoute(hash = location.hash) {
  const [path, search = ""] = hash.replace(/^#\/?/, "").split("?");
  return { parts: path.split("/").filter(Boolean).map(decodeURIComponent), query: Object.fromEntries(new URLSearchParams(search)) };
}

/**
 * A link within the console.
 * @type {(...parts: string[]) => string}
 */
export const href = (...parts) => `#/${parts.map((p) => encodeURIComponent(p)).join("/")}`;
