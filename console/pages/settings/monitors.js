// @ts-check
// Settings: monitors and their tags with thresholds (spec ops 17-22). A tag's thresholds are the
// levels the CM values are coloured by (services/cm/status.ts: below operational normal, then
// caution, warning, and critical at or above warning), in the tag's unit.
import { useState } from "preact/hooks";
import { del, post, put } from "../../lib/api.js";
import { Field, html, monitorKind, time, useData } from "../../lib/ui.js";
import { CrudSection, EditorForm, PlaceSelects, RowButton, compact, mayWrite, monitorsWithTags, usePlace, useSubmit } from "../../lib/settings-kit.js";

/** @typedef {import("../../lib/types.js").Monitor} Monitor */
/** @typedef {import("../../lib/types.js").MonitorTag} MonitorTag */
/** @typedef {import("../../lib/settings-kit.js").Place} Place */
/** @template {EventTarget} T @typedef {import("../../lib/types.js").ControlEvent<T>} ControlEvent */
/**
 * A tag as the form edits it: its texts, and each threshold level's text under the level's key.
 * @typedef {{ tag_id?: string, tag_name: string, tag_desc: string, tag_unit: string, [level: string]: string | undefined }} EditedTag
 */

const enc = encodeURIComponent;
const TYPES = ["condition-monitor", "process-monitor", "energy-monitor"];
const UNITS = ["C", "°C", "mm/s", "g", "µm", "bar", "m3/h", "rpm", "%", "kWh", "kW", "V", "A", "Hz"];
/** @type {{ key: keyof import("../../lib/types.js").Thresholds, label: string }[]} */
const LEVELS = [
  { key: "operational", label: "Operational" },
  { key: "caution", label: "Caution" },
  { key: "warning", label: "Warning" },
];

/**
 * A tag as the form edits it: texts, thresholds flattened.
 * @type {(t?: Partial<MonitorTag>) => EditedTag}
 */
const tagState = (t = {}) => ({
  tag_id: t.tag_id,
  tag_name: t.tag_name ?? "",
  tag_desc: t.tag_desc ?? "",
  tag_unit: t.tag_unit ?? "",
  ...Object.fromEntries(LEVELS.map((l) => [l.key, t.thresholds?.[l.key] ?? ""])),
});

/** The spec's monitor tag; a new tag goes without tag_id (the service gives it one). */
const tagBody = (/** @type {EditedTag} */ t) =>
  compact({
    tag_id: t.tag_id,
    tag_name: t.tag_name,
    tag_desc: t.tag_desc,
    tag_unit: t.tag_unit,
    thresholds: compact(Object.fromEntries(LEVELS.map((l) => [l.key, String(t[l.key]).trim()]))),
  });

/** @param {{ tag: MonitorTag }} props */
function Thresholds({ tag }) {
  const levels = LEVELS.map((l) => tag.thresholds?.[l.key]).filter((x) => x !== undefined && x !== "");
  if (levels.length === 0) return html`<span class="thresholds">no thresholds</span>`;
  return html`<span class="thresholds" title="operational / caution / warning">${LEVELS.map((l) => tag.thresholds?.[l.key] ?? "–").join(" / ")}${tag.tag_unit ? ` ${tag.tag_unit}` : ""}</span>`;
}

/**
 * The tags of a monitor as rows of inputs; an error names its input (`tags[1].thresholds.caution`).
 * @param {{ tags: EditedTag[], setTags: (tags: EditedTag[]) => void, error: unknown }} props
 */
export function TagsEditor({ tags, setTags, error }) {
  /** @type {(i: number, key: string, value: string) => void} */
  const change = (i, key, value) => setTags(tags.map((t, j) => (j === i ? { ...t, [key]: value } : t)));
  return html`<fieldset class="group" data-field="tags">
    <legend>Tags</legend>
    <p class="hint">Thresholds in the tag's unit, rising: below Operational is normal; Caution and Warning mark the abnormal levels.</p>
    ${tags.map(
      (t, i) => html`<div class="line" role="group" aria-label=${`Tag ${i + 1}`} key=${i}>
        <${Field} label="Tag name" name=${`tags[${i}].tag_name`} error=${error} value=${t.tag_name} onInput=${(/** @type {ControlEvent<HTMLInputElement>} */ e) => change(i, "tag_name", e.currentTarget.value)} />
        <${Field} label="Description" name=${`tags[${i}].tag_desc`} error=${error} value=${t.tag_desc} onInput=${(/** @type {ControlEvent<HTMLInputElement>} */ e) => change(i, "tag_desc", e.currentTarget.value)} />
        <${Field} label="Unit" name=${`tags[${i}].tag_unit`} error=${error} list="settings-units" value=${t.tag_unit} onInput=${(/** @type {ControlEvent<HTMLInputElement>} */ e) => change(i, "tag_unit", e.currentTarget.value)} />
        ${LEVELS.map(
          (l) => html`<${Field}
            key=${l.key}
            label=${l.label}
            name=${`tags[${i}].thresholds.${l.key}`}
            error=${error}
            inputmode="decimal"
            value=${t[l.key]}
            onInput=${(/** @type {ControlEvent<HTMLInputElement>} */ e) => change(i, l.key, e.currentTarget.value)}
          />`,
        )}
        <${RowButton} label="Remove" what=${`tag ${i + 1}`} onClick=${() => setTags(tags.filter((_, j) => j !== i))} />
      </div>`,
    )}
    <button type="button" class="add" onClick=${() => setTags([...tags, tagState()])}>Add tag</button>
    <datalist id="settings-units">${UNITS.map((u) => html`<option value=${u} />`)}</datalist>
  </fieldset>`;
}

