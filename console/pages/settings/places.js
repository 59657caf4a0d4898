// @ts-check
// Settings: the hierarchy a plant is described by — sites, plants, functions and assets (spec ops
// 11-16, 23-37). Each form sends the spec's body and shows the service's answer.
import { useState } from "preact/hooks";
import { del, get, post, put } from "../../lib/api.js";
import { Field, Loading, html, num, useData } from "../../lib/ui.js";
import { CrudSection, EditorForm, PlaceSelects, binder, compact, mayWrite, numberOf, usePlace, useSubmit } from "../../lib/settings-kit.js";

/** @typedef {import("../../lib/types.js").Site} Site */
/** @typedef {import("../../lib/types.js").PlantRow} PlantRow */
/** @typedef {import("../../lib/types.js").FunctionRow} FunctionRow */
/** @typedef {import("../../lib/types.js").Asset} Asset */
/** @typedef {import("../../lib/settings-kit.js").Place} Place */
/** @template Row @typedef {import("../../lib/settings-kit.js").Editor<Row>} Editor */
/**
 * What a section's editor is given besides the row: the section's chosen place to start from,
 * and `show` to make the section show the place saved to.
 * @typedef {{ start: Place, show: (place: Place) => void }} PlaceAware
 */
/** @template {EventTarget} T @typedef {import("../../lib/types.js").ControlEvent<T>} ControlEvent */
/** @template T @typedef {import("../../lib/ui.js").Data<T>} Data */

const enc = encodeURIComponent;

// ------------------------------------------------------------------ sites

const ZONES = typeof Intl.supportedValuesOf === "function" ? Intl.supportedValuesOf("timeZone") : [];
const LOCAL_ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone;

/** @param {Site["edge_firmware"] | undefined} f */
function firmware(f) {
  if (!f || (!f.current_version && !f.previous_version)) return html`<span class="muted">—</span>`;
  return html`${f.current_version || "—"}${f.previous_version ? html` <span class="muted small">(previous ${f.previous_version})</span>` : null}`;
}

/** @param {Editor<Site>} props */
function SiteEditor({ row, onDone, onCancel }) {
  const [v, setV] = useState(() => ({
    site_name: row?.site_name ?? "",
    location: row?.location ?? "",
    latitude: row?.latitude ?? "",
    longitude: row?.longitude ?? "",
    timezone: row?.timezone ?? LOCAL_ZONE,
    retention_period: String(row?.retention_period ?? 180),
    current_version: row?.edge_firmware?.current_version ?? "",
    previous_version: row?.edge_firmware?.previous_version ?? "",
  }));
  const bind = binder(v, setV);
  const submit = useSubmit(async () => {
    const body = compact({
      site_name: v.site_name,
      location: v.location,
      latitude: v.latitude.trim(),
      longitude: v.longitude.trim(),
      timezone: v.timezone,
      retention_period: numberOf(v.retention_period),
      edge_firmware: compact({ current_version: v.current_version, previous_version: v.previous_version }),
    });
    if (row) {
      await put(`/_config/sites/${enc(row.site_id)}`, body);
      return `Site ${v.site_name} saved`;
    }
    await post("/_config/sites", body);
    return `Site ${v.site_name} created`;
  }, onDone);
  const e = submit.error;
  return html`<${EditorForm} title=${row ? `Edit site ${row.site_name}` : "New site"} submit=${submit} submitLabel=${row ? "Save" : "Create"} onCancel=${onCancel}>
    <div class="form-grid">
      <${Field} label="Site name" name="site_name" error=${e} required ...${bind("site_name")} />
      <${Field} label="Location" name="location" error=${e} required ...${bind("location")} />
      <${Field} label="Latitude" name="latitude" error=${e} inputmode="decimal" placeholder="e.g. 18.52" hint="Decimal degrees; latitude or longitude" ...${bind("latitude")} />
      <${Field} label="Longitude" name="longitude" error=${e} inputmode="decimal" placeholder="e.g. 73.85" hint="Decimal degrees" ...${bind("longitude")} />
      <${Field} label="Time zone" name="timezone" error=${e} list="settings-zones" required ...${bind("timezone")} />
      <${Field} label="Retention (days)" name="retention_period" error=${e} type="number" min="1" ...${bind("retention_period")} />
      <${Field} label="Edge firmware version" name="edge_firmware.current_version" error=${e} ...${bind("current_version")} />
      <${Field} label="Previous firmware version" name="edge_firmware.previous_version" error=${e} ...${bind("previous_version")} />
    </div>
    <datalist id="settings-zones">${ZONES.map((z) => html`<option value=${z} />`)}</datalist>
  </${EditorForm}>`;
}

