// @ts-check
// Pipelines: a plant's gateways and collectors (op 54) with their status in words, how long ago
// each component was heard (coloured only when stale), their event counts and last actions;
// Start / Stop (op 56) answered in the service's words; a chosen pipeline's registered monitors
// (op 21) and latest readings with their units (`#/pipelines/<id>?plant_id=…`).
import { useState } from "preact/hooks";
import { get, post } from "../../lib/api.js";
import { PlantSelect, go, loadPlants } from "../../lib/place.js";
import { ErrorNote, Loading, Page, Status, Table, age, html, monitorKind, num, time, useData } from "../../lib/ui.js";
import { viewSiteZone } from "../../lib/prefs.js";

const REFRESH_MS = 10_000;

/** @typedef {import("../../lib/types.js").Pipeline} Pipeline */
/** @typedef {import("../../lib/types.js").PipelineAction} PipelineAction */
/** @typedef {import("../../lib/types.js").PipelineEvent} PipelineEvent */
/** @typedef {import("../../lib/types.js").Monitor} PipelineMonitor */
/**
 * A component's last heartbeat, a row of the detail's table.
 * @typedef {{ key: string, label: string, at: number | null }} HeartbeatRow
 */

/** Who may start and stop pipelines (pipelines are written by plant-admins and above: lib/access.ts). */
const OPERATORS = ["saas-admin", "site-admin", "plant-admin"];

/**
 * A component not heard for this long is stale. Gateways report every few seconds to a minute;
 * five minutes without a word means the component is down or cut off, not merely slow.
 */
export const HEARTBEAT_STALE_MS = 5 * 60_000;

/** @type {[key: string, label: string][]} */
const COMPONENTS = [
  ["gateway", "Gateway"],
  ["producer", "Producer"],
  ["log_parser", "Log parser"],
  ["stasher", "Stasher"],
];

/**
 * A pipeline's status as a word; colour only where something needs a look.
 * @type {Record<string, { tone: string, word: string }>}
 */
const STATUS = {
  running: { tone: "normal", word: "Running" },
  stopped: { tone: "normal", word: "Stopped" },
  starting: { tone: "info", word: "Starting" },
  stopping: { tone: "info", word: "Stopping" },
  error: { tone: "alarm", word: "Error" },
};
/** @param {{ status: string }} props */
function PipelineStatus({ status }) {
  const s = STATUS[status] ?? { tone: "normal", word: String(status ?? "—") };
  return html`<${Status} tone=${s.tone}>${s.word}</${Status}>`;
}

/** @type {Record<string, { tone: string, word: string }>} */
const ACTION_STATUS = {
  in_progress: { tone: "info", word: "in progress" },
  completed: { tone: "normal", word: "completed" },
  failed: { tone: "alarm", word: "failed" },
};
/** @param {{ action: PipelineAction | undefined }} props */
function ActionLine({ action }) {
  if (!action) return html`<span class="muted">none yet</span>`;
  const s = ACTION_STATUS[action.status] ?? { tone: "normal", word: action.status };
  return html`<span class="action-line"
    ><span class="action-name">${action.action === "start" ? "Start" : action.action === "stop" ? "Stop" : action.action}</span>
    <${Status} tone=${s.tone}>${s.word}</${Status}>
    ${action.error ? html`<${Status} tone="alarm">${action.error}</${Status}>` : null}
    <span class="muted small" title=${time(action.issued_at, true)}>${age(action.issued_at)}</span></span
  >`;
}

/**
 * One component's last heartbeat: its age, "stale" in words and colour past the limit.
 * @param {{ at: number | null | undefined, now: number }} props
 */
function Heartbeat({ at, now }) {
  if (at === null || at === undefined) return html`<span class="muted">never</span>`;
  const stale = now - at > HEARTBEAT_STALE_MS;
  return html`<span title=${time(at, true)}>${stale ? html`<${Status} tone="stale">${age(at, now)} · stale</${Status}>` : age(at, now)}</span>`;
}

/** @param {{ beats: Record<string, number | null> | undefined, now: number }} props */
function Heartbeats({ beats, now }) {
  return html`<dl class="beats">
    ${COMPONENTS.map(([key, label]) => html`<dt>${label}</dt><dd><${Heartbeat} at=${beats?.[key]} now=${now} /></dd>`)}
  </dl>`;
}

