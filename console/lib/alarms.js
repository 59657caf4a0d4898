// @ts-check
// The alarm signal of every view (docs/console.md, "For the people on shift"): one request for
// the caller's whole scope (`GET /_alerting/alerts/_active`) every POLL_MS, whatever the number
// of sites, shared by every part of the page that shows alarms: the Alarm summary in the header,
// the New alarm banner (and its sound, when the person turned it on), the count before the
// page's title, the health of the assets. Shelved alarms are counted apart, never as active.
import { useEffect, useState } from "preact/hooks";
import { get } from "./api.js";
import { prefs, setPrefs, usePrefs } from "./prefs.js";
import { Severity, Status, html, href } from "./ui.js";

/** @typedef {import("./types.js").ActiveAlerts} ActiveAlerts */
/** @typedef {import("./types.js").PlacedAlert} PlacedAlert */
/** @typedef {import("./api.js").User} User */
/** @template {EventTarget} T @typedef {import("./types.js").ControlEvent<T>} ControlEvent */

/** A new alarm reaches the screen within this and the evaluation's own delay (bench:console measures it). */
export const POLL_MS = 1000;
/** A hidden tab still counts in its title, more slowly. */
const HIDDEN_POLL_MS = 5000;
const TITLE = document.title;

/**
 * What the views read: the summary (undefined until the first answer), the alarms raised since the
 * page opened that nobody dismissed yet, and `version`, which changes whenever an alarm opens,
 * closes, is acknowledged or shelved (the board reloads on it).
 * @typedef {{ summary: ActiveAlerts | undefined, fresh: PlacedAlert[], version: string, error: unknown }} AlarmState
 */
/** @type {AlarmState} */
let state = { summary: undefined, fresh: [], version: "", error: null };
/** @type {Set<(s: AlarmState) => void>} */
const listeners = new Set();
/** @type {Set<string> | null} ids seen so far (null before the first answer: what stands at sign-in is not new) */
let seen = null;
/** @type {ReturnType<typeof setTimeout> | undefined} */
let timer;
let running = false;

/** @param {Partial<AlarmState>} change */
function publish(change) {
  state = { ...state, ...change };
  for (const l of listeners) l(state);
}

/** Whether an alarm wants the operator: active, unacknowledged, not shelved. */
export const wantsOperator = (/** @type {PlacedAlert} */ a) => a.state === "active" && a.ack_state !== "acknowledged" && !a.shelved_until;

async function poll() {
  try {
    /** @type {ActiveAlerts} */
    const summary = await get("/_alerting/alerts/_active");
    const ids = new Set(summary.alerts.map((a) => a._id));
    const opened = seen === null ? [] : summary.alerts.filter((a) => !(/** @type {Set<string>} */ (seen).has(a._id)) && wantsOperator(a));
    seen = ids;
    // A banner goes once its alarm is no longer wanting the operator (acknowledged, shelved, closed).
    const still = new Map(summary.alerts.filter(wantsOperator).map((a) => [a._id, a]));
    const fresh = [...opened, ...state.fresh.filter((a) => still.has(a._id)).map((a) => /** @type {PlacedAlert} */ (still.get(a._id)))];
    const version = `${summary.alerts.map((a) => `${a._id}:${a.ack_state}:${a.shelved_until ?? ""}`).join(",")}|${JSON.stringify([summary.unacknowledged, summary.active, summary.shelved])}`;
    // Only a change is published: the views that read the summary re-draw when an alarm opens,
    // closes, is acknowledged or shelved, not every second (an active alarm's duration is
    // counted where it is shown, from its start).
    if (version !== state.version || opened.length > 0 || fresh.length !== state.fresh.length || state.error) publish({ summary, fresh, version, error: null });
    if (opened.length > 0 && prefs().sound) sound(opened.some((a) => a.severity === "High") ? 3 : 1);
  } catch (error) {
    publish({ error });
  }
  if (running) timer = setTimeout(poll, document.visibilityState === "visible" ? POLL_MS : HIDDEN_POLL_MS);
}

/**
 * Starts the one poll for a user who has the Alerting module (none otherwise); stops it at sign-out.
 * @param {User | null | undefined} user
 */
export function followAlarms(user) {
  clearTimeout(timer);
  running = false;
  seen = null;
  publish({ summary: undefined, fresh: [], version: "", error: null });
  if (!user || !user.modules.includes("Alerting")) return;
  running = true;
  void poll();
}

/** Asks again now (after an action that changed an alarm). */
export function refreshAlarms() {
  if (!running) return;
  clearTimeout(timer);
  void poll();
}

/** The shared state, re-read by the component as it changes. */
export function useAlarms() {
  const [value, setValue] = useState(state);
  useEffect(() => {
    listeners.add(setValue);
    setValue(state);
    return () => {
      listeners.delete(setValue);
    };
  }, []);
  return value;
}

/** @param {PlacedAlert} a */
function dismiss(a) {
  publish({ fresh: state.fresh.filter((f) => f._id !== a._id) });
}

/** Beeps `times` short tones (Web Audio, no file): the browser lets it sound once the person has clicked on the page. */
let audio = /** @type {AudioContext | null} */ (null);
/** @param {number} times */
function sound(times) {
  try {
    audio ??= new window.AudioContext();
    for (let i = 0; i < times; i++) {
      const osc = audio.createOscillator();
      const gain = audio.createGain();
      osc.frequency.value = 880;
      gain.gain.value = 0.15;
      osc.connect(gain).connect(audio.destination);
      const at = audio.currentTime + i * 0.35;
      osc.start(at);
      osc.stop(at + 0.2);
    }
  } catch {
    // no audio on this browser: the banner and the title still say it
  }
}