/** @param {import("../../lib/types.js").PageProps} props */
export function Sites({ user }) {
  /** @type {Data<Site[]>} */
  const list = useData(() => get("/_config/sites/_list"), []);
  return html`<${CrudSection}
    title="Sites"
    noun="site"
    list=${list}
    columns=${[
      { label: "Name", cell: (/** @type {Site} */ s) => html`<strong>${s.site_name}</strong>` },
      { label: "Location", cell: (/** @type {Site} */ s) => s.location },
      { label: "Latitude, longitude", cell: (/** @type {Site} */ s) => [s.latitude, s.longitude].map((c) => c || "—").join(", ") },
      { label: "Time zone", cell: (/** @type {Site} */ s) => s.timezone },
      { label: "Retention", num: true, cell: (/** @type {Site} */ s) => num(s.retention_period, "days", 0) },
      { label: "Edge firmware", cell: (/** @type {Site} */ s) => firmware(s.edge_firmware) },
    ]}
    rowKey=${(/** @type {Site} */ s) => s.site_id}
    rowName=${(/** @type {Site} */ s) => s.site_name}
    canCreate=${mayWrite(user, "whole-site")}
    canEdit=${mayWrite(user, "site")}
    canDelete=${mayWrite(user, "whole-site")}
    renderEditor=${(/** @type {Editor<Site>} */ p) => html`<${SiteEditor} ...${p} />`}
    onDelete=${(/** @type {Site} */ s) => del(`/_config/sites/${enc(s.site_id)}`)}
  />`;
}

// ------------------------------------------------------------------ plants

/** @param {Editor<PlantRow> & PlaceAware} props */
function PlantEditor({ row, start, onDone, onCancel, show }) {
  const [place, choose] = usePlace(row ? { site_id: row.site_id } : start);
  const [name, setName] = useState(row?.plant_name ?? "");
  const submit = useSubmit(async () => {
    const body = { plant_name: name, site_id: place.site_id };
    if (row) await put(`/_config/plants/${enc(row.plant_id)}`, body);
    else await post("/_config/plants", body);
    show(place);
    return `Plant ${name} ${row ? "saved" : "created"}`;
  }, onDone);
  return html`<${EditorForm} title=${row ? `Edit plant ${row.plant_name}` : "New plant"} submit=${submit} submitLabel=${row ? "Save" : "Create"} onCancel=${onCancel}>
    <div class="form-grid">
      <${Field} label="Plant name" name="plant_name" error=${submit.error} required value=${name} onInput=${(/** @type {ControlEvent<HTMLInputElement>} */ e) => setName(e.currentTarget.value)} />
      <${PlaceSelects} place=${place} choose=${choose} to="site" error=${submit.error} />
    </div>
  </${EditorForm}>`;
}

/** @param {import("../../lib/types.js").PageProps} props */
export function Plants({ user }) {
  const [place, choose, setPlace] = usePlace(undefined, true);
  /** @type {Data<PlantRow[]>} */
  const list = useData(() => (place.site_id ? get("/_config/plants/_list", { site_id: place.site_id }) : Promise.resolve([])), [place.site_id]);
  return html`<${CrudSection}
    title="Plants"
    noun="plant"
    filters=${html`<${PlaceSelects} place=${place} choose=${choose} to="site" />`}
    list=${list}
    columns=${[
      { label: "Name", cell: (/** @type {PlantRow} */ p) => html`<strong>${p.plant_name}</strong>` },
      { label: "Site", cell: (/** @type {PlantRow} */ p) => p.site_name },
      { label: "Functions", num: true, cell: (/** @type {PlantRow} */ p) => num(p.function_count, "", 0) },
      { label: "Pipelines", num: true, cell: (/** @type {PlantRow} */ p) => num(p.pipeline_count, "", 0) },
    ]}
    rowKey=${(/** @type {PlantRow} */ p) => p.plant_id}
    rowName=${(/** @type {PlantRow} */ p) => p.plant_name}
    canCreate=${mayWrite(user, "plant")}
    canEdit=${mayWrite(user, "plant")}
    canDelete=${mayWrite(user, "plant")}
    renderEditor=${(/** @type {Editor<PlantRow>} */ p) => html`<${PlantEditor} ...${p} start=${place} show=${(/** @type {Place} */ at) => setPlace({ ...place, ...at, plant_id: "", function_id: "", asset_id: "" })} />`}
    onDelete=${(/** @type {PlantRow} */ p) => del(`/_config/plants/${enc(p.plant_id)}`)}
  />`;
}

// ------------------------------------------------------------------ functions