/** The time of the newest reading the list carries (latest_event holds the last few). */
const latestAt = (/** @type {PipelineEvent[] | undefined} */ events) => (events ?? []).reduce((max, e) => (typeof e?.ts === "number" && e.ts > max ? e.ts : max), 0) || null;

/** @param {{ pipeline: Pipeline }} props */
function Events({ pipeline }) {
  const at = latestAt(pipeline.latest_event);
  return html`<span class="events"
    ><span>${num(pipeline.total_events, "events", 0)}</span>
    <span class="muted small">${at ? html`latest <span title=${time(at, true)}>${age(at)}</span>` : "none received"}</span>
    ${pipeline.collected === undefined ? null : html`<span class="muted small">${num(pipeline.collected, "", 0)} collected · ${num(pipeline.rejected ?? 0, "", 0)} rejected</span>`}</span
  >`;
}

/**
 * Start and Stop for one pipeline; the one that would change nothing is disabled.
 * @param {{ pipeline: Pipeline, busy: boolean, onAction: (pipeline: Pipeline, action: string) => void }} props
 */
function ActionButtons({ pipeline, busy, onAction }) {
  const started = pipeline.status === "running" || pipeline.status === "starting";
  const stopped = pipeline.status === "stopped" || pipeline.status === "stopping";
  return html`<div class="row-actions">
    <button type="button" disabled=${busy || started} onClick=${() => onAction(pipeline, "start")}>Start</button>
    <button type="button" disabled=${busy || stopped} onClick=${() => onAction(pipeline, "stop")}>Stop</button>
  </div>`;
}

/**
 * The tags of the pipeline's monitors by `monitor_id/tag_id`, for names and units of the readings.
 * @param {string} pipelineId
 * @returns {Promise<PipelineMonitor[]>}
 */
async function loadMonitors(pipelineId) {
  /** @type {PipelineMonitor[]} */
  const monitors = await get("/_config/monitors/_list", { pipeline_id: pipelineId });
  /** @type {(PipelineMonitor | null)[]} */
  const details = await Promise.all(monitors.map((m) => get(`/_config/monitors/${encodeURIComponent(m.monitor_id)}`).catch(() => null)));
  return monitors.map((m, i) => ({ ...m, tags: details[i]?.tags ?? [], gateway: details[i]?.gateway ?? null }));
}

