// @ts-check
// Settings (for the admin types): the configuration a plant's administrator keeps, one
// section per kind of record, as `#/settings/<section>` (the sections are in app.js's route
// table). Each section lists its records and creates, edits and deletes them through the
// service's routes, answering with the service's own messages. A section's module is loaded when
// first opened.
import { useEffect, useState } from "preact/hooks";
import { ErrorNote, Loading, Page, html, href } from "../../lib/ui.js";

/** @typedef {import("../../lib/types.js").Section} Section */

/**
 * @param {Section} section
 * @returns {{ View: unknown, error: unknown }}
 */
function useSection(section) {
  const [state, setState] = useState(/** @type {{ route: string | null, View: unknown, error: unknown }} */ ({ route: null, View: null, error: null }));
  useEffect(() => {
    let live = true;
    section
      .load()
      .then((m) => live && setState({ route: section.route, View: m[section.part], error: null }))
      .catch((/** @type {unknown} */ error) => live && setState({ route: section.route, View: null, error }));
    return () => {
      live = false;
    };
  }, [section.route]);
  return state.route === section.route ? state : { View: null, error: null };
}

/** @param {import("../../lib/types.js").PageProps & { sections: Section[] }} props */
export function Settings({ user, route, sections }) {
  const section = sections.find((s) => s.route === route.parts[1]) ?? sections[0];
  const { View, error } = useSection(section);
  return html`<${Page} title="Settings">
    <nav class="settings-tabs" aria-label="Settings sections">
      <ul>
        ${sections.map(
          (s) => html`<li><a href=${href("settings", s.route)} aria-current=${s.route === section.route ? "page" : undefined}>${s.name}</a></li>`,
        )}
      </ul>
    </nav>
    <${ErrorNote} error=${error} />
    ${View ? html`<${View} key=${section.route} user=${user} route=${route} />` : error ? null : html`<${Loading} what=${`Loading ${section.name}`} />`}
  </${Page}>`;
}
