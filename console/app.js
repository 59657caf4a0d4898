// @ts-check
// The console's frame: sign-in, the navigation, and the one table of its hash routes
// (`#/alerts/<id>`, the link format of the alert emails). Each area is its own module, loaded when
// first opened, so the first page ships only what it draws. A lost session (expiry, sign-out
// elsewhere) brings the sign-in back over the page and, once signed in, the page goes on where it
// was.
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { ApiError, api, whenSessionLost, whoAmI } from "./lib/api.js";
import { AlarmSummary, NewAlarmBanner, followAlarms } from "./lib/alarms.js";
import { applyTheme, browserZone, knowSites, setPrefs, usePrefs, viewSiteZone } from "./lib/prefs.js";
import { ErrorNote, Field, html, parseRoute } from "./lib/ui.js";

const ADMINS = ["saas-admin", "site-admin", "plant-admin"];

/** @typedef {import("./lib/api.js").User} User */
/** @typedef {import("./lib/types.js").Section} Section */
/**
 * An area of the console: `#/<route>/…`, its link, who sees it, its module, the export that draws
 * each second part, its sections.
 * @typedef {object} Area
 * @property {string} route
 * @property {string} name
 * @property {() => Promise<Record<string, unknown>>} load
 * @property {(user: User) => boolean} shows
 * @property {Record<string, string>} pages
 * @property {Section[]} [sections]
 */

/**
 * Every route of the console, in navigation order: the first part of the hash names an area (its
 * link in the navigation, who sees it by module and user type, its module pages/<area>/index.js
 * with its stylesheet pages/<area>/<area>.css, loaded when first opened); `pages` names the
 * module's export that draws each second part: "" the area itself (a page may read what follows
 * from `route`, as a selection), a word such as `kpi`, or `:<name>` any other value, a record's
 * id, drawn afresh for each record. Settings' sections are modules of their own, loaded when
 * first opened, inside the Settings page's tabs.
 * @type {Area[]}
 */
export const ROUTES = [
  { route: "overview", name: "Overview", load: () => import("./pages/overview/index.js"), shows: () => true, pages: { "": "Overview" } },
  {
    route: "assets",
    name: "Assets",
    load: () => import("./pages/assets/index.js"),
    shows: (u) => u.modules.includes("Condition Monitoring") || u.modules.includes("Configuration"),
    pages: { "": "AssetList", ":asset_id": "AssetPage" },
  },
  {
    route: "alerts",
    name: "Alerts",
    load: () => import("./pages/alerts/index.js"),
    shows: (u) => u.modules.includes("Alerting"),
    // Alert ids are UUIDs, so the word `kpi` cannot be one. `#/alerts/<alert_id>` is the link of the alert emails.
    pages: { "": "AlertBoard", kpi: "AlertKpi", ":alert_id": "AlertPage" },
  },
  // `#/pipelines/<pipeline_id>?plant_id=…`: the plant's pipelines with that one chosen.
  { route: "pipelines", name: "Pipelines", load: () => import("./pages/pipelines/index.js"), shows: (u) => u.modules.includes("Configuration"), pages: { "": "Pipelines" } },
  { route: "energy", name: "Energy", load: () => import("./pages/energy/index.js"), shows: (u) => u.modules.includes("Energy Monitoring"), pages: { "": "Energy" } },
  // `#/notebooks/<notebook_id>`: the caller's notebooks with that one open.
  { route: "notebooks", name: "Notebooks", load: () => import("./pages/notebooks/index.js"), shows: (u) => u.modules.includes("Notebooks"), pages: { "": "Notebooks" } },
  {
    route: "settings",
    name: "Settings",
    load: () => import("./pages/settings/index.js"),
    shows: (u) => ADMINS.includes(u.user_type) && u.modules.includes("Configuration"),
    // `#/settings/<section>`, in the order a plant is set up: the hierarchy, then what watches it.
    pages: { "": "Settings" },
    sections: [
      { route: "sites", name: "Sites", load: () => import("./pages/settings/places.js"), part: "Sites" },
      { route: "plants", name: "Plants", load: () => import("./pages/settings/places.js"), part: "Plants" },
      { route: "functions", name: "Functions", load: () => import("./pages/settings/places.js"), part: "Functions" },
      { route: "assets", name: "Assets", load: () => import("./pages/settings/places.js"), part: "Assets" },
      { route: "monitors", name: "Monitors", load: () => import("./pages/settings/monitors.js"), part: "Monitors" },
      { route: "pipelines", name: "Pipelines", load: () => import("./pages/settings/pipelines.js"), part: "Pipelines" },
      { route: "watchers", name: "Watchers", load: () => import("./pages/settings/watchers.js"), part: "Watchers" },
      { route: "users", name: "Users", load: () => import("./pages/settings/users.js"), part: "Users" },
    ],
  },
];

