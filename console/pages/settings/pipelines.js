// @ts-check
// Settings: pipelines (spec ops 46-55) — an edge gateway reading Modbus RTU slaves, or a
// third-party integration sending through the ingestion API. Create with the fields each kind
// requires, edit the name and tags, delete. The ingest key a create answers is shown once.
import { useState } from "preact/hooks";
import { ApiError, del, get, post, put } from "../../lib/api.js";
import { Field, Loading, Status, html, time, useData } from "../../lib/ui.js";
import { Check, CrudSection, EditorForm, PlaceSelects, RowButton, binder, compact, mayWrite, numberOf, usePlace, useSubmit } from "../../lib/settings-kit.js";

/** @typedef {import("../../lib/types.js").Pipeline} Pipeline */
/** @typedef {import("../../lib/types.js").PipelineDetail} PipelineDetail */
/** @typedef {import("../../lib/types.js").Monitor} Monitor */
/** @typedef {import("../../lib/settings-kit.js").Place} Place */
/** @template Row @typedef {import("../../lib/settings-kit.js").Editor<Row>} Editor */
/** @template {EventTarget} T @typedef {import("../../lib/types.js").ControlEvent<T>} ControlEvent */
/**
 * What a create form is given besides the Editor's: the section's chosen place to start from,
 * and `show` to make the section show the place created in.
 * @typedef {{ start: Place, show: (place: Place) => void }} PlaceAware
 */
/**
 * A tag item of a pipeline's form: its key in the tag, label, the choices of a select, whether it is a number.
 * @typedef {{ key: string, label: string, options?: string[], number?: boolean }} TagField
 */
/**
 * A pipeline's tag as the form holds it: the fields' texts, and whatever other keys a fetched
 * tag carries (kept as they were).
 * @typedef {Record<string, unknown>} PipelineTag
 */
/** @typedef {{ monitor_id: string, slave_id: string }} Slave */
/** @typedef {"edge" | "thirdparty"} PipelineKind */

const enc = encodeURIComponent;
const DATA_TYPES = ["Condition", "Process", "Energy", "Production", "Others"];
const PATH = { edge: "edge-server", thirdparty: "thirdparty" };

/**
 * A pipeline's kind, which the list does not say: its fetch answers under one of the two paths
 * (the other answers `Invalid ... ID`).
 * @param {string} id
 * @returns {Promise<{ kind: PipelineKind, pipeline: PipelineDetail }>}
 */
async function fetchPipeline(id) {
  try {
    return { kind: "edge", pipeline: await get(`/_config/pipelines/edge-server/${enc(id)}`) };
  } catch (e) {
    if (!(e instanceof ApiError) || e.status !== 400) throw e;
    return { kind: "thirdparty", pipeline: await get(`/_config/pipelines/thirdparty/${enc(id)}`) };
  }
}

// ------------------------------------------------------------------ tags

/** @type {TagField[]} */
const BASE_TAG = [
  { key: "tag_name", label: "Tag name" },
  { key: "tag_desc", label: "Description" },
  { key: "tag_unit", label: "Unit" },
];
/**
 * The tag items of each kind and subtype (spec op 50 "Tag items"; op 46 for third-party).
 * @type {Record<string, TagField[]>}
 */
const TAG_FIELDS = {
  "Modbus RTU": [
    ...BASE_TAG,
    { key: "address", label: "Register address" },
    { key: "decode_bits", label: "Bits", options: ["8", "16", "32", "64"] },
    { key: "decode_type", label: "Decode as", options: ["float", "int", "unsign_int"] },
    { key: "scale", label: "Scale", number: true },
  ],
  "OPC-UA": [...BASE_TAG, { key: "address", label: "Node address" }, { key: "monitor_id", label: "Monitor id" }, { key: "tag_id", label: "Tag id" }],
  File: [...BASE_TAG, { key: "field_name", label: "Field name" }, { key: "tag_id", label: "Tag id" }],
  SQL: [...BASE_TAG, { key: "column_name", label: "Column" }, { key: "monitor_id", label: "Monitor id" }],
  thirdparty: [...BASE_TAG, { key: "address", label: "Address" }],
};
/** @type {Record<string, PipelineTag>} */
const BLANK_TAG = {
  "Modbus RTU": { tag_name: "", tag_desc: "", tag_unit: "", address: "", decode_bits: "16", decode_type: "float", scale: "1" },
};

