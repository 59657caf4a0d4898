// @ts-check
// Settings: watchers and their triggers (spec ops 1-6, every trigger field of the spec and of
// alarm management, docs/api-tour.md: deadband, clear delay, no-data, re-notify, escalation tiers),
// and a watcher's maintenance windows (`_suppress`). A watcher watches one gateway's readings.
import { useRef, useState } from "preact/hooks";
import { ApiError, del, get, post, put } from "../../lib/api.js";
import { ErrorNote, Field, Loading, Problems, Severity, Status, Table, html, time, useData } from "../../lib/ui.js";
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
/**
 * A velocity tag's threshold may be an ISO 20816-3 zone (docs/api-tour.md, "Severity, bearing evidence and the envelope spectrum"):
 * `zone:A`…`zone:D`, compared with `>=` (that zone or worse) or `==` (that zone) only.
 */
const ZONES = ["A", "B", "C", "D"];
const ZONE_COMPARISONS = [">=", "=="];
const zoneOfThreshold = (/** @type {unknown} */ threshold) => /^zone:([ABCD])$/.exec(String(threshold ?? ""))?.[1] ?? null;
/** A zone condition in plain words: "ISO 20816 zone C or worse". */
const zoneWords = (/** @type {string} */ zone, /** @type {string} */ comparison) => `ISO 20816 zone ${zone}${comparison === "==" ? "" : " or worse"}`;
/** A condition monitor's tag in mm/s (the service's `isVelocityTag`, lib/iso20816.ts). */
const isVelocity = (/** @type {Monitor | undefined} */ monitor, /** @type {{ tag_unit?: string } | undefined} */ tag) =>
  monitor?.monitor_type === "condition-monitor" && (tag?.tag_unit ?? "").trim() === "mm/s";

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

// ------------------------------------------------------------------ the page's own checks

/** A duration as the service reads it (services/alerting/duration.ts): a number and ms, s, m or h. */
const DURATION = /^\d+(\.\d+)?(ms|s|m|h)$/;
const isNumber = (/** @type {string} */ text) => text.trim() !== "" && Number.isFinite(Number(text.trim()));

/** What each input must be, in plain words (the form says them all at once, beside each input). */
const SAY = {
  watcher_name: "Give the watcher a name.",
  function_id: "Choose the function these alerts belong to.",
  gateway_id: "Choose the gateway whose readings are watched.",
  gatewayWatched: "This gateway already has a watcher: edit that one, or choose another gateway.",
  triggers: "Add at least one trigger.",
  name: "Give the trigger a name.",
  minimum_duration: "Write how long it must hold as a number and a unit: 0s, 30s, 5m or 2h.",
  monitor_id: "Choose the monitor.",
  tag_id: "Choose the tag.",
  threshold: "Write the threshold as a number, such as 80 or 7.1.",
  deadband: "Write the deadband as a number of 0 or more, in the tag's unit, or leave it empty.",
  duration: "Write a duration such as 30s, 5m or 2h, or leave it empty.",
  after: "Write after how long, such as 15m.",
  users: "Choose at least one user to escalate to.",
  notifyUsers: "Choose at least one user to notify.",
  notifyBy: "Choose at least one way to notify: email, SMS or WhatsApp.",
  silence: "Write a duration longer than 0, such as 5m, or leave it empty.",
};

/**
 * Every problem of the form at once, in the form's order, by the names the service gives its
 * inputs (`triggers[0].condition[1].threshold`); none: an empty object.
 * @param {{ name: string, function_id: string, gateway: string, watched: Set<string>, triggers: EditedTrigger[] }} form
 * @returns {Record<string, string>}
 */
function problemsOf({ name, function_id, gateway, watched, triggers }) {
  /** @type {Record<string, string>} */
  const found = {};
  if (!name.trim()) found.watcher_name = SAY.watcher_name;
  if (!function_id) found.function_id = SAY.function_id;
  if (!gateway) found.gateway_id = SAY.gateway_id;
  else if (watched.has(gateway)) found.gateway_id = SAY.gatewayWatched;
  if (triggers.length === 0) found.triggers = SAY.triggers;
  triggers.forEach((t, i) => {
    const path = `triggers[${i}]`;
    if (!t.name.trim()) found[`${path}.name`] = SAY.name;
    if (!DURATION.test(t.minimum_duration.trim())) found[`${path}.minimum_duration`] = SAY.minimum_duration;
    if (t.media.length === 0) found[`${path}.notifyTo`] = SAY.notifyBy;
    if (t.users.length === 0) found[`${path}.notifyTo.users`] = SAY.notifyUsers;
    t.condition.forEach((c, j) => {
      const at = `${path}.condition[${j}]`;
      if (!c.monitor_id) found[`${at}.monitor_id`] = SAY.monitor_id;
      else if (!c.tag_id) found[`${at}.tag_id`] = SAY.tag_id;
      // A zone comes from its own choice (never typed), with its comparisons only.
      if (!zoneOfThreshold(c.threshold) && !isNumber(c.threshold)) found[`${at}.threshold`] = SAY.threshold;
    });
    if (t.deadband.trim() && !(isNumber(t.deadband) && Number(t.deadband) >= 0)) found[`${path}.deadband`] = SAY.deadband;
    if (t.clear_delay.trim() && !DURATION.test(t.clear_delay.trim())) found[`${path}.clear_delay`] = SAY.duration;
    // A silence or a period of 0 is refused by the service (it would hold between any two readings, or notify on every tick).
    for (const key of /** @type {const} */ (["no_data", "renotify_every"])) {
      const v = t[key].trim();
      if (v && !(DURATION.test(v) && parseFloat(v) > 0)) found[`${path}.${key}`] = SAY.silence;
    }
    t.escalation.forEach((e, k) => {
      if (!DURATION.test(e.after.trim())) found[`${path}.escalation[${k}].after`] = SAY.after;
      if (e.users.length === 0) found[`${path}.escalation[${k}].users`] = SAY.users;
      if (e.media.length === 0) found[`${path}.escalation[${k}]`] = SAY.notifyBy;
    });
  });
  return found;
}