/** @param {Editor<FunctionRow> & PlaceAware} props */
function FunctionEditor({ row, start, onDone, onCancel, show }) {
  const [place, choose] = usePlace(row ? { site_id: start.site_id, plant_id: start.plant_id } : start);
  const [name, setName] = useState(row?.function_name ?? "");
  const submit = useSubmit(async () => {
    const body = { function_name: name, plant_id: place.plant_id };
    if (row) await put(`/_config/functions/${enc(row.function_id)}`, body);
    else await post("/_config/functions", { ...body, site_id: place.site_id || undefined });
    show(place);
    return `Function ${name} ${row ? "saved" : "created"}`;
  }, onDone);
  return html`<${EditorForm} title=${row ? `Edit function ${row.function_name}` : "New function"} submit=${submit} submitLabel=${row ? "Save" : "Create"} onCancel=${onCancel}>
    <div class="form-grid">
      <${Field} label="Function name" name="function_name" error=${submit.error} required value=${name} onInput=${(/** @type {ControlEvent<HTMLInputElement>} */ e) => setName(e.currentTarget.value)} />
      <${PlaceSelects} place=${place} choose=${choose} to="plant" error=${submit.error} />
    </div>
  </${EditorForm}>`;
}

/** @param {import("../../lib/types.js").PageProps} props */
export function Functions({ user }) {
  const [place, choose, setPlace] = usePlace(undefined, true);
  /** @type {Data<FunctionRow[]>} */
  const list = useData(() => (place.plant_id ? get("/_config/functions/_list", { plant_id: place.plant_id }) : Promise.resolve([])), [place.plant_id]);
  return html`<${CrudSection}
    title="Functions"
    noun="function"
    filters=${html`<${PlaceSelects} place=${place} choose=${choose} to="plant" />`}
    list=${list}
    columns=${[
      { label: "Name", cell: (/** @type {FunctionRow} */ f) => html`<strong>${f.function_name}</strong>` },
      { label: "Plant", cell: (/** @type {FunctionRow} */ f) => f.plant_name },
      { label: "Site", cell: (/** @type {FunctionRow} */ f) => f.site_name },
      { label: "Monitors", num: true, cell: (/** @type {FunctionRow} */ f) => num(f.monitor_count, "", 0) },
    ]}
    rowKey=${(/** @type {FunctionRow} */ f) => f.function_id}
    rowName=${(/** @type {FunctionRow} */ f) => f.function_name}
    canCreate=${mayWrite(user, "function")}
    canEdit=${mayWrite(user, "function")}
    canDelete=${mayWrite(user, "function")}
    renderEditor=${(/** @type {Editor<FunctionRow>} */ p) => html`<${FunctionEditor} ...${p} start=${place} show=${(/** @type {Place} */ at) => setPlace({ ...at, function_id: "", asset_id: "" })} />`}
    onDelete=${(/** @type {FunctionRow} */ f) => del(`/_config/functions/${enc(f.function_id)}`)}
  />`;
}

// ------------------------------------------------------------------ assets

const CATEGORIES = ["Rotating", "Stationary", "Static", "Electrical", "Instrument"];
/**
 * The spec's asset attributes with their units (Asset.attributes).
 * @type {{ key: keyof import("../../lib/types.js").AssetAttributes, label: string, placeholder?: string, number?: boolean }[]}
 */
const ATTRIBUTES = [
  { key: "machine_type", label: "Machine type", placeholder: "motor, pump, fan" },
  { key: "rotating_speed", label: "Rotating speed (RPM)", number: true },
  { key: "manufacturer", label: "Manufacturer" },
  { key: "machine_model", label: "Model" },
  { key: "serial_no", label: "Serial number" },
  { key: "phases", label: "Phases" },
  { key: "kw", label: "Power (kW)", number: true },
  { key: "frequency", label: "Frequency (Hz)", number: true },
  { key: "volts", label: "Voltage (V)", number: true },
  { key: "amp", label: "Current (A)", number: true },
];

