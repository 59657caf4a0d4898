// @ts-check
// What the Settings sections share: a section's frame (its list, a create/edit form, a delete
// that asks first), forms that answer with the service's own error next to the field it names,
// and the site → plant → function → asset selects filled from the list routes.
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { ApiError, get } from "./api.js";
import { ErrorNote, Field, Loading, Table, html, useGet } from "./ui.js";

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

/** The message of `error` when it names `name` or an input inside it (`modules` for `modules[1]`). */
export function errorFor(error, name) {
  if (!(error instanceof ApiError) || !error.field) return null;
  const f = error.field;
  return f === name || f.startsWith(`${name}[`) || f.startsWith(`${name}.`) ? error.message : null;
}

/** A form's submission: `action` answers the text to show once done; errors keep the form open. */
export function useSubmit(action, onDone) {
  const [error, setError] = useState(/** @type {import("./api.js").Failure | null} */ (null));
  const [busy, setBusy] = useState(false);
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

/** `{value, onInput}` of a text input bound to `state[key]`. */
export function binder(state, setState) {
  return (key) => ({ value: state[key] ?? "", onInput: (e) => setState((s) => ({ ...s, [key]: e.currentTarget.value })) });
}

/** Empty texts and undefined left out: the service reads a missing optional field as "not given". */
export function compact(obj) {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined && v !== ""));
}

/** A number typed in a field: undefined when empty; what was typed when it is no number, so the service names it. */
export function numberOf(text) {
  const t = String(text ?? "").trim();
  if (t === "") return undefined;
  const n = Number(t);
  return Number.isFinite(n) ? n : t;
}