/** The export of an area's module that draws the route's second part, and the record id it names (for `:<name>` pages). */
/**
 * @param {Area} area
 * @param {string} [sub]
 * @returns {{ part: string, id: string | undefined }}
 */
function pageOf(area, sub = "") {
  if (sub !== "" && !sub.startsWith(":") && Object.hasOwn(area.pages, sub)) return { part: area.pages[sub], id: undefined };
  const record = sub === "" ? undefined : Object.keys(area.pages).find((k) => k.startsWith(":"));
  if (record !== undefined) return { part: area.pages[record], id: sub };
  return { part: area.pages[""], id: undefined };
}

/** @typedef {import("./lib/ui.js").Route} Route */
/** @template {EventTarget} T @typedef {import("./lib/types.js").ControlEvent<T>} ControlEvent */

/** @param {{ onSignedIn: (user: User) => void, expired: boolean }} props */
function SignIn({ onSignedIn, expired }) {
  const [error, setError] = useState(/** @type {unknown} */ (null));
  const [busy, setBusy] = useState(false);
  /** @param {ControlEvent<HTMLFormElement>} event */
  const submit = async (event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setBusy(true);
    setError(null);
    try {
      const user = await api("POST", "/_auth/session", { body: { username: String(form.get("username") ?? ""), password: String(form.get("password") ?? "") } });
      onSignedIn(user);
    } catch (e) {
      setError(e);
      setBusy(false);
    }
  };
  return html`<main class="signin" aria-labelledby="signin-title">
    <form class="card" onSubmit=${submit}>
      <h1 id="signin-title">Sign in</h1>
      <p class="muted">Industrial Monitoring Service</p>
      ${expired ? html`<p class="notice" role="status">Your session has ended. Sign in again to go on where you were.</p>` : null}
      <${Field} label="Username" name="username" autocomplete="username" required autofocus />
      <${Field} label="Password" name="password" type="password" autocomplete="current-password" required />
      <${ErrorNote} error=${error} />
      <button type="submit" class="primary" disabled=${busy}>Sign in</button>
      <p class="muted small">The HTTP API is described at <a href="docs">/docs</a>.</p>
    </form>
  </main>`;
}

/** @param {{ user: User, current: string, onSignOut: () => void }} props */
function Nav({ user, current, onSignOut }) {
  return html`<header class="top">
    <a class="brand" href="#/overview">IMS</a>
    <nav aria-label="Main">
      <ul>
        ${ROUTES.filter((v) => v.shows(user)).map(
          (v) => html`<li><a href=${`#/${v.route}`} aria-current=${current === v.route ? "page" : undefined}>${v.name}</a></li>`,
        )}
      </ul>
    </nav>
    ${user.modules.includes("Alerting") ? html`<${AlarmSummary} />` : null}
    <div class="who">
      <${DisplayChoices} />
      <span title=${user.user_type}>${user.username}</span>
      <a href="docs" class="small">API</a>
      <button type="button" class="link" onClick=${onSignOut}>Sign out</button>
    </div>
  </header>`;
}

/** Every zone the browser knows, for the named-zone choice. */
const ZONES = typeof Intl.supportedValuesOf === "function" ? Intl.supportedValuesOf("timeZone") : [];

/** The person's display choices (lib/prefs.js), folded under one button of the header. */
function DisplayChoices() {
  const p = usePrefs();
  /** @type {(e: ControlEvent<HTMLSelectElement>) => string} */
  const value = (e) => e.currentTarget.value;
  return html`<details class="display-choices">
    <summary>Display</summary>
    <div class="display-panel card">
      <${Field} label="Display time zone" as="select" value=${p.zone} onChange=${(/** @type {ControlEvent<HTMLSelectElement>} */ e) => setPrefs({ zone: value(e) })}>
        <option value="site">Each record's site zone</option>
        <option value="browser">This browser's zone (${browserZone()})</option>
        <option value="UTC">UTC</option>
        <optgroup label="A named zone">${ZONES.filter((z) => z !== "UTC").map((z) => html`<option value=${z}>${z}</option>`)}</optgroup>
      </${Field}>
      <label class="check"><input type="checkbox" checked=${p.hour24} onChange=${(/** @type {ControlEvent<HTMLInputElement>} */ e) => setPrefs({ hour24: e.currentTarget.checked })} /> 24-hour clock</label>
      <${Field} label="Theme" as="select" value=${p.theme} onChange=${(/** @type {ControlEvent<HTMLSelectElement>} */ e) => setPrefs({ theme: value(e) === "dark" ? "dark" : "light" })}>
        <option value="light">Light</option>
        <option value="dark">Dark (control room)</option>
      </${Field}>
    </div>
  </details>`;
}

