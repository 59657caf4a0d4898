// @ts-check
// One alert (`#/alerts/<alert_id>`, the link of the alert emails): its fields, what an operator
// does with it (acknowledge, shelve, unshelve, assign, note) answered in the service's words,
// its history oldest first, and the trend of the watched tags around the opening with the
// thresholds drawn, so that one sees how it came and whether it is going.
import { useEffect, useState } from "preact/hooks";
import { get, post, put } from "../../lib/api.js";
import { AckState, AlertFlags, AlertState, duration, may, sevKey, tagNames, useWidth } from "../../lib/alerts.js";
import { refreshAlarms } from "../../lib/alarms.js";
import { THRESHOLD_COLORS, TrendChart, pointsFor } from "../../lib/chart.js";
import { ErrorNote, Field, FormResult, Loading, Page, Severity, html, num, time, useData, useForm } from "../../lib/ui.js";

/** @typedef {import("../../lib/types.js").AlertDetail} AlertDetail */
/** @typedef {import("../../lib/types.js").Condition} Condition */
/** @typedef {import("../../lib/api.js").User} User */
/** @typedef {import("preact").ComponentChildren} Children */
/** @typedef {Record<string, FormDataEntryValue>} FormValues */
/**
 * A watched tag of the alert's trigger: its monitor and tag (ids and names) and the trigger's
 * conditions on it.
 * @typedef {{ monitor_id: string, tag_id: string, conditions: Condition[], tag_name: string, monitor_name: string }} Watched
 */

const REFRESH_MS = 5000;
const HOUR_MS = 3_600_000;
const MINUTE_MS = 60_000;

/** @type {Record<string, string>} */
const ACTION_WORDS = {
  opened: "Opened",
  notified: "Notified",
  acknowledged: "Acknowledged",
  assigned: "Assigned",
  shelved: "Shelved",
  unshelved: "Unshelved",
  escalated: "Escalated",
  noted: "Note added",
  closed: "Closed",
};

const alertPath = (/** @type {string} */ id, tail = "") => `/_alerting/alerts/${encodeURIComponent(id)}${tail}`;

/** @param {{ alert: AlertDetail }} props */
function Facts({ alert }) {
  const row = (/** @type {string} */ label, /** @type {Children} */ value) => html`<div><dt>${label}</dt><dd>${value}</dd></div>`;
  return html`<dl class="facts card">
    ${row("Severity", html`<${Severity} level=${sevKey(alert)} />`)}
    ${row("State", html`<${AlertState} alert=${alert} />`)}
    ${row("Acknowledgement", html`<${AckState} alert=${alert} />${alert.acked_by ? html`<div class="small">by ${alert.acked_by}, ${time(alert.acked_at, true)}</div>` : null}`)}
    ${row("Trigger", html`${alert.trigger_name} <span class="muted small">(${alert.trigger_id})</span>`)}
    ${row("Watcher", alert.watcher_name)}
    ${row("Asset", alert.asset || "—")}
    ${row("Monitor", html`${alert.monitor}${tagNames(alert) ? html` <span class="muted small">· ${tagNames(alert)}</span>` : null}`)}
    ${row("Reason", alert.reason === "no_data" ? html`<span class="flag flag-nodata"><span aria-hidden="true">◌ </span>No data</span>` : "Condition held")}
    ${row("Started", time(alert.start_time, true))}
    ${row(alert.state === "active" ? "Active for" : "Lasted", html`${alert.state === "active" ? html`<${Since} start=${alert.start_time} />` : duration(alert.duration)}${alert.end_time ? html`<div class="small muted">closed ${time(alert.end_time, true)}</div>` : null}`)}
    ${row("Shelved until", alert.shelved_until ? time(alert.shelved_until, true) : "Not shelved")}
    ${row("Assignee", alert.assignee ?? "Nobody")}
    ${row("Suppressed", alert.suppressed ? "Yes: opened in a maintenance window (not notified)" : "No")}
    ${row("Note", alert.note ? html`<span class="note-text">${alert.note}</span>` : html`<span class="muted">None</span>`)}
  </dl>`;
}

/**
 * How long an active alert has held, counted on the page each second (the fetch every 5 s would
 * leave it standing still in between).
 * @param {{ start: string }} props
 */
function Since({ start }) {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);
  return html`<span class="since">${duration((now - Date.parse(start)) / 1000)}</span>`;
}

/** A small form of one action: its fields, its button, the service's answer under it. */
/**
 * A small form of one action: its fields, its button, the service's answer under it. `settled`
 * (a text) stands instead of the fields and the button when there is nothing left to do; the
 * answer stays, so that the person sees what their click did.
 * @param {{ title: string, submit: (values: FormValues) => Promise<unknown>, fields?: string[], children?: (error: unknown) => Children, button: string, hint?: string, settled?: string | null }} props
 */