/** @param {import("../../lib/settings-kit.js").Editor<Monitor> & { start: Place, show: (place: Place) => void }} props */
function MonitorEditor({ row, start, onDone, onCancel, show }) {
  const [place, choose] = usePlace(start);
  const [name, setName] = useState(row?.monitor_name ?? "");
  const [type, setType] = useState(row?.monitor_type ?? "condition-monitor");
  const [tags, setTags] = useState(() => (row?.tags?.length ? row.tags.map(tagState) : [tagState()]));
  const submit = useSubmit(async () => {
    const body = { monitor_name: name, monitor_type: type, tags: tags.map(tagBody) };
    if (row) {
      await put(`/_config/monitors/${enc(row.monitor_id)}`, { ...body, specs: row.specs ?? {}, attributes: row.attributes ?? {} });
    } else {
      await post("/_config/monitors", compact({ ...body, function_id: place.function_id, asset_id: place.asset_id }));
      show(place);
    }
    return `Monitor ${name} ${row ? "saved" : "created"}`;
  }, onDone);
  const e = submit.error;
  const types = TYPES.includes(type) ? TYPES : [...TYPES, type];
  return html`<${EditorForm} title=${row ? `Edit monitor ${row.monitor_name}` : "New monitor"} submit=${submit} submitLabel=${row ? "Save" : "Create"} onCancel=${onCancel}>
    <div class="form-grid">
      <${Field} label="Monitor name" name="monitor_name" error=${e} required value=${name} onInput=${(/** @type {ControlEvent<HTMLInputElement>} */ ev) => setName(ev.currentTarget.value)} />
      <${Field} as="select" label="Monitor type" name="monitor_type" error=${e} value=${type} onChange=${(/** @type {ControlEvent<HTMLSelectElement>} */ ev) => setType(ev.currentTarget.value)}>
        ${types.map((t) => html`<option value=${t}>${monitorKind(t)}</option>`)}
      </${Field}>
      ${row
        ? html`<p class="muted small wide">A monitor stays on the function or asset it was created on.</p>`
        : html`<${PlaceSelects} place=${place} choose=${choose} to="asset" optional=${["asset"]} anyLabel="— on the function —" error=${e} />`}
    </div>
    <${TagsEditor} tags=${tags} setTags=${setTags} error=${e} />
  </${EditorForm}>`;
}

/** @param {import("../../lib/types.js").PageProps} props */
export function Monitors({ user }) {
  const [place, choose, setPlace] = usePlace(undefined, true);
  const query = place.asset_id ? { asset_id: place.asset_id } : place.function_id ? { function_id: place.function_id } : null;
  /** @type {import("../../lib/ui.js").Data<Monitor[]>} */
  const list = useData(() => (query ? monitorsWithTags(query) : Promise.resolve([])), [JSON.stringify(query)]);
  return html`<${CrudSection}
    title="Monitors"
    noun="monitor"
    filters=${html`<${PlaceSelects} place=${place} choose=${choose} to="asset" optional=${["asset"]} anyLabel="All assets" />`}
    list=${list}
    columns=${[
      { label: "Name", cell: (/** @type {Monitor} */ m) => html`<strong>${m.monitor_name}</strong>` },
      { label: "Type", cell: (/** @type {Monitor} */ m) => monitorKind(m.monitor_type) },
      {
        label: "Tags (operational / caution / warning)",
        cell: (/** @type {Monitor} */ m) =>
          m.tags?.length
            ? html`<ul class="tag-list">${m.tags.map((t) => html`<li key=${t.tag_id}>${t.tag_name}${t.tag_unit ? html` <span class="muted">(${t.tag_unit})</span>` : null} <${Thresholds} tag=${t} /></li>`)}</ul>`
            : html`<span class="muted">no tags</span>`,
      },
      { label: "On a pipeline", cell: (/** @type {Monitor} */ m) => (m.device_registered ? "Yes" : "No") },
      { label: "Created", cell: (/** @type {Monitor} */ m) => time(m.created_at) },
    ]}
    rowKey=${(/** @type {Monitor} */ m) => m.monitor_id}
    rowName=${(/** @type {Monitor} */ m) => m.monitor_name}
    canCreate=${mayWrite(user, "monitor")}
    canEdit=${mayWrite(user, "monitor")}
    canDelete=${mayWrite(user, "monitor")}
    renderEditor=${(/** @type {import("../../lib/settings-kit.js").Editor<Monitor>} */ p) => html`<${MonitorEditor} ...${p} start=${place} show=${(/** @type {Place} */ at) => setPlace(at)} />`}
    onDelete=${(/** @type {Monitor} */ m) => del(`/_config/monitors/${enc(m.monitor_id)}`)}
  />`;
}