/** @param {{ pipeline: Pipeline, onClose: () => void }} props */
function PipelineDetail({ pipeline, onClose }) {
  const monitors = useData(() => loadMonitors(pipeline.pipeline_id), [pipeline.pipeline_id]);
  const byId = new Map((monitors.data ?? []).map((m) => [m.monitor_id, m]));
  // A reading without a monitor finds none (the Map has no undefined key).
  const tagOf = (/** @type {PipelineEvent} */ e) => byId.get(/** @type {string} */ (e.monitor_id))?.tags.find((t) => t.tag_id === e.tag_id);
  const now = Date.now();
  return html`<section class="card pipeline-detail" aria-labelledby="pipeline-detail-title">
    <header class="detail-head">
      <h2 id="pipeline-detail-title">${pipeline.pipeline_name}</h2>
      <${PipelineStatus} status=${pipeline.status} />
      <span class="muted small">${pipeline.data_type} · ${pipeline.data_source} · ${pipeline.data_source_subtype}</span>
      <button type="button" class="link close" onClick=${onClose}>Close</button>
    </header>
    <div class="detail-grid">
      <div>
        <h3>Registered monitors</h3>
        <${ErrorNote} error=${monitors.error} />
        ${monitors.data === undefined && !monitors.error
          ? html`<${Loading} what="Loading the monitors" />`
          : html`<${Table}
              caption="Monitors this pipeline feeds"
              empty="No monitor is registered to this pipeline."
              rows=${monitors.data}
              rowKey=${(/** @type {PipelineMonitor} */ m) => m.monitor_id}
              columns=${[
                { label: "Monitor", cell: (/** @type {PipelineMonitor} */ m) => m.monitor_name },
                { label: "Type", cell: (/** @type {PipelineMonitor} */ m) => monitorKind(m.monitor_type) },
                { label: "Slave", num: true, cell: (/** @type {PipelineMonitor} */ m) => (m.gateway?.slave_id ?? "—") },
                { label: "Tags", cell: (/** @type {PipelineMonitor} */ m) => (m.tags.length ? m.tags.map((t) => `${t.tag_name}${t.tag_unit ? ` (${t.tag_unit})` : ""}`).join(", ") : "—") },
                { label: "Device", cell: (/** @type {PipelineMonitor} */ m) => (m.device_registered ? "registered" : html`<${Status} tone="warning">not registered</${Status}>`) },
              ]}
            />`}
      </div>
      <div>
        <h3>Heartbeats</h3>
        <${Table}
          caption="When each component of the gateway last reported"
          rows=${COMPONENTS.map(([key, label]) => ({ key, label, at: pipeline.heart_beats?.[key] ?? null }))}
          rowKey=${(/** @type {HeartbeatRow} */ r) => r.key}
          columns=${[
            { label: "Component", cell: (/** @type {HeartbeatRow} */ r) => r.label },
            { label: "Last heard", cell: (/** @type {HeartbeatRow} */ r) => html`<${Heartbeat} at=${r.at} now=${now} />` },
            { label: "At", cell: (/** @type {HeartbeatRow} */ r) => time(r.at, true) },
          ]}
        />
      </div>
    </div>
    <h3>Latest readings</h3>
    <${Table}
      caption=${`${num(pipeline.total_events, "", 0)} events received in all; the last ones`}
      empty="No reading received yet."
      rows=${[...(pipeline.latest_event ?? [])].reverse()}
      columns=${[
        { label: "Time", cell: (/** @type {PipelineEvent} */ e) => time(e.ts, true) },
        { label: "Monitor", cell: (/** @type {PipelineEvent} */ e) => byId.get(/** @type {string} */ (e.monitor_id))?.monitor_name ?? e.monitor_id ?? "—" },
        { label: "Tag", cell: (/** @type {PipelineEvent} */ e) => tagOf(e)?.tag_name ?? e.tag_id ?? e.tag ?? "—" },
        { label: "Value", num: true, cell: (/** @type {PipelineEvent} */ e) => (typeof e.value === "number" ? num(e.value, tagOf(e)?.tag_unit ?? "", 3) : e.samples ? `${e.samples} samples` : "—") },
      ]}
    />
    <h3>Last actions</h3>
    <${Table}
      caption="The last actions, newest first"
      empty="No action yet."
      rows=${pipeline.last_actions ?? []}
      rowKey=${(/** @type {PipelineAction} */ a) => a.action_id}
      columns=${[
        { label: "Action", cell: (/** @type {PipelineAction} */ a) => (a.action === "start" ? "Start" : a.action === "stop" ? "Stop" : a.action) },
        {
          label: "Status",
          cell: (/** @type {PipelineAction} */ a) =>
            html`<${Status} tone=${ACTION_STATUS[a.status]?.tone ?? "normal"}>${ACTION_STATUS[a.status]?.word ?? a.status}</${Status}>${a.error ? html` <${Status} tone="alarm">${a.error}</${Status}>` : null}`,
        },
        { label: "Issued", cell: (/** @type {PipelineAction} */ a) => time(a.issued_at, true) },
        { label: "Completed", cell: (/** @type {PipelineAction} */ a) => (a.completed_at ? time(a.completed_at, true) : "—") },
      ]}
    />
  </section>`;
}

