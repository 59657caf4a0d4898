// @ts-check
// Where the operations views (Pipelines, Energy) look: a plant of the caller, then one of its
// functions. The choice is kept in the hash route's query (`#/energy?plant_id=…&function_id=…`),
// so that a reload or a shared link shows the same place and Back undoes a change.
import { get, queryString } from "./api.js";
import { Field, html } from "./ui.js";

/** @typedef {import("./types.js").PlantOfSite} PlantOfSite */

/**
 * The caller's plants (sites → plants), each with its site's name and time zone, in the service's order.
 * @returns {Promise<PlantOfSite[]>}
 */
export async function loadPlants() {
  /** @type {import("./types.js").Site[]} */
  const sites = await get("/_config/sites/_list");
  const perSite = await Promise.all(
    sites.map(async (site) => (/** @type {import("./types.js").Plant[]} */ (await get("/_config/plants/_list", { site_id: site.site_id }))).map((p) => ({ ...p, site_name: site.site_name, timezone: site.timezone }))),
  );
  return perSite.flat();
}

/**
 * Goes to `#/<parts…>?<query>`; the app re-renders the view with the new route.
 * @param {string[]} parts
 * @param {import("./api.js").Query} [query]
 */
export function go(parts, query) {
  location.hash = `#/${parts.map((p) => encodeURIComponent(p)).join("/")}${queryString(query)}`;
}

/**
 * The plant chooser, its options grouped by site (a site-admin or SaaS admin sees several).
 * @param {{ plants: PlantOfSite[], value: string | null | undefined, onChange: (plantId: string) => void }} props
 */
export function PlantSelect({ plants, value, onChange }) {
  /** @type {Map<string, PlantOfSite[]>} */
  const bySite = new Map();
  for (const p of plants) {
    if (!bySite.has(p.site_name)) bySite.set(p.site_name, []);
    /** @type {PlantOfSite[]} */ (bySite.get(p.site_name)).push(p);
  }
  return html`<${Field} label="Plant" name="plant_id" as="select" value=${value ?? ""} onChange=${(/** @type {import("./types.js").ControlEvent<HTMLSelectElement>} */ e) => onChange(e.currentTarget.value)}>
    ${[...bySite.entries()].map(
      ([site, list]) => html`<optgroup label=${site}>${list.map((p) => html`<option value=${p.plant_id}>${p.plant_name}</option>`)}</optgroup>`,
    )}
  </${Field}>`;
}
