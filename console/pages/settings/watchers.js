// @ts-check
// Settings: watchers and their triggers (spec ops 1-6, every trigger field of the spec and of
// alarm management, docs/api-tour.md: deadband, clear delay, no-data, re-notify, escalation tiers),
// and a watcher's maintenance windows (`_suppress`). A watcher watches one gateway's readings.
import { useState } from "preact/hooks";
import { del, get, post, put } from "../../lib/api.js";
import { ErrorNote, Field, Loading, Severity, Status, Table, html, time, useData } from "../../lib/ui.js";
import { Check, CheckList, CrudSection, EditorForm, PlaceSelects, RowButton, compact, mayWrite, monitorsWithTags, numberOf, usePlace, useSubmit, useUsers, withField } from "../../lib/settings-kit.js";

/** @typedef {import("../../lib/types.js").Watcher} Watcher */
/** @typedef {import("../../lib/types.js").Trigger} Trigger */
/** @typedef {import("../../lib/types.js").Condition} Condition */
/** @typedef {import("../../lib/types.js").Suppression} Suppression */
/** @typedef {import("../../lib/types.js").Monitor} Monitor */
/** @typedef {import("../../lib/settings-kit.js").Place} Place */
/** @template Row @typedef {import("../../lib/settings-kit.js").Editor<Row>} Editor */
/** @template {EventTarget} T @typedef {import("../../lib/types.js").ControlEvent<T>} ControlEvent */
/** @typedef {{ value: string, label: string }} Option */
/**
 * A condition as the form edits it: the threshold as typed.
 * @typedef {{ monitor_id: string, tag_id: string, comparison: string, threshold: string }} EditedCondition
 */
/**
 * An escalation tier as the form edits it: the media chosen as a list.
 * @typedef {{ after: string, users: string[], media: string[] }} EditedTier
 */
/**
 * A trigger as the form edits it: texts as typed, media and users as lists.
 * @typedef {object} EditedTrigger
 * @property {string} id
 * @property {string} name
 * @property {string} severity
 * @property {string} minimum_duration
 * @property {string} trigger_relation
 * @property {EditedCondition[]} condition
 * @property {string[]} media
 * @property {string[]} users
 * @property {string} deadband
 * @property {string} clear_delay
 * @property {string} no_data
 * @property {string} renotify_every
 * @property {EditedTier[]} escalation
 */

const enc = encodeURIComponent;
const COMPARISONS = ["<", "<=", ">", ">=", "==", "!="];
/** Severity 1 is High, 2 Medium, 3 and above Low (services/alerting/severity.ts). */
const SEVERITIES = [
  { value: "1", label: "1 · High" },
  { value: "2", label: "2 · Medium" },
  { value: "3", label: "3 · Low" },
];
const levelOf = (/** @type {unknown} */ severity) => (Number(severity) <= 1 ? "high" : Number(severity) === 2 ? "medium" : "low");
const MEDIA = [
  { value: "email", label: "Email" },
  { value: "sms", label: "SMS" },
  { value: "whatsapp", label: "WhatsApp" },
];
const DURATION_HINT = "e.g. 30s, 5m, 2h";

/** Trigger ids are the watcher's own: unique within it, kept across edits. */
const newId = () => `t-${Math.random().toString(36).slice(2, 8)}`;
const mediaOf = (/** @type {Record<string, unknown> | undefined} */ o) => MEDIA.map((m) => m.value).filter((m) => o?.[m]);
const mediaFlags = (/** @type {string[]} */ list) => Object.fromEntries(MEDIA.map((m) => [m.value, list.includes(m.value)]));

/** @type {(c?: Partial<Condition>) => EditedCondition} */
const conditionState = (c = {}) => ({ monitor_id: c.monitor_id ?? "", tag_id: c.tag_id ?? "", comparison: c.comparison ?? ">=", threshold: c.threshold == null ? "" : String(c.threshold) });

/**
 * A trigger as the form edits it.
 * @type {(t?: Trigger) => EditedTrigger}
 */