/**
 * The service's refusal in the same plain words, beside the input it names: `Invalid input:
 * triggers[0].minimum_duration` says what that input must be; the gateway's watcher, the gateway.
 * @param {unknown} e
 */
function plainRefusal(e) {
  if (!(e instanceof ApiError)) return e;
  if (/^Watcher already exists for (a )?given/.test(e.message)) return new Problems({ gateway_id: SAY.gatewayWatched });
  // The service names no input for whom and how to notify: the first trigger's lists.
  if (/at least one user to notify$/.test(e.message)) return new Problems({ "triggers[0].notifyTo.users": SAY.notifyUsers });
  if (/at least one notification medium/.test(e.message)) return new Problems({ "triggers[0].notifyTo": SAY.notifyBy });
  if (!e.field) return e;
  const last = e.field.replace(/^.*[.\]]/, "").replace(/\[\d+\]$/, "");
  const words = last === "clear_delay" ? SAY.duration : last === "no_data" || last === "renotify_every" ? SAY.silence : SAY[/** @type {keyof typeof SAY} */ (last)];
  return words ? new Problems({ [e.field]: words }) : e;
}

/**
 * The gateways of the plant that have a watcher already (one watcher per gateway), but `own`'s.
 * @param {string} plantId
 * @param {string | undefined} own the watcher being edited
 * @returns {Promise<Set<string>>}
 */
async function watchedGateways(plantId, own) {
  /** @type {import("../../lib/types.js").PlantFunction[]} */
  const functions = await get("/_config/functions/_list", { plant_id: plantId });
  /** @type {Watcher[][]} */
  const lists = await Promise.all(functions.map((f) => get("/_alerting/watchers/_list", { function_id: f.function_id }).catch(() => [])));
  return new Set(lists.flat().filter((w) => w.watcher_id !== own).map((w) => w.gateway_id));
}

// ------------------------------------------------------------------ a trigger