function ActionForm({ title, submit, fields = [], children, button, hint, settled }) {
  const form = useForm(async (values, el) => {
    const answer = await submit(values);
    el.reset();
    return answer;
  });
  return html`<form class="action card" aria-label=${title} onSubmit=${form.onSubmit}>
    <h3>${title}</h3>
    ${settled
      ? html`<p>${settled}</p>`
      : html`${children?.(form.error)}
          ${hint ? html`<p class="hint">${hint}</p>` : null}
          <button type="submit" disabled=${form.busy}>${button}</button>`}
    <${FormResult} error=${form.error} done=${form.done} fields=${fields} />
  </form>`;
}

/** @param {{ alert: AlertDetail, onChanged: () => void }} props */
function Actions({ alert, onChanged }) {
  const id = alert._id;
  /** @param {unknown} answer */
  const then = (answer) => {
    onChanged();
    refreshAlarms();
    return answer;
  };
  return html`<section aria-labelledby="actions-title">
    <h2 id="actions-title">Actions</h2>
    <div class="actions">
      <${ActionForm}
        title="Acknowledge"
        button="Acknowledge"
        fields=${["note"]}
        settled=${alert.ack_state === "acknowledged" ? `✓ Acknowledged by ${alert.acked_by ?? "—"}, ${time(alert.acked_at, true)}` : null}
        submit=${async (/** @type {FormValues} */ v) => then(await post(alertPath(id, "/_ack"), v.note ? { note: v.note } : {}))}
      >
        ${(/** @type {unknown} */ error) => html`<${Field} as="textarea" label="Acknowledgement note (optional)" name="note" rows="2" maxlength="4000" error=${error} />`}
      </${ActionForm}>
      ${alert.shelved_until
        ? html`<${ActionForm}
            title="Unshelve"
            button="Unshelve"
            hint=${`Shelved until ${time(alert.shelved_until, true)}: its notifications and escalations pause until then.`}
            submit=${async () => then(await post(alertPath(id, "/_unshelve"), {}))}
          >
            ${() => null}
          </${ActionForm}>`
        : html`<${ActionForm}
            title="Shelve"
            button="Shelve"
            fields=${["minutes", "reason"]}
            hint="1 to 10080 minutes (a week). Notifications and escalations pause while shelved. Plant administrators and above may shelve."
            submit=${async (/** @type {FormValues} */ v) => then(await post(alertPath(id, "/_shelve"), { minutes: Number(v.minutes), reason: String(v.reason ?? "") }))}
          >
            ${(/** @type {unknown} */ error) => html`<div class="row">
              <${Field} label="Minutes" name="minutes" type="number" min="1" max="10080" step="1" defaultValue="60" required error=${error} />
              <${Field} label="Reason" name="reason" maxlength="500" required error=${error} />
            </div>`}
          </${ActionForm}>`}
      <${ActionForm}
        title="Assign"
        button="Assign"
        fields=${["username"]}
        submit=${async (/** @type {FormValues} */ v) => then(await post(alertPath(id, "/_assign"), { username: String(v.username ?? "").trim() }))}
      >
        ${(/** @type {unknown} */ error) => html`<${Field} label="Username" name="username" autocomplete="off" required error=${error} hint=${alert.assignee ? `Now: ${alert.assignee}` : "Nobody yet"} />`}
      </${ActionForm}>
      <${ActionForm}
        title="Add note"
        button="Add note"
        fields=${["note"]}
        hint="The note replaces the alert's note; each one stays in the history."
        submit=${async (/** @type {FormValues} */ v) => then(await put(alertPath(id), { note: String(v.note ?? "") }))}
      >
        ${(/** @type {unknown} */ error) => html`<${Field} as="textarea" label="Note" name="note" rows="2" maxlength="4000" required error=${error} />`}
      </${ActionForm}>
    </div>
  </section>`;
}

/** @param {{ history: import("../../lib/types.js").AlertHistoryEntry[] | undefined }} props */
function History({ history }) {
  if (!history?.length) return html`<p class="muted">No history yet.</p>`;
  return html`<table class="grid history">
    <caption>Oldest first</caption>
    <thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">What</th><th scope="col">Detail</th></tr></thead>
    <tbody>
      ${history.map(
        (h) => html`<tr>
          <td>${time(h.at, true)}</td>
          <td>${h.by ?? html`<span class="muted">system</span>`}</td>
          <td>${ACTION_WORDS[h.action] ?? h.action}</td>
          <td>${h.detail ?? ""}</td>
        </tr>`,
      )}
    </tbody>
  </table>`;
}

/**
 * The watched tags of the alert's trigger: each (monitor, tag) its conditions' thresholds. The
 * conditions are in the watcher (op 4); the alert itself names its monitor and tags, which is
 * what is left when the watcher cannot be read (deleted since, or the module not granted).
 * @param {AlertDetail} alert
 * @param {User} user
 * @returns {Promise<Watched[]>}
 */