/** A tag as typed: texts (numbers as written); the other keys a fetched tag carries are kept. */
/** @type {(fields: TagField[], tag?: PipelineTag) => PipelineTag} */
const tagState = (fields, tag = {}) => ({ ...tag, ...Object.fromEntries(fields.map((f) => [f.key, tag[f.key] == null ? "" : String(tag[f.key])])) });
/** @type {(fields: TagField[], tag: PipelineTag) => PipelineTag} */
const tagBody = (fields, tag) => ({ ...tag, ...Object.fromEntries(fields.map((f) => [f.key, f.number ? numberOf(tag[f.key]) : tag[f.key]])) });

/** @param {{ fields: TagField[], tags: PipelineTag[], setTags: (tags: PipelineTag[]) => void, error: unknown, blank?: PipelineTag }} props */
function PipelineTags({ fields, tags, setTags, error, blank }) {
  /** @type {(i: number, key: string, value: string) => void} */
  const change = (i, key, value) => setTags(tags.map((t, j) => (j === i ? { ...t, [key]: value } : t)));
  return html`<fieldset class="group" data-field="tags">
    <legend>Tags</legend>
    ${tags.length === 0 ? html`<p class="muted small">No tags: add what the pipeline reads.</p>` : null}
    ${tags.map(
      (t, i) => html`<div class="line" role="group" aria-label=${`Tag ${i + 1}`} key=${i}>
        ${fields.map((f) =>
          f.options
            ? html`<${Field} key=${f.key} as="select" label=${f.label} name=${`tags[${i}].${f.key}`} error=${error} value=${t[f.key]} onChange=${(/** @type {ControlEvent<HTMLSelectElement>} */ e) => change(i, f.key, e.currentTarget.value)}>
                ${f.options.map((o) => html`<option value=${o}>${o}</option>`)}
              </${Field}>`
            : html`<${Field}
                key=${f.key}
                label=${f.label}
                name=${`tags[${i}].${f.key}`}
                error=${error}
                inputmode=${f.number ? "decimal" : undefined}
                value=${t[f.key]}
                onInput=${(/** @type {ControlEvent<HTMLInputElement>} */ e) => change(i, f.key, e.currentTarget.value)}
              />`,
        )}
        <${RowButton} label="Remove" what=${`tag ${i + 1}`} onClick=${() => setTags(tags.filter((_, j) => j !== i))} />
      </div>`,
    )}
    <button type="button" class="add" onClick=${() => setTags([...tags, tagState(fields, blank)])}>Add tag</button>
  </fieldset>`;
}

// ------------------------------------------------------------------ create: edge gateway (Modbus RTU)

/**
 * The monitors of a function, for the registration's choices.
 * @param {string} functionId
 * @returns {import("../../lib/ui.js").Data<Monitor[]>}
 */
function useFunctionMonitors(functionId) {
  return useData(() => (functionId ? get("/_config/monitors/_list", { function_id: functionId }) : Promise.resolve([])), [functionId]);
}

/** @param {{ rows: Slave[], setRows: (rows: Slave[]) => void, monitors: Monitor[] | undefined, error: unknown, functionId: string }} props */
function Registration({ rows, setRows, monitors, error, functionId }) {
  /** @type {(i: number, key: keyof Slave, value: string) => void} */
  const change = (i, key, value) => setRows(rows.map((r, j) => (j === i ? { ...r, [key]: value } : r)));
  return html`<fieldset class="group" data-field="registration">
    <legend>Slaves (registration)</legend>
    ${!functionId ? html`<p class="muted small">Choose a function to register its monitors as slaves.</p>` : null}
    ${rows.map(
      (r, i) => html`<div class="line" role="group" aria-label=${`Slave ${i + 1}`} key=${i}>
        <${Field} as="select" label="Monitor" name=${`registration[${i}].monitor_id`} error=${error} value=${r.monitor_id} onChange=${(/** @type {ControlEvent<HTMLSelectElement>} */ e) => change(i, "monitor_id", e.currentTarget.value)}>
          <option value="">Choose a monitor</option>
          ${(monitors ?? []).map((m) => html`<option value=${m.monitor_id}>${m.monitor_name}</option>`)}
        </${Field}>
        <${Field} label="Slave id" name=${`registration[${i}].slave_id`} error=${error} inputmode="numeric" value=${r.slave_id} onInput=${(/** @type {ControlEvent<HTMLInputElement>} */ e) => change(i, "slave_id", e.currentTarget.value)} />
        <${RowButton} label="Remove" what=${`slave ${i + 1}`} onClick=${() => setRows(rows.filter((_, j) => j !== i))} />
      </div>`,
    )}
    ${functionId ? html`<button type="button" class="add" onClick=${() => setRows([...rows, { monitor_id: "", slave_id: String(rows.length + 1) }])}>Add slave</button>` : null}
  </fieldset>`;
}