const triggerState = (t) => ({
  id: t?.id ?? newId(),
  name: t?.name ?? "",
  severity: String(t?.severity ?? 1),
  minimum_duration: t?.minimum_duration ?? "0s",
  trigger_relation: t?.trigger_relation ?? "AND",
  condition: (t ? (t.condition ?? []) : [{}]).map(conditionState),
  media: t ? mediaOf(t.notifyTo) : ["email"],
  users: t?.notifyTo?.users ?? [],
  deadband: t?.deadband ?? "",
  clear_delay: t?.clear_delay ?? "",
  no_data: t?.no_data ?? "",
  renotify_every: t?.renotify_every ?? "",
  escalation: (t?.escalation ?? []).map((e) => ({ after: e.after ?? "", users: e.users ?? [], media: mediaOf(e) })),
});

/** The spec's trigger; the optional alarm-management fields only when set (absent: today's behaviour). */
const triggerBody = (/** @type {EditedTrigger} */ t) => ({
  id: t.id,
  name: t.name,
  minimum_duration: t.minimum_duration.trim(),
  severity: numberOf(t.severity),
  trigger_relation: t.trigger_relation,
  condition: t.condition.map((c) => ({ comparison: c.comparison, monitor_id: c.monitor_id, tag_id: c.tag_id, threshold: c.threshold.trim() })),
  notifyTo: { ...mediaFlags(t.media), users: t.users },
  ...compact({ deadband: t.deadband.trim(), clear_delay: t.clear_delay.trim(), no_data: t.no_data.trim(), renotify_every: t.renotify_every.trim() }),
  ...(t.escalation.length ? { escalation: t.escalation.map((e) => ({ after: e.after.trim(), users: e.users, ...mediaFlags(e.media) })) } : {}),
});

// ------------------------------------------------------------------ a trigger

/** @param {{ c: EditedCondition, i: number, path: string, monitors: Monitor[] | undefined, change: (patch: Partial<EditedCondition>) => void, remove: () => void, error: unknown }} props */
function ConditionLine({ c, i, path, monitors, change, remove, error }) {
  const monitor = monitors?.find((m) => m.monitor_id === c.monitor_id);
  const tags = monitor?.tags ?? [];
  const tag = tags.find((t) => t.tag_id === c.tag_id);
  return html`<div class="line" role="group" aria-label=${`Condition ${i + 1}`}>
    <${Field} as="select" label="Monitor" name=${`${path}.monitor_id`} error=${error} value=${c.monitor_id} onChange=${(/** @type {ControlEvent<HTMLSelectElement>} */ e) => change({ monitor_id: e.currentTarget.value, tag_id: "" })}>
      <option value="">${monitors ? "Choose a monitor" : "Loading…"}</option>
      ${(monitors ?? []).map((m) => html`<option value=${m.monitor_id}>${m.monitor_name}</option>`)}
      ${c.monitor_id && monitors && !monitor ? html`<option value=${c.monitor_id}>${c.monitor_id}</option>` : null}
    </${Field}>
    <${Field} as="select" label="Tag" name=${`${path}.tag_id`} error=${error} value=${c.tag_id} onChange=${(/** @type {ControlEvent<HTMLSelectElement>} */ e) => change({ tag_id: e.currentTarget.value })}>
      <option value="">Choose a tag</option>
      ${tags.map((t) => html`<option value=${t.tag_id}>${t.tag_name}${t.tag_unit ? ` (${t.tag_unit})` : ""}</option>`)}
      ${c.tag_id && !tag ? html`<option value=${c.tag_id}>${c.tag_id}</option>` : null}
    </${Field}>
    <${Field} as="select" label="Comparison" name=${`${path}.comparison`} error=${error} value=${c.comparison} onChange=${(/** @type {ControlEvent<HTMLSelectElement>} */ e) => change({ comparison: e.currentTarget.value })}>
      ${COMPARISONS.map((op) => html`<option value=${op}>${op}</option>`)}
    </${Field}>
    <${Field}
      label=${tag?.tag_unit ? `Threshold (${tag.tag_unit})` : "Threshold"}
      name=${`${path}.threshold`}
      error=${error}
      inputmode="decimal"
      value=${c.threshold}
      onInput=${(/** @type {ControlEvent<HTMLInputElement>} */ e) => change({ threshold: e.currentTarget.value })}
    />
    <${RowButton} label="Remove" what=${`condition ${i + 1}`} onClick=${remove} />
  </div>`;
}