/** @param {import("../../lib/types.js").PageProps} props */
export function Pipelines({ user, route }) {
  const plants = useData(loadPlants, [user.username]);
  const plantId = route.query.plant_id || plants.data?.[0]?.plant_id;
  viewSiteZone(plants.data?.find((p) => p.plant_id === plantId)?.timezone);
  const selectedId = route.parts[1] ?? null;
  /** @type {import("../../lib/ui.js").Data<Pipeline[] | undefined>} */
  const list = useData(() => (plantId ? get("/_config/pipelines/_list", { plant_id: plantId }) : Promise.resolve(undefined)), [plantId], REFRESH_MS);
  const [answer, setAnswer] = useState(/** @type {{ ok?: string, error?: unknown } | null} */ (null));
  const [busy, setBusy] = useState(false);

  /** @type {(pipeline: Pipeline, action: string) => Promise<void>} */
  const act = async (pipeline, action) => {
    // Stopping ends the collection of readings: asked once more, starting is not.
    if (action === "stop" && !window.confirm(`Stop ${pipeline.pipeline_name}? It stops sending readings until it is started again.`)) return;
    setBusy(true);
    setAnswer(null);
    try {
      const text = await post("/_config/pipelines/_action", { pipeline_id: [pipeline.pipeline_id], action });
      // The answer shows once the list shows the pipeline's new status beside it.
      await list.reload();
      setAnswer({ ok: `${action === "start" ? "Start" : "Stop"} ${pipeline.pipeline_name}: ${text}` });
    } catch (error) {
      setAnswer({ error });
    } finally {
      setBusy(false);
    }
  };

  const canAct = OPERATORS.includes(user.user_type);
  const now = Date.now();
  const pipelines = list.data ?? [];
  const selected = selectedId ? pipelines.find((p) => p.pipeline_id === selectedId) : null;
  const tools = html`
    ${plants.data?.length ? html`<${PlantSelect} plants=${plants.data} value=${plantId} onChange=${(/** @type {string} */ id) => go(["pipelines"], { plant_id: id })} />` : null}
    <span class="muted small">${list.loading ? "Refreshing…" : `Refreshed every ${REFRESH_MS / 1000} s`}</span>`;

  return html`<${Page} title="Pipelines" tools=${tools}>
    <${ErrorNote} error=${plants.error ?? list.error} />
    ${plants.data && plants.data.length === 0 ? html`<p class="muted">No plant yet. An administrator adds one under Settings.</p>` : null}
    ${answer?.ok ? html`<p class="done" role="status">✓ ${answer.ok}</p>` : null}
    ${answer?.error ? html`<${ErrorNote} error=${answer.error} />` : null}
    ${list.data === undefined && !list.error && plantId ? html`<${Loading} what="Loading the pipelines" />` : null}
    ${list.data
      ? html`<${Table}
          caption=${`Pipelines of ${plants.data?.find((p) => p.plant_id === plantId)?.plant_name ?? "the plant"}; a component not heard for ${HEARTBEAT_STALE_MS / 60_000} min is stale`}
          empty="This plant has no pipeline yet."
          rows=${pipelines}
          rowKey=${(/** @type {Pipeline} */ p) => p.pipeline_id}
          rowClass=${(/** @type {Pipeline} */ p) => (p.pipeline_id === selectedId ? "selected" : "")}
          columns=${[
            {
              label: "Pipeline",
              // The list is asked for a plant only: plantId is set.
              cell: (/** @type {Pipeline} */ p) => html`<a href=${`#/pipelines/${encodeURIComponent(p.pipeline_id)}?plant_id=${encodeURIComponent(/** @type {string} */ (plantId))}`}>${p.pipeline_name}</a>
                <div class="muted small">${p.function_name ?? "whole plant"} · ${p.data_type} · ${p.data_source_subtype}</div>`,
            },
            { label: "Status", cell: (/** @type {Pipeline} */ p) => html`<${PipelineStatus} status=${p.status} />` },
            { label: "Heartbeats", cell: (/** @type {Pipeline} */ p) => html`<${Heartbeats} beats=${p.heart_beats} now=${now} />` },
            { label: "Events", cell: (/** @type {Pipeline} */ p) => html`<${Events} pipeline=${p} />` },
            { label: "Last action", cell: (/** @type {Pipeline} */ p) => html`<${ActionLine} action=${p.last_actions?.[0]} />` },
            ...(canAct ? [{ label: "Actions", cell: (/** @type {Pipeline} */ p) => html`<${ActionButtons} pipeline=${p} busy=${busy} onAction=${act} />` }] : []),
          ]}
        />`
      : null}
    ${selectedId && list.data && !selected ? html`<p class="muted">That pipeline is not in this plant.</p>` : null}
    ${selected ? html`<${PipelineDetail} pipeline=${selected} onClose=${() => go(["pipelines"], { plant_id: plantId })} />` : null}
  </${Page}>`;
}