/** The module of the route's view and its stylesheet (pages/<route>/<route>.css), loaded once. */
/** @type {Map<string, Record<string, unknown>>} */
const loaded = new Map();
/** @param {string} route */
function loadStyles(route) {
  if (document.querySelector(`link[data-view="${route}"]`)) return;
  const link = document.createElement("link");
  link.rel = "stylesheet";
  link.href = `console/pages/${route}/${route}.css`;
  link.dataset.view = route;
  document.head.append(link);
}
/** @param {Area} view */
function useView(view) {
  const [mod, setMod] = useState(() => loaded.get(view.route) ?? null);
  const [error, setError] = useState(/** @type {unknown} */ (null));
  useEffect(() => {
    if (loaded.has(view.route)) {
      setMod(/** @type {Record<string, unknown>} */ (loaded.get(view.route)));
      return;
    }
    setMod(null);
    loadStyles(view.route);
    view
      .load()
      .then((m) => {
        loaded.set(view.route, m);
        setMod(m);
      })
      .catch(setError);
  }, [view.route]);
  return { mod, error };
}

/** @param {{ user: User, route: Route }} props */
function Main({ user, route }) {
  const allowed = ROUTES.filter((v) => v.shows(user));
  const view = allowed.find((v) => v.route === route.parts[0]) ?? allowed[0];
  const { mod, error } = useView(view);
  if (error) return html`<main><${ErrorNote} error=${error} /></main>`;
  if (!mod) return html`<main><p class="muted">Loading…</p></main>`;
  const { part, id } = pageOf(view, route.parts[1]);
  const View = mod[part];
  // A view of one site's records says its zone as it draws (lib/prefs.js).
  viewSiteZone(null);
  return html`<main id="main"><${View} key=${id} id=${id} user=${user} route=${route} sections=${view.sections} /></main>`;
}

function App() {
  const [user, setUser] = useState(/** @type {import("./lib/api.js").User | null | undefined} */ (undefined));
  const [expired, setExpired] = useState(false);
  const [route, setRoute] = useState(parseRoute());
  // A function as the state: set through an updater (setResume(() => fn)), as preact takes a function as one.
  const [resume, setResume] = /** @type {typeof useState<(() => void) | null>} */ (useState)(null);

  // The alarm summary's one poll follows who is signed in; the sites' zones are the times' default.
  useEffect(() => followAlarms(user && !expired ? user : null), [user?.username, expired]);
  const [, setZonesKnown] = useState(0);
  useEffect(() => {
    if (!user || !user.modules.includes("Configuration")) return;
    api("GET", "/_config/sites/_list")
      .then((/** @type {{ site_id: string, site_name: string, timezone: string }[]} */ sites) => {
        knowSites(sites);
        setZonesKnown((n) => n + 1);
      })
      .catch(() => undefined);
  }, [user?.username]);
  // Every view follows a change of the display choices at once.
  usePrefs();

  useEffect(() => {
    whoAmI()
      .then(setUser)
      .catch(() => setUser(null));
    const onHash = () => setRoute(parseRoute());
    window.addEventListener("hashchange", onHash);
    return () => window.removeEventListener("hashchange", onHash);
  }, []);

  // A request met 401: the sign-in comes back over the page; the request is repeated after it.
  useEffect(() => {
    /** @type {(() => void)[]} */
    let waiting = [];
    whenSessionLost(
      () =>
        new Promise((resolve) => {
          waiting.push(resolve);
          setExpired(true);
          setResume(() => () => {
            const all = waiting;
            waiting = [];
            for (const r of all) r();
          });
        }),
    );
  }, []);

  if (user === undefined) return html`<p class="loading">Loading the console…</p>`;
  if (user === null || expired) {
    return html`<${SignIn}
      expired=${expired}
      onSignedIn=${(/** @type {User} */ u) => {
        const sameUser = user && u.username === user.username;
        setUser(u);
        setExpired(false);
        if (resume && sameUser) resume();
        setResume(null);
        if (!sameUser && user) location.hash = "#/overview";
      }}
    />`;
  }
  const signOut = async () => {
    try {
      await api("DELETE", "/_auth/session");
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
    }
    setUser(null);
  };
  return html`<div class="shell">
    <${Nav} user=${user} current=${route.parts[0] ?? "overview"} onSignOut=${signOut} />
    <${NewAlarmBanner} />
    <${Main} user=${user} route=${route} />
  </div>`;
}

// index.html holds the element.
applyTheme();
render(html`<${App} />`, /** @type {HTMLElement} */ (document.getElementById("app")));