/** @param {{ c: EditedCondition, i: number, path: string, monitors: Monitor[] | undefined, change: (patch: Partial<EditedCondition>) => void, remove: () => void, error: unknown }} props */
function ConditionLine({ c, i, path, monitors, change, remove, error }) {
  const monitor = monitors?.find((m) => m.monitor_id === c.monitor_id);
  const tags = monitor?.tags ?? [];
  const tag = tags.find((t) => t.tag_id === c.tag_id);
  // A zone is offered on a velocity tag only; a zone kept from before stays shown until changed.
  const zone = zoneOfThreshold(c.threshold);
  const zoned = isVelocity(monitor, tag) || (zone !== null && !tag);
  return html`<div class="line" role="group" aria-label=${`Condition ${i + 1}`}>
    <${Field} as="select" label="Monitor" name=${`${path}.monitor_id`} error=${error} value=${c.monitor_id} onChange=${(/** @type {ControlEvent<HTMLSelectElement>} */ e) => change({ monitor_id: e.currentTarget.value, tag_id: "", ...(zone ? { threshold: "" } : {}) })}>
      <option value="">${monitors ? "Choose a monitor" : "Loading…"}</option>
      ${(monitors ?? []).map((m) => html`<option value=${m.monitor_id}>${m.monitor_name}</option>`)}
      ${c.monitor_id && monitors && !monitor ? html`<option value=${c.monitor_id}>${c.monitor_id}</option>` : null}
    </${Field}>
    <${Field} as="select" label="Tag" name=${`${path}.tag_id`} error=${error} value=${c.tag_id} onChange=${(/** @type {ControlEvent<HTMLSelectElement>} */ e) => {
      const next = tags.find((t) => t.tag_id === e.currentTarget.value);
      change({ tag_id: e.currentTarget.value, ...(zone && !isVelocity(monitor, next) ? { threshold: "" } : {}) });
    }}>
      <option value="">Choose a tag</option>
      ${tags.map((t) => html`<option value=${t.tag_id}>${t.tag_name}${t.tag_unit ? ` (${t.tag_unit})` : ""}</option>`)}
      ${c.tag_id && !tag ? html`<option value=${c.tag_id}>${c.tag_id}</option>` : null}
    </${Field}>
    <${Field} as="select" label="Comparison" name=${`${path}.comparison`} error=${error} value=${c.comparison} onChange=${(/** @type {ControlEvent<HTMLSelectElement>} */ e) => change({ comparison: e.currentTarget.value })}>
      ${(zone ? ZONE_COMPARISONS : COMPARISONS).map((op) => html`<option value=${op}>${op}</option>`)}
    </${Field}>
    <${Field}
      label=${tag?.tag_unit ? `Threshold (${tag.tag_unit})` : "Threshold"}
      disabled=${zone !== null}
      name=${`${path}.threshold`}
      error=${error}
      type="number"
      step="any"
      value=${zone ? "" : c.threshold}
      onInput=${(/** @type {ControlEvent<HTMLInputElement>} */ e) => change({ threshold: e.currentTarget.value })}
    />
    ${zoned
      ? html`<div class="zone-choice"><${Field} as="select" label="Zone" name=${`${path}.zone`} error=${error} value=${zone ?? ""}
          onChange=${(/** @type {ControlEvent<HTMLSelectElement>} */ e) => {
            const z = e.currentTarget.value;
            change(z ? { threshold: `zone:${z}`, ...(ZONE_COMPARISONS.includes(c.comparison) ? {} : { comparison: ">=" }) } : { threshold: "" });
          }}>
          <option value="">No zone: a number</option>
          ${ZONES.map((z) => html`<option value=${z}>${zoneWords(z, c.comparison)}</option>`)}
        </${Field}></div>`
      : null}
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
          ${text("deadband", "Deadband", { type: "number", step: "any", min: "0", hint: "In the tag's unit: clears only this far past the threshold" })}
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
  const watched = useData(() => (place.plant_id ? watchedGateways(place.plant_id, row?.watcher_id) : Promise.resolve(new Set())), [place.plant_id, row?.watcher_id]);
  const userList = useUsers();
  const users = (userList.data ?? []).map((u) => ({ value: u.username, label: u.username }));
  const pageCheck = useRef(/** @type {Problems | null} */ (null));
  const check = () => problemsOf({ name, function_id: place.function_id, gateway, watched: watched.data ?? new Set(), triggers });

  const submit = useSubmit(async () => {
    // Every problem at once, in plain words, before anything is sent.
    const found = check();
    if (Object.keys(found).length > 0) throw (pageCheck.current = new Problems(found));
    const body = {
      watcher_name: name,
      function_id: place.function_id,
      plant_id: place.plant_id,
      site_id: place.site_id,
      gateway_id: gateway,
      is_enabled: enabled ? 1 : 0,
      triggers: triggers.map(triggerBody),
    };
    try {
      const answer = row ? await put(`/_alerting/watchers/${enc(row.watcher_id)}`, body) : await post("/_alerting/watchers", body);
      show(place);
      return answer;
    } catch (err) {
      throw plainRefusal(err);
    }
  }, onDone);
  // Once the page has named the problems, each one goes as soon as it is put right.
  const e = submit.error !== null && submit.error === pageCheck.current ? new Problems(check()) : submit.error;
  const known = (gateways.data ?? []).some((g) => g.pipeline_id === gateway);
  // A gateway that has a watcher is not offered (one watcher per gateway); the one chosen stays.
  const offered = (gateways.data ?? []).filter((g) => g.pipeline_id === gateway || !watched.data?.has(g.pipeline_id));
  return html`<${EditorForm} title=${row ? `Edit watcher ${row.watcher_name}` : "New watcher"} submit=${submit} submitLabel=${row ? "Save" : "Create"} onCancel=${onCancel} className="watcher-form">
    <div class="form-grid">
      <${Field} label="Watcher name" name="watcher_name" error=${e} required value=${name} onInput=${(/** @type {ControlEvent<HTMLInputElement>} */ ev) => setName(ev.currentTarget.value)} />
      <${PlaceSelects} place=${place} choose=${choose} to="function" error=${e} />
      <${Field} as="select" label="Gateway" name="gateway_id" error=${e} value=${gateway} onChange=${(/** @type {ControlEvent<HTMLSelectElement>} */ ev) => setGateway(ev.currentTarget.value)} hint="Its readings are watched; one watcher per gateway">
        <option value="">${gateways.data ? (offered.length ? "Choose a gateway" : gateways.data.length ? "Every gateway here has a watcher" : "No pipeline in this plant") : "Loading…"}</option>
        ${offered.map((g) => html`<option value=${g.pipeline_id}>${g.pipeline_name}${g.function_name ? ` (${g.function_name})` : ""}</option>`)}
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
  const zones = (t.condition ?? []).flatMap((c) => {
    const zone = zoneOfThreshold(c.threshold);
    return zone ? [`${c.tag_id} in ${zoneWords(zone, c.comparison)}`] : [];
  });
  const fields = [...zones, t.deadband ? `deadband ${t.deadband}` : null, t.clear_delay ? `clear delay ${t.clear_delay}` : null, t.escalation?.length ? `${t.escalation.length} escalation tier${t.escalation.length > 1 ? "s" : ""}` : null].filter(Boolean);
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