/**
 * @param {string} kind
 * @param {string} name
 * @param {{ ingest_key: string }} answer
 */
function created(kind, name, answer) {
  return html`${kind} ${name} created. Its ingest key, shown only now: <code class="key">${answer.ingest_key}</code>`;
}

/** @param {Editor<Pipeline> & PlaceAware} props */
function EdgeCreate({ start, onDone, onCancel, show }) {
  const [place, choose] = usePlace(start);
  const [v, setV] = useState({
    pipeline_name: "",
    data_type: "Process",
    mac_address: "",
    port: "/dev/ttyUSB0",
    baudrate: "9600",
    parity: "N",
    bytesize: "8",
    stopbit: "1",
    sampling_rate: "10",
    fft_intervel: "",
    fft_intervel_type: "minutes",
    current_version: "",
    previous_version: "",
  });
  const [fft, setFft] = useState(false);
  const [tags, setTags] = useState(/** @type {PipelineTag[]} */ ([]));
  const [slaves, setSlaves] = useState(/** @type {{ monitor_id: string, slave_id: string }[]} */ ([]));
  const monitors = useFunctionMonitors(place.function_id);
  const bind = binder(v, setV);
  const fields = TAG_FIELDS["Modbus RTU"];
  const submit = useSubmit(async () => {
    const settings = {
      mac_address: v.mac_address.trim(),
      port: v.port,
      stopbit: numberOf(v.stopbit),
      bytesize: numberOf(v.bytesize),
      parity: v.parity,
      baudrate: numberOf(v.baudrate),
      sampling_rate: numberOf(v.sampling_rate),
      ...(fft ? compact({ collect_fft: true, fft_intervel: numberOf(v.fft_intervel), fft_intervel_type: v.fft_intervel_type }) : {}),
    };
    const answer = await post(
      "/_config/pipelines/edge-server",
      compact({
        pipeline_name: v.pipeline_name,
        plant_id: place.plant_id,
        function_id: place.function_id,
        data_type: v.data_type,
        data_source: "Edge IOT Gateway",
        data_source_subtype: "Modbus RTU",
        settings: compact(settings),
        gateway_firmware: compact({ current_version: v.current_version, previous_version: v.previous_version }),
        tags: tags.map((t) => tagBody(fields, t)),
        registration: slaves.filter((s) => s.monitor_id).map((s) => ({ monitor_id: s.monitor_id, slave_id: s.slave_id, registered_by_asset: false })),
      }),
    );
    show(place);
    return created("Gateway", v.pipeline_name, answer);
  }, onDone);
  const e = submit.error;
  return html`<${EditorForm} title="New edge gateway (Modbus RTU)" submit=${submit} submitLabel="Create" onCancel=${onCancel}>
    <div class="form-grid">
      <${Field} label="Pipeline name" name="pipeline_name" error=${e} required ...${bind("pipeline_name")} />
      <${PlaceSelects} place=${place} choose=${choose} to="function" optional=${["function"]} anyLabel="— the whole plant —" error=${e} />
      <${Field} as="select" label="Data type" name="data_type" error=${e} value=${v.data_type} onChange=${(/** @type {ControlEvent<HTMLSelectElement>} */ ev) => setV((s) => ({ ...s, data_type: ev.currentTarget.value }))}>
        ${DATA_TYPES.filter((t) => t !== "Production").map((t) => html`<option value=${t}>${t}</option>`)}
      </${Field}>
    </div>
    <fieldset class="group">
      <legend>Gateway and serial line</legend>
      <div class="form-grid">
        <${Field} label="MAC address" name="settings.mac_address" error=${e} placeholder="02:00:00:00:00:01" required ...${bind("mac_address")} />
        <${Field} label="Serial port" name="settings.port" error=${e} ...${bind("port")} />
        <${Field} label="Baud rate" name="settings.baudrate" error=${e} inputmode="numeric" list="settings-bauds" ...${bind("baudrate")} />
        <${Field} as="select" label="Parity" name="settings.parity" error=${e} value=${v.parity} onChange=${(/** @type {ControlEvent<HTMLSelectElement>} */ ev) => setV((s) => ({ ...s, parity: ev.currentTarget.value }))}>
          <option value="N">None (N)</option><option value="E">Even (E)</option><option value="O">Odd (O)</option>
        </${Field}>
        <${Field} as="select" label="Data bits" name="settings.bytesize" error=${e} value=${v.bytesize} onChange=${(/** @type {ControlEvent<HTMLSelectElement>} */ ev) => setV((s) => ({ ...s, bytesize: ev.currentTarget.value }))}>
          <option value="8">8</option><option value="7">7</option>
        </${Field}>
        <${Field} as="select" label="Stop bits" name="settings.stopbit" error=${e} value=${v.stopbit} onChange=${(/** @type {ControlEvent<HTMLSelectElement>} */ ev) => setV((s) => ({ ...s, stopbit: ev.currentTarget.value }))}>
          <option value="1">1</option><option value="2">2</option>
        </${Field}>
        <${Field} label="Sampling rate" name="settings.sampling_rate" error=${e} inputmode="numeric" ...${bind("sampling_rate")} />
        <${Field} label="Firmware version" name="gateway_firmware.current_version" error=${e} ...${bind("current_version")} />
        <${Field} label="Previous firmware" name="gateway_firmware.previous_version" error=${e} ...${bind("previous_version")} />
      </div>
      <div class="form-grid">
        <div class="field"><${Check} label="Collect FFT captures" checked=${fft} onChange=${setFft} /></div>
        ${fft
          ? html`<${Field} label="FFT every" name="settings.fft_intervel" error=${e} inputmode="numeric" ...${bind("fft_intervel")} />
              <${Field} as="select" label="FFT interval unit" name="settings.fft_intervel_type" error=${e} value=${v.fft_intervel_type} onChange=${(/** @type {ControlEvent<HTMLSelectElement>} */ ev) => setV((s) => ({ ...s, fft_intervel_type: ev.currentTarget.value }))}>
                <option value="minutes">minutes</option><option value="hours">hours</option>
              </${Field}>`
          : null}
      </div>
      <datalist id="settings-bauds">${[4800, 9600, 19200, 38400, 57600, 115200].map((b) => html`<option value=${b} />`)}</datalist>
    </fieldset>
    <${PipelineTags} fields=${fields} tags=${tags} setTags=${setTags} error=${e} blank=${BLANK_TAG["Modbus RTU"]} />
    <${Registration} rows=${slaves} setRows=${setSlaves} monitors=${monitors.data} error=${e} functionId=${place.function_id} />
  </${EditorForm}>`;
}