/** @param {Editor<Asset> & PlaceAware & { fetched: import("../../lib/types.js").AssetDetail | null | undefined }} props */
function AssetForm({ row, fetched, start, onDone, onCancel, show }) {
  const [place, choose] = usePlace(start);
  // The attributes' texts under their keys beside the asset's own fields.
  const [v, setV] = useState(() => /** @type {Record<string, string>} */ ({
    asset_name: row?.asset_name ?? "",
    asset_category: row?.asset_category ?? "Rotating",
    is_critical: (row?.is_critical ?? "no").toLowerCase(),
    ...Object.fromEntries(ATTRIBUTES.map((a) => [a.key, fetched?.attributes?.[a.key] == null ? "" : String(fetched.attributes[a.key])])),
  }));
  const bind = binder(v, setV);
  const submit = useSubmit(async () => {
    const attributes = compact(Object.fromEntries(ATTRIBUTES.map((a) => [a.key, a.number ? numberOf(v[a.key]) : v[a.key].trim()])));
    const body = { asset_name: v.asset_name, function_id: place.function_id, asset_category: v.asset_category, is_critical: v.is_critical, attributes };
    if (row) await put(`/_config/assets/${enc(row.asset_id)}`, body);
    else await post("/_config/assets", body);
    show(place);
    return `Asset ${v.asset_name} ${row ? "saved" : "created"}`;
  }, onDone);
  const e = submit.error;
  return html`<${EditorForm} title=${row ? `Edit asset ${row.asset_name}` : "New asset"} submit=${submit} submitLabel=${row ? "Save" : "Create"} onCancel=${onCancel}>
    <div class="form-grid">
      <${Field} label="Asset name" name="asset_name" error=${e} required ...${bind("asset_name")} />
      <${PlaceSelects} place=${place} choose=${choose} to="function" error=${e} />
      <${Field} label="Category" name="asset_category" error=${e} list="settings-categories" required ...${bind("asset_category")} />
      <${Field} as="select" label="Critical" name="is_critical" error=${e} value=${v.is_critical} onChange=${(/** @type {ControlEvent<HTMLSelectElement>} */ ev) => setV((s) => ({ ...s, is_critical: ev.currentTarget.value }))}>
        <option value="no">No</option>
        <option value="yes">Yes</option>
      </${Field}>
    </div>
    <datalist id="settings-categories">${CATEGORIES.map((c) => html`<option value=${c} />`)}</datalist>
    <fieldset class="group">
      <legend>Machine data (optional)</legend>
      <div class="form-grid">
        ${ATTRIBUTES.map(
          (a) => html`<${Field} key=${a.key} label=${a.label} name=${`attributes.${a.key}`} error=${e} inputmode=${a.number ? "decimal" : undefined} placeholder=${a.placeholder} ...${bind(a.key)} />`,
        )}
      </div>
    </fieldset>
  </${EditorForm}>`;
}

/**
 * Editing needs the asset's attributes, which only its fetch answers.
 * @param {Editor<Asset> & PlaceAware} props
 */
function AssetEditor(props) {
  const { row } = props;
  const fetched = useData(() => (row ? get(`/_config/assets/${enc(row.asset_id)}`) : Promise.resolve(null)), [row?.asset_id]);
  if (row && fetched.data === undefined) return fetched.error ? html`<p class="error" role="alert">⚠ ${fetched.error.message}</p>` : html`<${Loading} what="Loading the asset" />`;
  return html`<${AssetForm} ...${props} fetched=${fetched.data} />`;
}

/** @param {import("../../lib/types.js").PageProps} props */
export function Assets({ user }) {
  const [place, choose, setPlace] = usePlace(undefined, true);
  /** @type {Data<Asset[]>} */
  const list = useData(() => (place.function_id ? get("/_config/assets/_list", { function_id: place.function_id }) : Promise.resolve([])), [place.function_id]);
  return html`<${CrudSection}
    title="Assets"
    noun="asset"
    filters=${html`<${PlaceSelects} place=${place} choose=${choose} to="function" />`}
    list=${list}
    columns=${[
      { label: "Name", cell: (/** @type {Asset} */ a) => html`<strong>${a.asset_name}</strong>` },
      { label: "Category", cell: (/** @type {Asset} */ a) => a.asset_category },
      { label: "Critical", cell: (/** @type {Asset} */ a) => a.is_critical },
      { label: "Function", cell: (/** @type {Asset} */ a) => a.function_name },
      { label: "Monitors", num: true, cell: (/** @type {Asset} */ a) => num(a.monitor_count, "", 0) },
    ]}
    rowKey=${(/** @type {Asset} */ a) => a.asset_id}
    rowName=${(/** @type {Asset} */ a) => a.asset_name}
    canCreate=${mayWrite(user, "asset")}
    canEdit=${mayWrite(user, "asset")}
    canDelete=${mayWrite(user, "asset")}
    renderEditor=${(/** @type {Editor<Asset>} */ p) => html`<${AssetEditor} ...${p} start=${place} show=${(/** @type {Place} */ at) => setPlace({ ...at, asset_id: "" })} />`}
    onDelete=${(/** @type {Asset} */ a) => del(`/_config/assets/${enc(a.asset_id)}`)}
  />`;
}