/** @type {(keyof import("./types.js").SeverityCounts)[]} */
const LEVELS = ["high", "medium", "low"];

/**
 * The header's region: unacknowledged active alarms by severity, the shelved apart, a link to the
 * board; the page's title starts with the count.
 */
export function AlarmSummary() {
  const { summary, error } = useAlarms();
  const { sound: soundOn } = usePrefs();
  const unack = summary ? LEVELS.reduce((n, s) => n + summary.unacknowledged[s], 0) : 0;
  useEffect(() => {
    document.title = unack > 0 ? `(${unack}) ${TITLE}` : TITLE;
  }, [unack]);
  useEffect(() => () => void (document.title = TITLE), []);
  return html`<section class="alarm-summary" aria-label="Alarm summary">
    <a href="#/alerts" class=${unack > 0 ? "alarm-link abnormal" : "alarm-link"}>
      ${summary === undefined
        ? html`<span class="muted">${error ? "Alarms unknown" : "Alarms…"}</span>`
        : unack === 0
          ? html`<span>No unacknowledged alarm</span>`
          : html`<span><strong>${unack}</strong> unacknowledged</span>${LEVELS.filter((s) => summary.unacknowledged[s] > 0).map(
              (s) => html` <span class="count"><${Severity} level=${s} /> ${summary.unacknowledged[s]}</span>`,
            )}`}
      ${summary && summary.shelved > 0 ? html` <span class="shelved-count">· ${summary.shelved} shelved</span>` : null}
    </a>
    <label class="sound"><input type="checkbox" checked=${soundOn} onChange=${(/** @type {ControlEvent<HTMLInputElement>} */ e) => {
      setPrefs({ sound: e.currentTarget.checked });
      if (e.currentTarget.checked) sound(1);
    }} /> Alarm sound</label>
  </section>`;
}

/**
 * The banner of the alarms raised since the page opened: trigger and asset named, a link to the
 * newest (its text not the trigger's name, which the board's rows link by), dismissed by the person.
 */
export function NewAlarmBanner() {
  const { fresh } = useAlarms();
  if (fresh.length === 0) return null;
  const [first, ...more] = fresh;
  return html`<div class=${`alarm-banner sev-bg-${String(first.severity).toLowerCase()}`} role="alert" aria-label="New alarm">
    <span class="alarm-banner-text">
      <${Severity} level=${String(first.severity).toLowerCase()} /> New alarm: <strong>${first.trigger_name}</strong>${first.asset ? ` on ${first.asset}` : ""}
      ${more.length > 0 ? html` <span>and ${more.length} more</span>` : null}
    </span>
    <span class="tools">
      <a href=${href("alerts", first._id)} onClick=${() => dismiss(first)}>Open the alarm</a>
      <button type="button" onClick=${() => dismiss(first)}>Dismiss</button>
    </span>
  </div>`;
}

/**
 * The alarms that stand against each asset (active, not shelved), the most severe first, from the
 * shared summary: health is never "Normal" while one stands.
 * @param {ActiveAlerts | undefined} summary
 * @returns {Map<string, PlacedAlert[]>}
 */
export function alarmsByAsset(summary) {
  /** @type {Map<string, PlacedAlert[]>} */
  const byAsset = new Map();
  for (const a of summary?.alerts ?? []) {
    if (!a.asset_id || a.shelved_until) continue;
    const list = byAsset.get(a.asset_id) ?? [];
    list.push(a);
    byAsset.set(a.asset_id, list);
  }
  const rank = (/** @type {PlacedAlert} */ a) => ({ High: 0, Medium: 1, Low: 2 })[/** @type {"High"} */ (a.severity)] ?? 3;
  for (const list of byAsset.values()) list.sort((x, y) => rank(x) - rank(y));
  return byAsset;
}

/**
 * An asset's state in words: an alarm standing against it first (never "Normal" then), its
 * condition-monitoring status beside, and the faults found. `empty` is shown when neither is known.
 * @param {{ health: import("./types.js").AssetHealth | null | undefined, alarms: PlacedAlert[] | undefined, empty?: import("preact").ComponentChildren }} props
 */
export function AssetState({ health, alarms, empty }) {
  const status = health?.asset_status;
  const faults = health?.asset_faults ?? [];
  const cm = status
    ? html`<${Status} tone=${status === "critical" ? "critical" : "warning"}>${status[0].toUpperCase()}${status.slice(1)}</${Status}>`
    : faults.length > 0
      ? html`<${Status} tone="warning">Faults found</${Status}>`
      : null;
  const facts = faults.length > 0 ? html` <span class="small">(${faults.join(", ")})</span>` : null;
  if (alarms && alarms.length > 0) {
    const word = alarms.length === 1 ? "Alarm" : `${alarms.length} alarms`;
    return html`<span class="asset-state"><${Status} tone="alarm">${word} (${alarms[0].severity})</${Status}>${cm ? html` · ${cm}` : null}${facts}</span>`;
  }
  if (cm) return html`<span class="asset-state">${cm}${facts}</span>`;
  if (!health && empty !== undefined) return html`${empty}`;
  return html`<${Status} tone="normal">Normal</${Status}>`;
}