// ------------------------------------------------------------------ create: third-party

/** The settings each third-party subtype requires besides the MAC address (spec: Third-party pipelines). */
/** @type {Record<string, { key: string, label: string, placeholder?: string, type?: string }[]>} */
const THIRD_PARTY_SETTINGS = {
  "OPC-UA": [
    { key: "server_url", label: "Server URL", placeholder: "opc.tcp://10.0.0.5:4840" },
    { key: "user_name", label: "User name" },
    { key: "user_password", label: "User password", type: "password" },
  ],
  File: [
    { key: "file_name", label: "File name" },
    { key: "file_path", label: "File path" },
    { key: "time_field", label: "Time field (optional)" },
  ],
};

/** @param {Editor<Pipeline> & PlaceAware} props */
function ThirdPartyCreate({ start, onDone, onCancel, show }) {
  const [place, choose] = usePlace(start);
  const [v, setV] = useState({ pipeline_name: "", data_type: "Process", data_source: "Third-Party-Apps", subtype: "OPC-UA", mac_address: "", sampling_rate: "" });
  const [extra, setExtra] = useState(/** @type {Record<string, string>} */ ({}));
  const [tags, setTags] = useState(/** @type {PipelineTag[]} */ ([]));
  const bind = binder(v, setV);
  const fields = TAG_FIELDS.thirdparty;
  const subtypeFields = THIRD_PARTY_SETTINGS[v.subtype] ?? [];
  const submit = useSubmit(async () => {
    const settings = compact({
      mac_address: v.mac_address.trim(),
      sampling_rate: numberOf(v.sampling_rate),
      ...Object.fromEntries(subtypeFields.map((f) => [f.key, extra[f.key]])),
    });
    const answer = await post(
      "/_config/pipelines/thirdparty",
      compact({
        pipeline_name: v.pipeline_name,
        plant_id: place.plant_id,
        function_id: place.function_id,
        data_type: v.data_type,
        data_source: v.data_source,
        data_source_subtype: v.subtype,
        settings,
        // address is the one optional key of a third-party tag: left out when empty.
        tags: tags.map((t) => {
          const { address, ...rest } = tagBody(fields, t);
          return address ? { ...rest, address } : rest;
        }),
      }),
    );
    show(place);
    return created("Pipeline", v.pipeline_name, answer);
  }, onDone);
  const e = submit.error;
  return html`<${EditorForm} title="New third-party pipeline" submit=${submit} submitLabel="Create" onCancel=${onCancel}>
    <div class="form-grid">
      <${Field} label="Pipeline name" name="pipeline_name" error=${e} required ...${bind("pipeline_name")} />
      <${PlaceSelects} place=${place} choose=${choose} to="function" optional=${["function"]} anyLabel="— the whole plant —" error=${e} />
      <${Field} as="select" label="Data type" name="data_type" error=${e} value=${v.data_type} onChange=${(/** @type {ControlEvent<HTMLSelectElement>} */ ev) => setV((s) => ({ ...s, data_type: ev.currentTarget.value }))}>
        ${DATA_TYPES.map((t) => html`<option value=${t}>${t}</option>`)}
      </${Field}>
      <${Field} as="select" label="Data source" name="data_source" error=${e} value=${v.data_source} onChange=${(/** @type {ControlEvent<HTMLSelectElement>} */ ev) => setV((s) => ({ ...s, data_source: ev.currentTarget.value }))}>
        <option value="Third-Party-Apps">Third-Party-Apps</option>
        <option value="Cloud">Cloud</option>
      </${Field}>
      <${Field} label="Subtype" name="data_source_subtype" error=${e} list="settings-subtypes" hint="OPC-UA and File have fields of their own" ...${bind("subtype")} />
      <${Field} label="MAC address" name="settings.mac_address" error=${e} required ...${bind("mac_address")} />
      <${Field} label="Sampling rate" name="settings.sampling_rate" error=${e} inputmode="numeric" ...${bind("sampling_rate")} />
      ${subtypeFields.map(
        (f) => html`<${Field}
          key=${f.key}
          label=${f.label}
          name=${`settings.${f.key}`}
          type=${f.type}
          placeholder=${f.placeholder}
          error=${e}
          value=${extra[f.key] ?? ""}
          onInput=${(/** @type {ControlEvent<HTMLInputElement>} */ ev) => setExtra((s) => ({ ...s, [f.key]: ev.currentTarget.value }))}
        />`,
      )}
    </div>
    <datalist id="settings-subtypes"><option value="OPC-UA" /><option value="File" /><option value="SQL" /><option value="MQTT" /></datalist>
    <${PipelineTags} fields=${fields} tags=${tags} setTags=${setTags} error=${e} />
  </${EditorForm}>`;
}

