// @ts-check
// What the Settings sections share: a section's frame (its list, a create/edit form, a delete
// that asks first), forms that answer with the service's own error next to the field it names,
// and the site → plant → function → asset selects filled from the list routes.
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { ApiError, get } from "./api.js";
import { ErrorNote, Field, Loading, Problems, Table, html, useGet } from "./ui.js";

/** @typedef {import("./api.js").Failure} Failure */
/** @typedef {import("./api.js").User} User */
/** @typedef {import("preact").ComponentChildren} Children */
/**
 * @template {EventTarget} T
 * @typedef {import("./types.js").ControlEvent<T>} ControlEvent
 */
/**
 * A chosen place of the Settings sections; an empty text is "none chosen".
 * @typedef {{ site_id: string, plant_id: string, function_id: string, asset_id: string }} Place
 */
/** @typedef {"site" | "plant" | "function" | "asset"} Level */
/**
 * A form's submission (what `useSubmit` answers): its error, whether it runs, the form's submit handler.
 * @typedef {{ error: Failure | null, busy: boolean, onSubmit: (event?: Event) => Promise<void>, setError: (error: Failure | null) => void }} Submit
 */
/**
 * What a section's `renderEditor` is given: the row to edit (null: create), the kind of create
 * button pressed, and what to call once saved (with the text to show) or cancelled.
 * @template Row
 * @typedef {{ row: Row | null, kind: string | undefined, onDone: (answer: Children) => void, onCancel: () => void }} Editor
 */

/**
 * The service names the input at fault in `field`; a few of its checks name it only in their
 * text (`Invalid input: triggers[0].deadband`). Both put the message next to that input.
 */
/**
 * @param {unknown} e
 * @returns {import("./api.js").Failure}
 */
export function withField(e) {
  if (e instanceof ApiError && !e.field) {
    const m = /^Invalid input: ([\w.[\]-]+)$/.exec(e.message);
    if (m) return new ApiError(e.status, e.message, m[1]);
  }
  return /** @type {import("./api.js").Failure} */ (e);
}

/**
 * The message of `error` when it names `name` or an input inside it (`modules` for `modules[1]`).
 * @param {unknown} error
 * @param {string} name
 */
export function errorFor(error, name) {
  if (error instanceof Problems) {
    const key = Object.keys(error.map).find((f) => f === name || f.startsWith(`${name}[`) || f.startsWith(`${name}.`));
    return key === undefined ? null : error.map[key];
  }
  if (!(error instanceof ApiError) || !error.field) return null;
  const f = error.field;
  return f === name || f.startsWith(`${name}[`) || f.startsWith(`${name}.`) ? error.message : null;
}

/**
 * A form's submission: `action` answers the text to show once done; errors keep the form open.
 * @template T
 * @param {() => Promise<T>} action
 * @param {(answer: T) => void} onDone
 * @returns {Submit}
 */
export function useSubmit(action, onDone) {
  const [error, setError] = useState(/** @type {import("./api.js").Failure | null} */ (null));
  const [busy, setBusy] = useState(false);
  /** @param {Event} [event] */
  const onSubmit = async (event) => {
    event?.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const answer = await action();
      setBusy(false);
      onDone(answer);
    } catch (e) {
      setError(withField(e));
      setBusy(false);
    }
  };
  return { error, busy, onSubmit, setError };
}

/**
 * `{value, onInput}` of a text input bound to `state[key]`.
 * @template {Record<string, string>} S
 * @param {S} state
 * @param {import("preact/hooks").Dispatch<import("preact/hooks").StateUpdater<S>>} setState
 * @returns {(key: string) => { value: string, onInput: (e: ControlEvent<HTMLInputElement>) => void }}
 */
export function binder(state, setState) {
  return (key) => ({ value: state[key] ?? "", onInput: (e) => setState((s) => ({ ...s, [key]: e.currentTarget.value })) });
}

/**
 * Empty texts and undefined left out: the service reads a missing optional field as "not given".
 * @param {Record<string, unknown>} obj
 */
export function compact(obj) {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined && v !== ""));
}

/**
 * A number typed in a field: undefined when empty; what was typed when it is no number, so the service names it.
 * @param {unknown} text
 */
export function numberOf(text) {
  const t = String(text ?? "").trim();
  if (t === "") return undefined;
  const n = Number(t);
  return Number.isFinite(n) ? n : t;
}