async function loadWatched(alert, user) {
  /** @type {Condition[]} */
  let conditions = [];
  try {
    /** @type {import("../../lib/types.js").Watcher} */
    const watcher = await get(`/_alerting/watchers/${encodeURIComponent(alert.watcher_id)}`);
    conditions = (watcher.triggers ?? []).find((t) => t.id === alert.trigger_id)?.condition ?? [];
  } catch {
    // no watcher to read: the alert's own monitor and tags, without thresholds
  }
  /** @type {Map<string, { monitor_id: string, tag_id: string, conditions: Condition[] }>} */
  const byTag = new Map();
  for (const c of conditions) {
    const key = `${c.monitor_id}|${c.tag_id}`;
    if (!byTag.has(key)) byTag.set(key, { monitor_id: c.monitor_id, tag_id: c.tag_id, conditions: [] });
    /** @type {{ conditions: Condition[] }} */ (byTag.get(key)).conditions.push(c);
  }
  if (byTag.size === 0) for (const tag_id of Object.keys(alert.tag ?? {})) byTag.set(`${alert.monitor_id}|${tag_id}`, { monitor_id: alert.monitor_id, tag_id, conditions: [] });
  // The history route names a tag by its name: the alert maps its own monitor's; other monitors' from their fetch.
  return Promise.all(
    [...byTag.values()].map(async (w) => {
      let tag_name = w.monitor_id === alert.monitor_id ? alert.tag?.[w.tag_id] : undefined;
      let monitor_name = w.monitor_id === alert.monitor_id ? alert.monitor : undefined;
      if (!tag_name && may(user, "Configuration")) {
        try {
          /** @type {import("../../lib/types.js").Monitor} */
          const m = await get(`/_config/monitors/${encodeURIComponent(w.monitor_id)}`);
          tag_name = (m.tags ?? []).find((t) => t.tag_id === w.tag_id)?.tag_name;
          monitor_name = m.monitor_name;
        } catch {
          // not readable: the tag's key stands for its name
        }
      }
      return { ...w, tag_name: tag_name ?? w.tag_id, monitor_name: monitor_name ?? w.monitor_id };
    }),
  );
}

/**
 * The range of the trend: an hour before the opening to the close (and a little after), or to now.
 * @param {AlertDetail} alert
 */
function defaultRange(alert) {
  const start = Date.parse(alert.start_time);
  const end = alert.end_time ? Date.parse(alert.end_time) : null;
  const now = Date.now();
  return { from: start - HOUR_MS, to: end === null ? now : Math.min(now, end + 10 * MINUTE_MS), live: end === null };
}

/** @type {Record<string, string>} */
const SEV_COLOR = { high: THRESHOLD_COLORS.high, medium: THRESHOLD_COLORS.medium, low: THRESHOLD_COLORS.low };

/** @param {{ alert: AlertDetail, watched: Watched, range: { from: number, to: number, live: boolean }, onZoom: (from: number, to: number) => void, width: number }} props */
function TagTrend({ alert, watched, range, onZoom, width }) {
  const points = pointsFor(width - 20);
  // A live alert's chart follows the clock: the range's end moves to now at each refresh.
  const to = range.live ? Math.max(range.to, Date.now()) : range.to;
  /** @type {import("../../lib/ui.js").Data<import("../../lib/types.js").History>} */
  const { data, error } = useData(
    () =>
      get(`/_cm/monitors/${encodeURIComponent(watched.monitor_id)}/_history`, {
        tag: watched.tag_name,
        from: new Date(range.from).toISOString(),
        to: new Date(to).toISOString(),
        points,
      }),
    [watched.monitor_id, watched.tag_name, range.from, range.live ? Math.floor(to / 30_000) : range.to, points],
    range.live ? 30_000 : 0,
  );
  const unit = data?.tag_unit ?? "";
  const thresholds = watched.conditions
    .map((c) => ({ value: Number(c.threshold), label: `${c.comparison} ${num(c.threshold, unit)}`, color: SEV_COLOR[sevKey(alert)] ?? THRESHOLD_COLORS.warning }))
    .filter((t) => Number.isFinite(t.value));
  const markers = [{ at: Date.parse(alert.start_time), label: "Opened", color: "#1a5fb4" }];
  if (alert.end_time) markers.push({ at: Date.parse(alert.end_time), label: "Closed", color: "#4d5963" });
  const pts = data?.points ?? [];
  const last = pts.length ? pts[pts.length - 1] : null;
  const peak = pts.length ? Math.max(...pts.map((p) => p.max ?? p.value)) : null;
  const low = pts.length ? Math.min(...pts.map((p) => p.min ?? p.value)) : null;
  return html`<div class="tag-trend">
    <h3>${watched.monitor_name} · ${watched.tag_name}</h3>
    <${ErrorNote} error=${error} />
    ${data === undefined && !error ? html`<${Loading} what="Loading the trend" />` : null}
    ${data
      ? html`<p class="trend-values">
            <span>Last <strong>${num(last?.value, unit)}</strong></span>
            <span>Highest <strong>${num(peak, unit)}</strong></span>
            <span>Lowest <strong>${num(low, unit)}</strong></span>
            <span class="muted small">${pts.length} points${data.bucket_ms ? `, each the mean of ${duration(data.bucket_ms / 1000)} (band: min to max)` : ", raw readings"}</span>
          </p>
          ${pts.length === 0
            ? html`<p class="muted">No readings of ${watched.tag_name} in this range.</p>`
            : html`<${TrendChart}
                history=${data}
                unit=${unit}
                label=${watched.tag_name}
                title=${`${watched.tag_name} around the opening`}
                thresholds=${thresholds}
                markers=${markers}
                onZoom=${onZoom}
              />`}
          <p class="legend-note">
            Dashed: the trigger's threshold${thresholds.length === 1 ? "" : "s"} (${thresholds.map((t) => t.label).join(", ") || "none known"}). Blue line: the
            opening${alert.end_time ? "; grey line: the close" : ""}. Drag across the chart to zoom in.
          </p>`
      : null}
  </div>`;
}