// ------------------------------------------------------------------ edit: name and tags

/** @param {{ kind: PipelineKind, pipeline: PipelineDetail, onDone: (answer: import("preact").ComponentChildren) => void, onCancel: () => void }} props */
function PipelineForm({ kind, pipeline, onDone, onCancel }) {
  const fields = kind === "edge" ? (TAG_FIELDS[pipeline.data_source_subtype] ?? BASE_TAG) : TAG_FIELDS.thirdparty;
  const [name, setName] = useState(pipeline.pipeline_name);
  const [tags, setTags] = useState(() => (pipeline.tags ?? []).map((t) => tagState(fields, t)));
  const submit = useSubmit(async () => {
    const body = { pipeline_name: name, tags: tags.map((t) => tagBody(fields, t)) };
    // The edge update requires the settings: they go back as they were read.
    return put(`/_config/pipelines/${PATH[kind]}/${enc(pipeline.pipeline_id)}`, kind === "edge" ? { ...body, settings: pipeline.settings } : body);
  }, onDone);
  const e = submit.error;
  return html`<${EditorForm} title=${`Edit pipeline ${pipeline.pipeline_name}`} submit=${submit} onCancel=${onCancel}>
    <dl class="summary">
      <div><dt>Kind</dt><dd>${kind === "edge" ? "Edge gateway" : "Third-party"}</dd></div>
      <div><dt>Source</dt><dd>${pipeline.data_source} · ${pipeline.data_source_subtype}</dd></div>
      <div><dt>Data type</dt><dd>${pipeline.data_type}</dd></div>
      <div><dt>MAC address</dt><dd>${pipeline.settings?.mac_address ?? "—"}</dd></div>
      <div><dt>Slaves</dt><dd>${pipeline.registration?.length ?? 0}</dd></div>
    </dl>
    <div class="form-grid">
      <${Field} label="Pipeline name" name="pipeline_name" error=${e} required value=${name} onInput=${(/** @type {ControlEvent<HTMLInputElement>} */ ev) => setName(ev.currentTarget.value)} />
    </div>
    <${PipelineTags} fields=${fields} tags=${tags} setTags=${setTags} error=${e} blank=${BLANK_TAG[pipeline.data_source_subtype]} />
  </${EditorForm}>`;
}