/** @param {{ tier: EditedTier, i: number, path: string, users: Option[], change: (patch: Partial<EditedTier>) => void, remove: () => void, error: unknown }} props */
function EscalationLine({ tier, i, path, users, change, remove, error }) {
  return html`<div class="line escalation" role="group" aria-label=${`Escalation tier ${i + 1}`}>
    <${Field} label="After" name=${`${path}.after`} error=${error} placeholder="15m" hint="Still unacknowledged" value=${tier.after} onInput=${(/** @type {ControlEvent<HTMLInputElement>} */ e) => change({ after: e.currentTarget.value })} />
    <${CheckList} legend="Escalate to" name=${`${path}.users`} options=${users} value=${tier.users} onChange=${(/** @type {string[]} */ u) => change({ users: u })} error=${error} scroll />
    <${CheckList} legend="By" name=${path} options=${MEDIA} value=${tier.media} onChange=${(/** @type {string[]} */ m) => change({ media: m })} error=${error} />
    <${RowButton} label="Remove" what=${`escalation tier ${i + 1}`} onClick=${remove} />
  </div>`;
}

/** @param {{ t: EditedTrigger, i: number, set: (t: EditedTrigger) => void, remove: () => void, monitors: Monitor[] | undefined, users: Option[], error: unknown }} props */
function TriggerEditor({ t, i, set, remove, monitors, users, error }) {
  const path = `triggers[${i}]`;
  const change = (/** @type {Partial<EditedTrigger>} */ patch) => set({ ...t, ...patch });
  /** @type {(key: "name" | "minimum_duration" | "deadband" | "clear_delay" | "no_data" | "renotify_every", label: string, extra?: Record<string, unknown>) => import("preact").ComponentChildren} */
  const text = (key, label, extra = {}) =>
    html`<${Field} label=${label} name=${`${path}.${key}`} error=${error} value=${t[key]} onInput=${(/** @type {ControlEvent<HTMLInputElement>} */ e) => change({ [key]: e.currentTarget.value })} ...${extra} />`;
  /** @type {(j: number, patch: Partial<EditedCondition>) => void} */
  const setCondition = (j, patch) => change({ condition: t.condition.map((c, k) => (k === j ? { ...c, ...patch } : c)) });
  /** @type {(j: number, patch: Partial<EditedTier>) => void} */
  const setTier = (j, patch) => change({ escalation: t.escalation.map((e, k) => (k === j ? { ...e, ...patch } : e)) });
  return html`<fieldset class="group inner" data-field=${path}>
    <legend>Trigger ${i + 1}${t.name ? ` · ${t.name}` : ""}</legend>
    <div class="trigger">
      <div>
        <h4>Rule</h4>
        <div class="form-grid">
          ${text("name", "Trigger name")}
          <${Field} as="select" label="Severity" name=${`${path}.severity`} error=${error} value=${t.severity} onChange=${(/** @type {ControlEvent<HTMLSelectElement>} */ e) => change({ severity: e.currentTarget.value })}>
            ${SEVERITIES.map((s) => html`<option value=${s.value}>${s.label}</option>`)}
            ${SEVERITIES.some((s) => s.value === t.severity) ? null : html`<option value=${t.severity}>${t.severity} · Low</option>`}
          </${Field}>
          ${text("minimum_duration", "Minimum duration", { hint: `Holds this long first; ${DURATION_HINT}` })}
          <${Field} as="select" label="Conditions combine with" name=${`${path}.trigger_relation`} error=${error} value=${t.trigger_relation} onChange=${(/** @type {ControlEvent<HTMLSelectElement>} */ e) => change({ trigger_relation: e.currentTarget.value })}>
            <option value="AND">AND (all hold)</option>
            <option value="OR">OR (any holds)</option>
          </${Field}>
        </div>
        <div data-field=${`${path}.condition`}>
          ${t.condition.map(
            (c, j) => html`<${ConditionLine}
              key=${j}
              c=${c}
              i=${j}
              path=${`${path}.condition[${j}]`}
              monitors=${monitors}
              change=${(/** @type {Partial<EditedCondition>} */ patch) => setCondition(j, patch)}
              remove=${() => change({ condition: t.condition.filter((_, k) => k !== j) })}
              error=${error}
            />`,
          )}
          ${t.condition.length === 0 ? html`<p class="muted small">No condition: this trigger never fires.</p>` : null}
          <button type="button" class="add" onClick=${() => change({ condition: [...t.condition, conditionState()] })}>Add condition</button>
        </div>
      </div>
      <div>
        <h4>Notify</h4>
        <${CheckList} legend="Notify by" name=${`${path}.notifyTo`} options=${MEDIA} value=${t.media} onChange=${(/** @type {string[]} */ m) => change({ media: m })} error=${error} />
        <${CheckList} legend="Notify users" name=${`${path}.notifyTo.users`} options=${users} value=${t.users} onChange=${(/** @type {string[]} */ u) => change({ users: u })} error=${error} scroll />
        <h4>Alarm handling</h4>
        <div class="form-grid">
          ${text("deadband", "Deadband", { inputmode: "decimal", hint: "In the tag's unit: clears only this far past the threshold" })}
          ${text("clear_delay", "Clear delay", { hint: `Stays active this long after clearing; ${DURATION_HINT}` })}
          ${text("no_data", "No data after", { hint: "Opens an alert when the tag goes silent this long" })}
          ${text("renotify_every", "Re-notify every", { hint: "While active and unacknowledged" })}
        </div>
        <div data-field=${`${path}.escalation`}>
          ${t.escalation.map(
            (tier, j) => html`<${EscalationLine}
              key=${j}
              tier=${tier}
              i=${j}
              path=${`${path}.escalation[${j}]`}
              users=${users}
              change=${(/** @type {Partial<EditedTier>} */ patch) => setTier(j, patch)}
              remove=${() => change({ escalation: t.escalation.filter((_, k) => k !== j) })}
              error=${error}
            />`,
          )}
          <button type="button" class="add" onClick=${() => change({ escalation: [...t.escalation, { after: "", users: [], media: ["email"] }] })}>Add escalation tier</button>
        </div>
      </div>
    </div>
    <${RowButton} label="Remove trigger" what=${t.name || `${i + 1}`} onClick=${remove} />
  </fieldset>`;
}