const cssName = (/** @type {string} */ name) => (window.CSS?.escape ? window.CSS.escape(name) : name.replace(/["\\]/g, "\\$&"));

/**
 * A create or edit form. An error that names one of its inputs is shown next to it (Field does,
 * and the input gets the focus); any other above the buttons. `novalidate`: the service checks
 * and answers in its own words.
 * @param {{ title: string, submit: Submit, submitLabel?: string, onCancel: () => void, children?: Children, className?: string }} props
 */
export function EditorForm({ title, submit, submitLabel = "Save", onCancel, children, className = "" }) {
  const ref = useRef(/** @type {HTMLFormElement | null} */ (null));
  const [general, setGeneral] = useState(false);
  const { error, busy, onSubmit } = submit;
  useLayoutEffect(() => {
    if (!error) return setGeneral(false);
    // The first input at fault (the page's problems in the form's order, or the one the service names).
    const f = error instanceof Problems ? (Object.keys(error.map)[0] ?? null) : error instanceof ApiError ? error.field : null;
    const target = f ? ref.current?.querySelector(`[name="${cssName(f)}"], [data-field="${cssName(f)}"]`) : null;
    setGeneral(!target);
    if (target) {
      /** @type {HTMLElement | null} */
      const control = target.matches("input, select, textarea") ? /** @type {HTMLElement} */ (target) : target.querySelector("input, select, textarea");
      control?.focus();
    }
  }, [error]);
  return html`<form ref=${ref} class=${`card editor ${className}`} aria-label=${title} onSubmit=${onSubmit} novalidate>
    <h3>${title}</h3>
    ${children}
    ${general ? html`<${ErrorNote} error=${error} />` : null}
    <div class="buttons">
      <button type="submit" class="primary" disabled=${busy}>${busy ? "Saving…" : submitLabel}</button>
      <button type="button" onClick=${onCancel}>Cancel</button>
    </div>
  </form>`;
}

/**
 * A labelled checkbox.
 * @param {{ label: Children, checked: boolean, onChange: (checked: boolean) => void, name?: string, disabled?: boolean }} props
 */
export function Check({ label, checked, onChange, name, disabled }) {
  return html`<label class="check"><input type="checkbox" name=${name} checked=${checked} disabled=${disabled} onChange=${(/** @type {ControlEvent<HTMLInputElement>} */ e) => onChange(e.currentTarget.checked)} /> ${label}</label>`;
}

/**
 * Checkboxes of a list of values (modules, users): `value` the chosen ones. Chosen values that
 * are not among `options` stay listed, so that an edit never drops them unseen.
 * @param {{ legend: Children, name: string, options: { value: string, label: Children }[], value: string[], onChange: (value: string[]) => void, error?: unknown, hint?: Children, scroll?: boolean }} props
 */
export function CheckList({ legend, name, options, value, onChange, error, hint, scroll = false }) {
  const mine = errorFor(error, name);
  const all = [...options, ...value.filter((v) => !options.some((o) => o.value === v)).map((v) => ({ value: v, label: v }))];
  /** @type {(v: string, on: boolean) => void} */
  const toggle = (v, on) => onChange(on ? [...value, v] : value.filter((x) => x !== v));
  return html`<fieldset class=${`checks${scroll ? " scroll" : ""}`} data-field=${name} aria-invalid=${mine ? "true" : undefined}>
    <legend>${legend}</legend>
    <div class="check-items">
      ${all.length === 0 ? html`<span class="muted small">None to choose</span>` : null}
      ${all.map((o) => html`<${Check} key=${o.value} label=${o.label} checked=${value.includes(o.value)} onChange=${(/** @type {boolean} */ on) => toggle(o.value, on)} />`)}
    </div>
    ${hint ? html`<span class="hint">${hint}</span>` : null}
    ${mine ? html`<span class="field-error" role="alert">${mine}</span>` : null}
  </fieldset>`;
}

/**
 * A button whose accessible name carries the row it acts on ("Edit Pump 1"), read as "Edit" on screen.
 * @param {{ label: Children, what: Children, onClick: () => void, className?: string }} props
 */
export function RowButton({ label, what, onClick, className = "" }) {
  return html`<button type="button" class=${`small-button ${className}`} onClick=${onClick}>${label}<span class="sr-only"> ${what}</span></button>`;
}

// ------------------------------------------------------------------ places

/** @type {Level[]} */
const LEVELS = ["site", "plant", "function", "asset"];
/**
 * Each level's label, its id and name fields, and the list route (with its query) of its items
 * once its parent is chosen (null before).
 * @type {Record<Level, { label: string, id: keyof Place, name: string, path: (p: Place) => string | null, query: (p: Place) => import("./api.js").Query | undefined }>}
 */
const LEVEL = {
  site: { label: "Site", id: "site_id", name: "site_name", path: () => "/_config/sites/_list", query: () => undefined },
  plant: { label: "Plant", id: "plant_id", name: "plant_name", path: (p) => (p.site_id ? "/_config/plants/_list" : null), query: (p) => ({ site_id: p.site_id }) },
  function: { label: "Function", id: "function_id", name: "function_name", path: (p) => (p.plant_id ? "/_config/functions/_list" : null), query: (p) => ({ plant_id: p.plant_id }) },
  asset: { label: "Asset", id: "asset_id", name: "asset_name", path: (p) => (p.function_id ? "/_config/assets/_list" : null), query: (p) => ({ function_id: p.function_id }) },
};

/** The place the sections last looked at, kept while moving between them. */
const remembered = { site_id: "", plant_id: "", function_id: "", asset_id: "" };

/**
 * The place with everything below `level` cleared.
 * @param {Place} place
 * @param {Level} level
 * @param {string} id
 */
function placeWith(place, level, id) {
  const next = { ...place, [LEVEL[level].id]: id };
  for (const below of LEVELS.slice(LEVELS.indexOf(level) + 1)) next[LEVEL[below].id] = "";
  return next;
}

/**
 * A site/plant/function/asset choice: `[place, choose(level, id), setPlace]`. The filter of a
 * section remembers it for the next section; a form starts from it.
 * @param {Partial<Place>} [initial]
 * @returns {[Place, (level: Level, id: string) => void, (next: Place) => void]}
 */
export function usePlace(initial, remember = false) {
  const [place, setPlace] = useState(() => ({ ...remembered, ...(initial ?? {}) }));
  /** @type {(level: Level, id: string) => void} */
  const choose = (level, id) =>
    setPlace((p) => {
      const next = placeWith(p, level, id);
      if (remember) Object.assign(remembered, next);
      return next;
    });
  /** @param {Place} next */
  const set = (next) => {
    if (remember) Object.assign(remembered, next);
    setPlace(next);
  };
  return [place, choose, set];
}

/**
 * A list from `path` that is never the answer of an earlier `path`/`query` (useGet keeps the
 * last answer while loading, and a select would then pick from the previous parent's items).
 * The rows are read by their level's id and name fields only.
 * @param {string | null} path
 * @param {import("./api.js").Query | undefined} query
 * @returns {{ data: Record<string, string>[] | undefined, error: Failure | null }}
 */
function useFresh(path, query) {
  const key = path ? `${path}?${JSON.stringify(query ?? {})}` : null;
  const [state, setState] = useState(/** @type {{ key: string | null, data: Record<string, string>[] | undefined, error: Failure | null }} */ ({ key: null, data: undefined, error: null }));
  useEffect(() => {
    if (!key) return undefined;
    let live = true;
    // `key` is set only when `path` is.
    get(/** @type {string} */ (path), query).then(
      (data) => live && setState({ key, data, error: null }),
      (/** @type {Failure} */ error) => live && setState({ key, data: undefined, error }),
    );
    return () => {
      live = false;
    };
  }, [key]);
  return state.key === key ? state : { data: undefined, error: null };
}

/**
 * One level's select, filled from its list route once its parent is chosen. A required level
 * with nothing chosen takes the first item, so that a list or form always has a place.
 * @param {{ level: Level, place: Place, choose: (level: Level, id: string) => void, optional: boolean, error?: unknown, disabled: boolean, anyLabel?: string }} props
 */
function LevelSelect({ level, place, choose, optional, error, disabled, anyLabel }) {
  const spec = LEVEL[level];
  const path = spec.path(place);
  const { data, error: loadError } = useFresh(path, path ? spec.query(place) : undefined);
  const value = place[spec.id] ?? "";
  const rows = path ? (data ?? []) : [];
  const known = rows.some((r) => r[spec.id] === value);
  useEffect(() => {
    if (!path || !data) return;
    if (!optional && (!value || !known) && data.length > 0) choose(level, data[0][spec.id]);
    else if (value && !known && data.length === 0) choose(level, "");
  }, [data, value, path]);
  const parent = LEVELS[LEVELS.indexOf(level) - 1];
  const empty = !path ? `Choose a ${parent} first` : data === undefined ? "Loading…" : optional ? (anyLabel ?? "— none —") : rows.length === 0 ? `No ${level} yet` : `Choose a ${level}`;
  return html`<${Field}
    as="select"
    label=${spec.label}
    name=${spec.id}
    error=${error}
    value=${value}
    disabled=${disabled || !path}
    hint=${loadError ? loadError.message : undefined}
    onChange=${(/** @type {ControlEvent<HTMLSelectElement>} */ e) => choose(level, e.currentTarget.value)}
  >
    <option value="">${empty}</option>
    ${rows.map((r) => html`<option key=${r[spec.id]} value=${r[spec.id]}>${r[spec.name]}</option>`)}
  </${Field}>`;
}

/**
 * Selects from the site down to `to` ("plant", "function", "asset"), each filled from its list
 * route; `optional` levels may stay empty (labelled `anyLabel`).
 * @param {{ place: Place, choose: (level: Level, id: string) => void, to?: Level, from?: Level, optional?: Level[], error?: unknown, disabled?: boolean, anyLabel?: string }} props
 */
export function PlaceSelects({ place, choose, to = "function", from = "site", optional = [], error, disabled = false, anyLabel }) {
  const levels = LEVELS.slice(LEVELS.indexOf(from), LEVELS.indexOf(to) + 1);
  return html`${levels.map(
    (level) => html`<${LevelSelect} key=${level} level=${level} place=${place} choose=${choose} optional=${optional.includes(level)} error=${error} disabled=${disabled} anyLabel=${anyLabel} />`,
  )}`;
}

/**
 * The names of the place's site, plant and function, for a heading or a note.
 * @param {{ site_name?: string | null, plant_name?: string | null, function_name?: string | null }} row
 */
export function placeNames(row) {
  return [row.site_name, row.plant_name, row.function_name].filter(Boolean).join(" › ");
}

// ------------------------------------------------------------------ monitors

/**
 * The monitors of a function (or asset) with their tags (the list has none: each monitor is fetched).
 * @param {import("./api.js").Query} query
 * @returns {Promise<import("./types.js").Monitor[]>}
 */
export async function monitorsWithTags(query) {
  /** @type {import("./types.js").Monitor[]} */
  const list = await get("/_config/monitors/_list", query);
  return Promise.all(list.map(async (m) => ({ ...m, ...(await get(`/_config/monitors/${encodeURIComponent(m.monitor_id)}`)) })));
}

/**
 * The users the caller may see, for the notify and escalation choices (every site and plant: `*`).
 * @returns {import("./ui.js").Data<import("./types.js").UserRow[]>}
 */
export function useUsers() {
  return useGet("/_config/users/_list", { site_id: "*", plant_id: "*" });
}

// ------------------------------------------------------------------ a section

/**
 * A section of Settings: its heading, filters, a list with Edit and Delete on each row, and the
 * create/edit form above the list. A delete asks first; the service's answer (or its refusal,
 * such as `Cannot delete Site as Plants exist on it`) is shown above the list.
 *
 * `renderEditor({row, kind, onDone, onCancel})` draws the form (row null: create);
 * `onDelete(row)` answers the text to show; `creates` names the create buttons and their kinds.
 * @template Row
 * @param {{ title: string, noun: string, filters?: Children, list: import("./ui.js").Data<Row[]>, columns: import("./ui.js").Column<Row>[], rowKey: (row: Row) => string, rowName: (row: Row) => string, canCreate?: boolean, canEdit?: boolean, canDelete?: boolean, creates?: { label: string, kind: string | undefined }[], renderEditor: (editor: Editor<Row>) => Children, onDelete: (row: Row) => Promise<string>, empty?: string, below?: Children }} props
 */
export function CrudSection({
  title,
  noun,
  filters,
  list,
  columns,
  rowKey,
  rowName,
  canCreate = true,
  canEdit = true,
  canDelete = true,
  creates,
  renderEditor,
  onDelete,
  empty,
  below,
}) {
  const [editing, setEditing] = useState(/** @type {{ row: Row | null, kind: string | undefined, seq: number } | null} */ (null));
  const [confirming, setConfirming] = useState(/** @type {string | null} */ (null));
  const [notice, setNotice] = useState(/** @type {Children} */ (null));
  const [failure, setFailure] = useState(/** @type {unknown} */ (null));
  const [busy, setBusy] = useState(false);
  const top = useRef(/** @type {HTMLDivElement | null} */ (null));

  const seq = useRef(0);
  /** @param {{ row: Row | null, kind: string | undefined }} state */
  const open = (state) => {
    // A new form each time (its own state), also when one was open already.
    setEditing({ ...state, seq: ++seq.current });
    setNotice(null);
    setFailure(null);
    setConfirming(null);
    requestAnimationFrame(() => top.current?.scrollIntoView({ block: "nearest" }));
  };
  /** @param {Children} answer */
  const done = (answer) => {
    setEditing(null);
    setNotice(answer);
    list.reload();
  };
  /** @param {Row} row */
  const remove = async (row) => {
    setBusy(true);
    setFailure(null);
    try {
      const answer = await onDelete(row);
      setNotice(answer);
      setConfirming(null);
      list.reload();
    } catch (e) {
      setFailure(e);
    } finally {
      setBusy(false);
    }
  };

  const buttons = creates ?? [{ label: `New ${noun}`, kind: undefined }];
  /** @type {import("./ui.js").Column<Row>[]} */
  const actions = canEdit || canDelete
    ? [
        {
          label: "Actions",
          cell: (row) =>
            html`<span class="row-actions">
              ${canEdit ? html`<${RowButton} label="Edit" what=${rowName(row)} onClick=${() => open({ row, kind: undefined })} />` : null}
              ${canDelete ? html`<${RowButton} label="Delete" what=${rowName(row)} onClick=${() => { setConfirming(rowKey(row)); setFailure(null); setNotice(null); }} />` : null}
            </span>`,
        },
      ]
    : [];
  const target = confirming ? (list.data ?? []).find((r) => rowKey(r) === confirming) : null;

  return html`<section class="settings-section" aria-labelledby="section-title">
    <div class="section-head" ref=${top}>
      <h2 id="section-title">${title}</h2>
      ${canCreate ? buttons.map((b) => html`<button type="button" class="primary" onClick=${() => open({ row: null, kind: b.kind })}>${b.label}</button>`) : null}
    </div>
    ${filters ? html`<div class="filters" role="group" aria-label="Show">${filters}</div>` : null}
    ${editing ? html`<div key=${editing.seq}>${renderEditor({ row: editing.row, kind: editing.kind, onDone: done, onCancel: () => setEditing(null) })}</div>` : null}
    ${notice ? html`<p class="done" role="status">✓ ${notice}</p>` : null}
    ${target
      ? html`<div class="confirm" role="alertdialog" aria-label="Confirm delete">
          <span><strong>Delete ${noun} “${rowName(target)}”?</strong> This cannot be undone.</span>
          <button type="button" class="danger" disabled=${busy} onClick=${() => remove(target)}>Yes, delete</button>
          <button type="button" onClick=${() => setConfirming(null)}>Cancel</button>
        </div>`
      : null}
    <${ErrorNote} error=${failure} />
    <${ErrorNote} error=${list.error} />
    ${list.data === undefined && !list.error ? html`<${Loading} what=${`Loading ${title.toLowerCase()}`} />` : null}
    ${list.data !== undefined
      ? html`<div class="table-wrap"><${Table} caption=${title} columns=${[...columns, ...actions]} rows=${list.data} rowKey=${rowKey} empty=${empty ?? `No ${noun} yet`} /></div>`
      : null}
    ${below ?? null}
  </section>`;
}

// ------------------------------------------------------------------ who may write what

/** What each user type may write (lib/access.ts; users: the auth service); the service decides, this only hides buttons it would refuse. */
/** @type {Record<string, string[]>} */
const WRITES = {
  "saas-admin": ["whole-site", "site", "plant", "function", "asset", "monitor", "pipeline", "watcher", "user"],
  "site-admin": ["site", "plant", "function", "asset", "monitor", "pipeline", "watcher", "user"],
  "plant-admin": ["function", "asset", "monitor", "pipeline", "watcher", "user"],
};
export const mayWrite = (/** @type {User} */ user, /** @type {string} */ what) => (WRITES[user.user_type] ?? []).includes(what);
