// Settings (issue 18, for the admin types): the configuration a plant's administrator keeps, one
// section per kind of record, as `#/settings/<section>`. Each section lists its records and
// creates, edits and deletes them through the service's routes, answering with the service's own
// messages. A section's module is loaded when first opened.
import { useEffect, useState } from "preact/hooks";
import { ErrorNote, Loading, Page, html, href } from "../../lib/ui.js";

const places = () => import("./places.js");

/** The sections in the order a plant is set up: the hierarchy, then what watches it. */
const SECTIONS = [
  { route: "sites", name: "Sites", load: places, part: "Sites" },
  { route: "plants", name: "Plants", load: places, part: "Plants" },
  { route: "functions", name: "Functions", load: places, part: "Functions" },
  { route: "assets", name: "Assets", load: places, part: "Assets" },
  { route: "monitors", name: "Monitors", load: () => import("./monitors.js"), part: "Monitors" },
  { route: "pipelines", name: "Pipelines", load: () => import("./pipelines.js"), part: "Pipelines" },
  { route: "watchers", name: "Watchers", load: () => import("./watchers.js"), part: "Watchers" },
  { route: "users", name: "Users", load: () => import("./users.js"), part: "Users" },
];

function useSection(section) {
  const [state, setState] = useState({ route: null, View: null, error: null });
  useEffect(() => {
    let live = true;
    section
      .load()
      .then((m) => live && setState({ route: section.route, View: m[section.part], error: null }))
      .catch((error) => live && setState({ route: section.route, View: null, error }));
    return () => {
      live = false;
    };
  }, [section.route]);
  return state.route === section.route ? state : { View: null, error: null };
}

export default function Settings({ user, route }) {
  const section = SECTIONS.find((s) => s.route === route.parts[1]) ?? SECTIONS[0];
  const { View, error } = useSection(section);
  return html`<${Page} title="Settings">
    <nav class="settings-tabs" aria-label="Settings sections">
      <ul>
        ${SECTIONS.map(
          (s) => html`<li><a href=${href("settings", s.route)} aria-current=${s.route === section.route ? "page" : undefined}>${s.name}</a></li>`,
        )}
      </ul>
    </nav>
    <${ErrorNote} error=${error} />
    ${View ? html`<${View} key=${section.route} user=${user} route=${route} />` : error ? null : html`<${Loading} what=${`Loading ${section.name}`} />`}
  </${Page}>`;
}