// ------------------------------------------------------------------ the watcher form

/** @param {Editor<Watcher> & { start: Place, show: (place: Place) => void }} props */
function WatcherEditor({ row, start, onDone, onCancel, show }) {
  const [place, choose] = usePlace(row ? { site_id: row.site_id, plant_id: row.plant_id, function_id: row.function_id ?? "" } : start);
  const [name, setName] = useState(row?.watcher_name ?? "");
  const [gateway, setGateway] = useState(row?.gateway_id ?? "");
  const [enabled, setEnabled] = useState(row ? Number(row.is_enabled) === 1 : true);
  const [triggers, setTriggers] = useState(() => (row?.triggers?.length ? row.triggers.map(triggerState) : [triggerState()]));
  /** @type {import("../../lib/ui.js").Data<import("../../lib/types.js").Pipeline[]>} */
  const gateways = useData(() => (place.plant_id ? get("/_config/pipelines/_list", { plant_id: place.plant_id }) : Promise.resolve([])), [place.plant_id]);
  const monitors = useData(() => (place.function_id ? monitorsWithTags({ function_id: place.function_id }) : Promise.resolve([])), [place.function_id]);
  const userList = useUsers();
  const users = (userList.data ?? []).map((u) => ({ value: u.username, label: u.username }));

  const submit = useSubmit(async () => {
    const body = {
      watcher_name: name,
      function_id: place.function_id,
      plant_id: place.plant_id,
      site_id: place.site_id,
      gateway_id: gateway,
      is_enabled: enabled ? 1 : 0,
      triggers: triggers.map(triggerBody),
    };
    const answer = row ? await put(`/_alerting/watchers/${enc(row.watcher_id)}`, body) : await post("/_alerting/watchers", body);
    show(place);
    return answer;
  }, onDone);
  const e = submit.error;
  const known = (gateways.data ?? []).some((g) => g.pipeline_id === gateway);
  return html`<${EditorForm} title=${row ? `Edit watcher ${row.watcher_name}` : "New watcher"} submit=${submit} submitLabel=${row ? "Save" : "Create"} onCancel=${onCancel} className="watcher-form">
    <div class="form-grid">
      <${Field} label="Watcher name" name="watcher_name" error=${e} required value=${name} onInput=${(/** @type {ControlEvent<HTMLInputElement>} */ ev) => setName(ev.currentTarget.value)} />
      <${PlaceSelects} place=${place} choose=${choose} to="function" error=${e} />
      <${Field} as="select" label="Gateway" name="gateway_id" error=${e} value=${gateway} onChange=${(/** @type {ControlEvent<HTMLSelectElement>} */ ev) => setGateway(ev.currentTarget.value)} hint="Its readings are watched; one watcher per gateway">
        <option value="">${gateways.data ? (gateways.data.length ? "Choose a gateway" : "No pipeline in this plant") : "Loading…"}</option>
        ${(gateways.data ?? []).map((g) => html`<option value=${g.pipeline_id}>${g.pipeline_name}${g.function_name ? ` (${g.function_name})` : ""}</option>`)}
        ${gateway && gateways.data && !known ? html`<option value=${gateway}>${row?.gateway_name ?? gateway}</option>` : null}
      </${Field}>
      <div class="field"><span class="hint">State</span><${Check} label="Enabled" name="is_enabled" checked=${enabled} onChange=${setEnabled} /></div>
    </div>
    <${ErrorNote} error=${monitors.error} />
    <div data-field="triggers">
      ${triggers.map(
        (t, i) => html`<${TriggerEditor}
          key=${t.id}
          t=${t}
          i=${i}
          set=${(/** @type {EditedTrigger} */ next) => setTriggers(triggers.map((x, j) => (j === i ? next : x)))}
          remove=${() => setTriggers(triggers.filter((_, j) => j !== i))}
          monitors=${monitors.data}
          users=${users}
          error=${e}
        />`,
      )}
      <button type="button" class="add" onClick=${() => setTriggers([...triggers, triggerState()])}>Add trigger</button>
    </div>
  </${EditorForm}>`;
}