/** @param {{ alert: AlertDetail, user: User }} props */
function Trend({ alert, user }) {
  const watched = useData(() => loadWatched(alert, user), [alert._id]);
  const [zoom, setZoom] = useState(/** @type {{ from: number, to: number, live: boolean } | null} */ (null));
  const [ref, width] = useWidth();
  const range = zoom ?? defaultRange(alert);
  return html`<section aria-labelledby="trend-title" ref=${ref}>
    <div class="section-head">
      <h2 id="trend-title">Trend around the opening</h2>
      <span class="muted small">${time(range.from)} – ${range.live && !zoom ? "now" : time(range.to)}</span>
      ${zoom ? html`<button type="button" onClick=${() => setZoom(null)}>Show whole range</button>` : null}
    </div>
    <${ErrorNote} error=${watched.error} />
    ${watched.data === undefined && !watched.error ? html`<${Loading} what="Loading the trigger's conditions" />` : null}
    ${width > 0
      ? (watched.data ?? []).map(
          (w) => html`<${TagTrend}
            key=${`${w.monitor_id}|${w.tag_id}`}
            alert=${alert}
            watched=${w}
            range=${range}
            width=${width}
            onZoom=${(/** @type {number} */ from, /** @type {number} */ to) => setZoom({ from, to, live: false })}
          />`,
        )
      : null}
  </section>`;
}

/**
 * `#/alerts/<alert_id>`: `id` is the alert's.
 * @param {import("../../lib/types.js").PageProps & { id: string }} props
 */
export function AlertPage({ id, user }) {
  /** @type {import("../../lib/ui.js").Data<AlertDetail>} */
  const { data: alert, error, reload } = useData(() => get(alertPath(id)), [id], REFRESH_MS);
  const title = alert ? `Alert: ${alert.trigger_name}` : "Alert";
  const tools = html`<a href="#/alerts">← All alerts</a>`;
  return html`<${Page} title=${title} tools=${tools}>
    <${ErrorNote} error=${error} />
    ${alert === undefined && !error ? html`<${Loading} what="Loading the alert" />` : null}
    ${alert
      ? html`<p class="alert-head">
            <${Severity} level=${sevKey(alert)} /> <${AlertState} alert=${alert} /> <${AckState} alert=${alert} /> <${AlertFlags} alert=${alert} />
            <span class="muted small">${alert.asset ? `${alert.asset} · ` : ""}${alert.monitor} · started ${time(alert.start_time, true)}</span>
          </p>
          <div class="alert-layout">
            <div class="alert-main">
              ${may(user, "Condition Monitoring")
                ? html`<${Trend} alert=${alert} user=${user} />`
                : html`<section aria-labelledby="trend-title">
                    <h2 id="trend-title">Trend around the opening</h2>
                    <p class="muted">The trend is read from the condition-monitoring history, which needs the Condition Monitoring module.</p>
                  </section>`}
              <section aria-labelledby="history-title">
                <h2 id="history-title">History</h2>
                <${History} history=${alert.history} />
              </section>
            </div>
            <aside class="alert-side">
              <section aria-labelledby="facts-title">
                <h2 id="facts-title">Details</h2>
                <${Facts} alert=${alert} />
              </section>
              <${Actions} alert=${alert} onChanged=${reload} />
            </aside>
          </div>`
      : null}
  </${Page}>`;
}
