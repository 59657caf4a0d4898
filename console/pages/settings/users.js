// @ts-check
// Settings: users, their type, place and modules (spec ops 38-42). The user types offered are the
// ones the caller may create (the auth service's rule); the service has the last word.
import { useState } from "preact/hooks";
import { del, post, put } from "../../lib/api.js";
import { Field, html, time, useGet } from "../../lib/ui.js";
import { CheckList, CrudSection, EditorForm, PlaceSelects, binder, compact, mayWrite, usePlace, useSubmit } from "../../lib/settings-kit.js";

/** @typedef {import("../../lib/api.js").User} User */
/** @typedef {import("../../lib/types.js").UserRow} UserRow */
/** @template {EventTarget} T @typedef {import("../../lib/types.js").ControlEvent<T>} ControlEvent */

const enc = encodeURIComponent;
export const MODULES = ["Configuration", "Alerting", "Condition Monitoring", "Energy Monitoring", "Notebooks"];
/** @type {Record<string, string>} */
const TYPE_NAMES = {
  "saas-admin": "SaaS admin",
  "support-analyst": "Support analyst",
  "site-admin": "Site admin",
  "plant-admin": "Plant admin",
  "general-user": "General user",
};
/**
 * Whom each admin type may create.
 * @type {Record<string, string[]>}
 */
const CREATABLE = {
  "saas-admin": ["general-user", "plant-admin", "site-admin", "support-analyst", "saas-admin"],
  "site-admin": ["general-user", "plant-admin"],
  "plant-admin": ["general-user"],
};
/** Where a user of the type belongs: every site, one site, or one plant. */
const placeKind = (/** @type {string} */ type) => (type === "saas-admin" || type === "support-analyst" ? "all" : type === "site-admin" ? "site" : "plant");

/** @param {import("../../lib/settings-kit.js").Editor<UserRow> & { user: User }} props */
function UserEditor({ row, user, onDone, onCancel }) {
  const [v, setV] = useState(() => ({
    username: row?.username ?? "",
    mobile_number: row?.mobile_number ?? "",
    country_code: row?.country_code ?? "",
    password: "",
  }));
  const [type, setType] = useState(row?.user_type ?? "general-user");
  const [modules, setModules] = useState(row?.modules ?? []);
  const [touched, setTouched] = useState(Boolean(row));
  const [place, choose] = usePlace(row ? { site_id: row.site_id === "*" ? "" : row.site_id, plant_id: row.plant_id === "*" ? "" : row.plant_id } : undefined);
  const bind = binder(v, setV);
  const kind = placeKind(type);
  const types = [...new Set([...(CREATABLE[user.user_type] ?? []), ...(row ? [row.user_type] : [])])];

  /** @param {string} next */
  const changeType = (next) => {
    setType(next);
    // Admin types reach every module: offered all until the modules are chosen by hand.
    if (!touched) setModules(next === "general-user" ? [] : [...MODULES]);
  };
  const submit = useSubmit(async () => {
    const body = {
      username: row ? row.username : v.username.trim(),
      mobile_number: v.mobile_number,
      country_code: v.country_code,
      user_type: type,
      site_id: kind === "all" ? undefined : place.site_id,
      plant_id: kind === "plant" ? place.plant_id : undefined,
      modules,
    };
    if (row) {
      const answer = await put(`/_config/users/${enc(row.username)}`, { ...compact(body), password: v.password === "" ? null : v.password });
      return answer?.message ?? `User ${row.username} saved`;
    }
    const answer = await post("/_config/users", compact({ ...body, password: v.password }));
    return answer?.message ?? `User ${body.username} created`;
  }, onDone);
  const e = submit.error;
  return html`<${EditorForm} title=${row ? `Edit user ${row.username}` : "New user"} submit=${submit} submitLabel=${row ? "Save" : "Create"} onCancel=${onCancel}>
    <div class="form-grid">
      ${row
        ? html`<${Field} label="Username" name="username" value=${row.username} disabled hint="A username is kept" />`
        : html`<${Field} label="Username (email)" name="username" type="email" autocomplete="off" error=${e} required ...${bind("username")} />`}
      <${Field} as="select" label="User type" name="user_type" error=${e} value=${type} onChange=${(/** @type {ControlEvent<HTMLSelectElement>} */ ev) => changeType(ev.currentTarget.value)}>
        ${types.map((t) => html`<option value=${t}>${TYPE_NAMES[t] ?? t}</option>`)}
      </${Field}>
      ${kind === "all" ? html`<p class="muted small">Sees every site and plant.</p>` : html`<${PlaceSelects} place=${place} choose=${choose} to=${kind} error=${e} />`}
      <${Field} label="Country code" name="country_code" error=${e} placeholder="+91" required ...${bind("country_code")} />
      <${Field} label="Mobile number" name="mobile_number" error=${e} type="tel" required ...${bind("mobile_number")} />
      <${Field}
        label=${row ? "New password" : "Password"}
        name="password"
        type="password"
        autocomplete="new-password"
        error=${e}
        hint=${row ? "Empty: unchanged" : "Empty: one is made and emailed"}
        ...${bind("password")}
      />
    </div>
    <${CheckList}
      legend="Modules"
      name="modules"
      options=${MODULES.map((m) => ({ value: m, label: m }))}
      value=${modules}
      onChange=${(/** @type {string[]} */ m) => {
        setTouched(true);
        setModules(m);
      }}
      error=${e}
      hint=${type === "general-user" ? "A general user sees only these" : "Admin types reach every module"}
    />
  </${EditorForm}>`;
}

/** @param {import("../../lib/types.js").PageProps} props */
export function Users({ user }) {
  /** @type {import("../../lib/ui.js").Data<UserRow[]>} */
  const list = useGet("/_config/users/_list", { site_id: "*", plant_id: "*" });
  return html`<${CrudSection}
    title="Users"
    noun="user"
    list=${list}
    columns=${[
      { label: "Username", cell: (/** @type {UserRow} */ u) => html`<strong>${u.username}</strong>` },
      { label: "Type", cell: (/** @type {UserRow} */ u) => TYPE_NAMES[u.user_type] ?? u.user_type },
      { label: "Site", cell: (/** @type {UserRow} */ u) => u.site_name ?? (u.site_id === "*" ? "All" : "—") },
      { label: "Plant", cell: (/** @type {UserRow} */ u) => u.plant_name ?? (u.plant_id === "*" ? "All" : "—") },
      { label: "Modules", cell: (/** @type {UserRow} */ u) => (u.modules?.length ? u.modules.join(", ") : html`<span class="muted">none</span>`) },
      { label: "Mobile", cell: (/** @type {UserRow} */ u) => [u.country_code, u.mobile_number].filter(Boolean).join(" ") || "—" },
      { label: "Last sign-in", cell: (/** @type {UserRow} */ u) => (u.last_login_time ? time(Number(u.last_login_time)) : html`<span class="muted">never</span>`) },
    ]}
    rowKey=${(/** @type {UserRow} */ u) => u.username}
    rowName=${(/** @type {UserRow} */ u) => u.username}
    canCreate=${mayWrite(user, "user")}
    canEdit=${mayWrite(user, "user")}
    canDelete=${mayWrite(user, "user")}
    renderEditor=${(/** @type {import("../../lib/settings-kit.js").Editor<UserRow>} */ p) => html`<${UserEditor} ...${p} user=${user} />`}
    onDelete=${async (/** @type {UserRow} */ u) => (await del(`/_config/users/${enc(u.username)}`))?.message ?? `User ${u.username} deleted`}
  />`;
}