/** @param {{ row: Pipeline, onDone: (answer: import("preact").ComponentChildren) => void, onCancel: () => void }} props */
function PipelineEdit({ row, onDone, onCancel }) {
  const fetched = useData(() => fetchPipeline(row.pipeline_id), [row.pipeline_id]);
  if (fetched.error) return html`<p class="error" role="alert">⚠ ${fetched.error.message}</p>`;
  if (!fetched.data) return html`<${Loading} what="Loading the pipeline" />`;
  return html`<${PipelineForm} kind=${fetched.data.kind} pipeline=${fetched.data.pipeline} onDone=${onDone} onCancel=${onCancel} />`;
}

// ------------------------------------------------------------------ the section

/** @type {Record<string, string>} */
const STATUS_TONE = { running: "normal", stopped: "normal", starting: "info", stopping: "info", error: "alarm" };
const word = (/** @type {string} */ s) => (s ? s[0].toUpperCase() + s.slice(1) : "—");

/** @param {import("../../lib/types.js").PageProps} props */
export function Pipelines({ user }) {
  const [place, choose, setPlace] = usePlace(undefined, true);
  const query = place.function_id ? { function_id: place.function_id } : place.plant_id ? { plant_id: place.plant_id } : null;
  /** @type {import("../../lib/ui.js").Data<Pipeline[]>} */
  const list = useData(() => (query ? get("/_config/pipelines/_list", query) : Promise.resolve([])), [JSON.stringify(query)]);
  return html`<${CrudSection}
    title="Pipelines"
    noun="pipeline"
    filters=${html`<${PlaceSelects} place=${place} choose=${choose} to="function" optional=${["function"]} anyLabel="All functions" />`}
    list=${list}
    columns=${[
      { label: "Name", cell: (/** @type {Pipeline} */ p) => html`<strong>${p.pipeline_name}</strong>` },
      { label: "Source", cell: (/** @type {Pipeline} */ p) => html`${p.data_source} <span class="muted">· ${p.data_source_subtype}</span>` },
      { label: "Data type", cell: (/** @type {Pipeline} */ p) => p.data_type },
      { label: "Function", cell: (/** @type {Pipeline} */ p) => p.function_name ?? html`<span class="muted">whole plant</span>` },
      { label: "Status", cell: (/** @type {Pipeline} */ p) => html`<${Status} tone=${STATUS_TONE[p.status] ?? "normal"}>${word(p.status)}</${Status}>` },
      { label: "Created", cell: (/** @type {Pipeline} */ p) => time(p.created_at) },
    ]}
    rowKey=${(/** @type {Pipeline} */ p) => p.pipeline_id}
    rowName=${(/** @type {Pipeline} */ p) => p.pipeline_name}
    canCreate=${mayWrite(user, "pipeline")}
    canEdit=${mayWrite(user, "pipeline")}
    canDelete=${mayWrite(user, "pipeline")}
    creates=${[
      { label: "New edge gateway", kind: "edge" },
      { label: "New third-party pipeline", kind: "thirdparty" },
    ]}
    renderEditor=${(/** @type {Editor<Pipeline>} */ p) => {
      const common = { ...p, start: place, show: (/** @type {Place} */ at) => setPlace(at) };
      if (p.row) return html`<${PipelineEdit} ...${common} />`;
      return p.kind === "edge" ? html`<${EdgeCreate} ...${common} />` : html`<${ThirdPartyCreate} ...${common} />`;
    }}
    onDelete=${async (/** @type {Pipeline} */ p) => {
      const { kind } = await fetchPipeline(p.pipeline_id);
      return del(`/_config/pipelines/${PATH[kind]}/${enc(p.pipeline_id)}`);
    }}
  />`;
}