// ------------------------------------------------------------------ maintenance windows

/** A `datetime-local` value (the browser's zone) as ISO 8601 with its offset; empty stays empty. */
const isoOf = (/** @type {string} */ local) => (local ? new Date(local).toISOString() : "");

/** @param {{ watcher: Watcher }} props */
function Windows({ watcher }) {
  /** @type {import("../../lib/ui.js").Data<Watcher>} */
  const fetched = useData(() => get(`/_alerting/watchers/${enc(watcher.watcher_id)}`), [watcher.watcher_id]);
  const [v, setV] = useState({ from: "", to: "", reason: "" });
  const [notice, setNotice] = useState(/** @type {string | null} */ (null));
  const [failure, setFailure] = useState(/** @type {unknown} */ (null));
  const submit = useSubmit(
    async () => {
      await post(`/_alerting/watchers/${enc(watcher.watcher_id)}/_suppress`, compact({ from: isoOf(v.from), to: isoOf(v.to), reason: v.reason }));
      return "Maintenance window added";
    },
    (answer) => {
      setNotice(answer);
      setV({ from: "", to: "", reason: "" });
      fetched.reload();
    },
  );
  /** @param {Suppression} w */
  const remove = async (w) => {
    setFailure(null);
    try {
      setNotice(await del(`/_alerting/watchers/${enc(watcher.watcher_id)}/_suppress/${enc(w.id)}`));
      fetched.reload();
    } catch (err) {
      setFailure(withField(err));
    }
  };
  const now = Date.now();
  const e = submit.error;
  const bind = (/** @type {"from" | "to" | "reason"} */ key) => ({ value: v[key], onInput: (/** @type {ControlEvent<HTMLInputElement>} */ ev) => setV((s) => ({ ...s, [key]: ev.currentTarget.value })) });
  return html`<section class="card windows" aria-labelledby="windows-title">
    <h3 id="windows-title">Maintenance windows of ${watcher.watcher_name}</h3>
    <p class="hint">Alerts that open inside a window are kept but notify nobody.</p>
    ${notice ? html`<p class="done" role="status">✓ ${notice}</p>` : null}
    <${ErrorNote} error=${failure ?? fetched.error} />
    ${fetched.data === undefined && !fetched.error ? html`<${Loading} what="Loading the windows" />` : null}
    ${fetched.data
      ? html`<${Table}
          caption="Maintenance windows"
          rows=${fetched.data.suppressions ?? []}
          rowKey=${(/** @type {Suppression} */ w) => w.id}
          empty="No maintenance window"
          columns=${[
            { label: "From", cell: (/** @type {Suppression} */ w) => time(w.from) },
            { label: "To", cell: (/** @type {Suppression} */ w) => time(w.to) },
            {
              label: "Now",
              cell: (/** @type {Suppression} */ w) =>
                Date.parse(w.to) < now
                  ? html`<span class="muted">Past</span>`
                  : Date.parse(w.from) <= now
                    ? html`<${Status} tone="info">Suppressing</${Status}>`
                    : "Planned",
            },
            { label: "Reason", cell: (/** @type {Suppression} */ w) => w.reason },
            { label: "By", cell: (/** @type {Suppression} */ w) => w.created_by ?? "—" },
            { label: "Actions", cell: (/** @type {Suppression} */ w) => html`<${RowButton} label="Remove" what=${`window ${time(w.from)}`} onClick=${() => remove(w)} />` },
          ]}
        />`
      : null}
    <form class="window-form" aria-label="New maintenance window" onSubmit=${submit.onSubmit} novalidate>
      <div class="form-grid">
        <${Field} label="From" name="from" type="datetime-local" error=${e} ...${bind("from")} />
        <${Field} label="To" name="to" type="datetime-local" error=${e} ...${bind("to")} />
        <${Field} label="Reason" name="reason" error=${e} ...${bind("reason")} />
        <div class="field"><span class="hint"> </span><button type="submit" disabled=${submit.busy}>Add window</button></div>
      </div>
      ${e && !/** @type {(string | null | undefined)[]} */ (["from", "to", "reason"]).includes(e.field) ? html`<${ErrorNote} error=${e} />` : null}
    </form>
  </section>`;
}