const cssName = (name) => (window.CSS?.escape ? window.CSS.escape(name) : name.replace(/["\\]/g, "\\$&"));

/**
 * A create or edit form. An error that names one of its inputs is shown next to it (Field does,
 * and the input gets the focus); any other above the buttons. `novalidate`: the service checks
 * and answers in its own words.
 */
export function EditorForm({ title, submit, submitLabel = "Save", onCancel, children, className = "" }) {
  const ref = useRef(/** @type {HTMLFormElement | null} */ (null));
  const [general, setGeneral] = useState(false);
  const { error, busy, onSubmit } = submit;
  useLayoutEffect(() => {
    if (!error) return setGeneral(false);
    const f = error instanceof ApiError ? error.field : null;
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

/** A labelled checkbox. */
export function Check({ label, checked, onChange, name, disabled }) {
  return html`<label class="check"><input type="checkbox" name=${name} checked=${checked} disabled=${disabled} onChange=${(e) => onChange(e.currentTarget.checked)} /> ${label}</label>`;
}

/**
 * Checkboxes of a list of values (modules, users): `value` the chosen ones. Chosen values that
 * are not among `options` stay listed, so that an edit never drops them unseen.
 */
export function CheckList({ legend, name, options, value, onChange, error, hint, scroll = false }) {
  const mine = errorFor(error, name);
  const all = [...options, ...value.filter((v) => !options.some((o) => o.value === v)).map((v) => ({ value: v, label: v }))];
  const toggle = (v, on) => onChange(on ? [...value, v] : value.filter((x) => x !== v));
  return html`<fieldset class=${`checks${scroll ? " scroll" : ""}`} data-field=${name} aria-invalid=${mine ? "true" : undefined}>
    <legend>${legend}</legend>
    <div class="check-items">
      ${all.length === 0 ? html`<span class="muted small">None to choose</span>` : null}
      ${all.map((o) => html`<${Check} key=${o.value} label=${o.label} checked=${value.includes(o.value)} onChange=${(on) => toggle(o.value, on)} />`)}
    </div>
    ${mine ? html`<span class="field-error" role="alert">${mine}</span>` : hint ? html`<span class="hint">${hint}</span>` : null}
  </fieldset>`;
}

/** A button whose accessible name carries the row it acts on ("Edit Pump 1"), read as "Edit" on screen. */
export function RowButton({ label, what, onClick, className = "" }) {
  return html`<button type="button" class=${`small-button ${className}`} onClick=${onClick}>${label}<span class="sr-only"> ${what}</span></button>`;
}

// ------------------------------------------------------------------ places

const LEVELS = ["site", "plant", "function", "asset"];
const LEVEL = {
  site: { label: "Site", id: "site_id", name: "site_name", path: () => "/_config/sites/_list", query: () => undefined },
  plant: { label: "Plant", id: "plant_id", name: "plant_name", path: (p) => (p.site_id ? "/_config/plants/_list" : null), query: (p) => ({ site_id: p.site_id }) },
  function: { label: "Function", id: "function_id", name: "function_name", path: (p) => (p.plant_id ? "/_config/functions/_list" : null), query: (p) => ({ plant_id: p.plant_id }) },
  asset: { label: "Asset", id: "asset_id", name: "asset_name", path: (p) => (p.function_id ? "/_config/assets/_list" : null), query: (p) => ({ function_id: p.function_id }) },
};

/** The place the sections last looked at, kept while moving between them. */
const remembered = { site_id: "", plant_id: "", function_id: "", asset_id: "" };

/** The place with everything below `level` cleared. */
function placeWith(place, level, id) {
  const next = { ...place, [LEVEL[level].id]: id };
  for (const below of LEVELS.slice(LEVELS.indexOf(level) + 1)) next[LEVEL[below].id] = "";
  return next;
}

/**
 * A site/plant/function/asset choice: `[place, choose(level, id), setPlace]`. The filter of a
 * section remembers it for the next section; a form starts from it.
 */
export function usePlace(initial, remember = false) {
  const [place, setPlace] = useState(() => ({ ...remembered, ...(initial ?? {}) }));
  const choose = (level, id) =>
    setPlace((p) => {
      const next = placeWith(p, level, id);
      if (remember) Object.assign(remembered, next);
      return next;
    });
  const set = (next) => {
    if (remember) Object.assign(remembered, next);
    setPlace(next);
  };
  return [place, choose, set];
}

/**
 * A list from `path` that is never the answer of an earlier `path`/`query` (useGet keeps the
 * last answer while loading, and a select would then pick from the previous parent's items).
 */
function useFresh(path, query) {
  const key = path ? `${path}?${JSON.stringify(query ?? {})}` : null;
  const [state, setState] = useState(/** @type {{ key: string | null, data: any[] | undefined, error: any }} */ ({ key: null, data: undefined, error: null }));
  useEffect(() => {
    if (!key) return undefined;
    let live = true;
    get(path, query).then(
      (data) => live && setState({ key, data, error: null }),
      (error) => live && setState({ key, data: undefined, error }),
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
    onChange=${(e) => choose(level, e.currentTarget.value)}
  >
    <option value="">${empty}</option>
    ${rows.map((r) => html`<option key=${r[spec.id]} value=${r[spec.id]}>${r[spec.name]}</option>`)}
  </${Field}>`;
}

/**
 * Selects from the site down to `to` ("plant", "function", "asset"), each filled from its list
 * route; `optional` levels may stay empty (labelled `anyLabel`).
 */
export function PlaceSelects({ place, choose, to = "function", from = "site", optional = [], error, disabled = false, anyLabel }) {
  const levels = LEVELS.slice(LEVELS.indexOf(from), LEVELS.indexOf(to) + 1);
  return html`${levels.map(
    (level) => html`<${LevelSelect} key=${level} level=${level} place=${place} choose=${choose} optional=${optional.includes(level)} error=${error} disabled=${disabled} anyLabel=${anyLabel} />`,
  )}`;
}

/** The names of the place's site, plant and function, for a heading or a note. */
export function placeNames(row) {
  return [row.site_name, row.plant_name, row.function_name].filter(Boolean).join(" › ");
}

// ------------------------------------------------------------------ monitors

/** The monitors of a function (or asset) with their tags (the list has none: each monitor is fetched). */
export async function monitorsWithTags(query) {
  const list = await get("/_config/monitors/_list", query);
  return Promise.all(list.map(async (m) => ({ ...m, ...(await get(`/_config/monitors/${encodeURIComponent(m.monitor_id)}`)) })));
}

/** The users the caller may see, for the notify and escalation choices (every site and plant: `*`). */
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
  const [editing, setEditing] = useState(/** @type {{ row: any, kind: string | undefined, seq: number } | null} */ (null));
  const [confirming, setConfirming] = useState(/** @type {string | null} */ (null));
  const [notice, setNotice] = useState(/** @type {string | null} */ (null));
  const [failure, setFailure] = useState(/** @type {unknown} */ (null));
  const [busy, setBusy] = useState(false);
  const top = useRef(/** @type {HTMLDivElement | null} */ (null));

  const seq = useRef(0);
  const open = (state) => {
    // A new form each time (its own state), also when one was open already.
    setEditing({ ...state, seq: ++seq.current });
    setNotice(null);
    setFailure(null);
    setConfirming(null);
    requestAnimationFrame(() => top.current?.scrollIntoView({ block: "nearest" }));
  };
  const done = (answer) => {
    setEditing(null);
    setNotice(answer);
    list.reload();
  };
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
const WRITES = {
  "saas-admin": ["whole-site", "site", "plant", "function", "asset", "monitor", "pipeline", "watcher", "user"],
  "site-admin": ["site", "plant", "function", "asset", "monitor", "pipeline", "watcher", "user"],
  "plant-admin": ["function", "asset", "monitor", "pipeline", "watcher", "user"],
};
export const mayWrite = (user, what) => (WRITES[user.user_type] ?? []).includes(what);