// ------------------------------------------------------------------ the section

/** @param {{ t: Trigger }} props */
function TriggerSummary({ t }) {
  const fields = [t.deadband ? `deadband ${t.deadband}` : null, t.clear_delay ? `clear delay ${t.clear_delay}` : null, t.escalation?.length ? `${t.escalation.length} escalation tier${t.escalation.length > 1 ? "s" : ""}` : null].filter(Boolean);
  return html`<li><${Severity} level=${levelOf(t.severity)} /> ${t.name} <span class="muted small">after ${t.minimum_duration}${fields.length ? ` · ${fields.join(" · ")}` : ""}</span></li>`;
}

/** @param {import("../../lib/types.js").PageProps} props */
export function Watchers({ user }) {
  const [place, choose, setPlace] = usePlace(undefined, true);
  /** @type {import("../../lib/ui.js").Data<Watcher[]>} */
  const list = useData(() => (place.function_id ? get("/_alerting/watchers/_list", { function_id: place.function_id }) : Promise.resolve([])), [place.function_id]);
  return html`<${CrudSection}
    title="Watchers"
    noun="watcher"
    filters=${html`<${PlaceSelects} place=${place} choose=${choose} to="function" />`}
    list=${list}
    columns=${[
      { label: "Name", cell: (/** @type {Watcher} */ w) => html`<strong>${w.watcher_name}</strong>` },
      { label: "Gateway", cell: (/** @type {Watcher} */ w) => w.gateway_name },
      { label: "State", cell: (/** @type {Watcher} */ w) => (Number(w.is_enabled) === 1 ? "Enabled" : html`<${Status} tone="stale">Disabled</${Status}>`) },
      { label: "Triggers", cell: (/** @type {Watcher} */ w) => html`<ul class="tag-list">${(w.triggers ?? []).map((t) => html`<${TriggerSummary} key=${t.id} t=${t} />`)}</ul>` },
      { label: "Alerts", num: true, cell: (/** @type {Watcher} */ w) => w.total_alerts },
      { label: "Last alert", cell: (/** @type {Watcher} */ w) => (w.latest_alert_date ? time(w.latest_alert_date) : html`<span class="muted">none</span>`) },
    ]}
    rowKey=${(/** @type {Watcher} */ w) => w.watcher_id}
    rowName=${(/** @type {Watcher} */ w) => w.watcher_name}
    canCreate=${mayWrite(user, "watcher")}
    canEdit=${mayWrite(user, "watcher")}
    canDelete=${mayWrite(user, "watcher")}
    renderEditor=${(/** @type {Editor<Watcher>} */ p) =>
      html`<${WatcherEditor} ...${p} start=${place} show=${(/** @type {Place} */ at) => setPlace({ ...at, asset_id: "" })} />${p.row ? html`<${Windows} watcher=${p.row} />` : null}`}
    onDelete=${(/** @type {Watcher} */ w) => del(`/_alerting/watchers/${enc(w.watcher_id)}`)}
  />`;
}
