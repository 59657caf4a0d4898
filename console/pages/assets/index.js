// @ts-check
// Assets. `#/assets`: the caller's assets, chosen by site, plant and function or
// all of them in scope, with their condition-monitoring health in words, the abnormal first.
// `#/assets/<asset_id>`: the asset page (asset.js). Both are routed by app.js's table.
import { useState } from "preact/hooks";
import { get } from "../../lib/api.js";
import { AssetState, alarmsByAsset, useAlarms } from "../../lib/alarms.js";
import { ErrorNote, Field, Loading, Page, Table, html, href, time, useData } from "../../lib/ui.js";

const REFRESH_MS = 10_000;

/** @typedef {import("../../lib/types.js").Site} Site */
/** @typedef {import("../../lib/types.js").Plant} Plant */
/** @typedef {import("../../lib/types.js").PlantFunction} PlantFunction */
/** @typedef {import("../../lib/types.js").AssetHealth} AssetHealth */
/** @template {EventTarget} T @typedef {import("../../lib/types.js").ControlEvent<T>} ControlEvent */
/**
 * A site of the filter with its plants and their functions.
 * @typedef {Site & { plants: (Plant & { functions: PlantFunction[] })[] }} SitePlaces
 */
/**
 * The filter's place, from the hash query (undefined: all).
 * @typedef {{ site_id?: string, plant_id?: string, function_id?: string }} AssetFilter
 */
/**
 * A function the filter keeps, with its site and plant.
 * @typedef {{ site: Site, plant: Plant, fn: PlantFunction }} ChosenFunction
 */
/**
 * An asset of the list with its place's names and its CM health (none without the module).
 * @typedef {import("../../lib/types.js").Asset & { health: AssetHealth | undefined }} AssetRow
 */

/**
 * Sites → plants → functions of the caller's scope: the choices of the filter.
 * @returns {Promise<SitePlaces[]>}
 */
async function loadPlaces() {
  /** @type {Site[]} */
  const sites = await get("/_config/sites/_list");
  return Promise.all(
    sites.map(async (site) => {
      /** @type {Plant[]} */
      const plants = await get("/_config/plants/_list", { site_id: site.site_id });
      return {
        ...site,
        plants: await Promise.all(plants.map(async (plant) => ({ ...plant, functions: await get("/_config/functions/_list", { plant_id: plant.plant_id }) }))),
      };
    }),
  );
}

/**
 * The functions the filter keeps, each with its site and plant.
 * @param {SitePlaces[]} places
 * @param {AssetFilter} filter
 */
function chosenFunctions(places, { site_id, plant_id, function_id }) {
  /** @type {ChosenFunction[]} */
  const out = [];
  for (const site of places) {
    if (site_id && site.site_id !== site_id) continue;
    for (const plant of site.plants) {
      if (plant_id && plant.plant_id !== plant_id) continue;
      for (const fn of plant.functions) {
        if (function_id && fn.function_id !== function_id) continue;
        out.push({ site, plant, fn });
      }
    }
  }
  return out;
}

/**
 * The assets of those functions with their CM health (op 74), the requests of each function in parallel.
 * @param {ChosenFunction[]} functions
 * @param {boolean} withHealth
 * @returns {Promise<AssetRow[]>}
 */
async function loadAssets(functions, withHealth) {
  const lists = await Promise.all(
    functions.map(async ({ site, plant, fn }) => {
      /** @type {[import("../../lib/types.js").Asset[], AssetHealth[]]} */
      const [assets, health] = await Promise.all([
        get("/_config/assets/_list", { function_id: fn.function_id }),
        withHealth ? get("/_cm/assets/_list", { function_id: fn.function_id }) : [],
      ]);
      const healthOf = new Map(health.map((h) => [h.asset_id, h]));
      return assets.map((a) => ({ ...a, site_name: site.site_name, plant_name: plant.plant_name, function_name: fn.function_name, health: healthOf.get(a.asset_id) }));
    }),
  );
  return lists.flat();
}

/** @type {Record<string, number>} */
const RANK = { critical: 1, warning: 2 };
/**
 * An asset with a standing alarm first, then by CM status; no health finds no rank (an object's
 * `undefined` key is "undefined"): last.
 * @param {AssetRow} a
 * @param {Map<string, unknown[]>} alarms
 */
const rankOf = (a, alarms) => (alarms.has(a.asset_id) ? 0 : (RANK[/** @type {string} */ (a.health?.asset_status)] ?? 3));

/** @param {{ places: SitePlaces[], filter: AssetFilter, onChange: (next: AssetFilter) => void }} props */
function Filters({ places, filter, onChange }) {
  const sites = places;
  const plants = sites.filter((s) => !filter.site_id || s.site_id === filter.site_id).flatMap((s) => s.plants);
  const functions = plants.filter((p) => !filter.plant_id || p.plant_id === filter.plant_id).flatMap((p) => p.functions);
  return html`<form class="row asset-filters" onSubmit=${(/** @type {Event} */ e) => e.preventDefault()} aria-label="Choose assets">
    <${Field} label="Site" name="site_id" as="select" value=${filter.site_id ?? ""} onChange=${(/** @type {ControlEvent<HTMLSelectElement>} */ e) => onChange({ site_id: e.currentTarget.value })}>
      <option value="">All sites</option>
      ${sites.map((s) => html`<option value=${s.site_id}>${s.site_name}</option>`)}
    </${Field}>
    <${Field} label="Plant" name="plant_id" as="select" value=${filter.plant_id ?? ""} onChange=${(/** @type {ControlEvent<HTMLSelectElement>} */ e) => onChange({ site_id: filter.site_id, plant_id: e.currentTarget.value })}>
      <option value="">All plants</option>
      ${plants.map((p) => html`<option value=${p.plant_id}>${p.plant_name}</option>`)}
    </${Field}>
    <${Field}
      label="Function"
      name="function_id"
      as="select"
      value=${filter.function_id ?? ""}
      onChange=${(/** @type {ControlEvent<HTMLSelectElement>} */ e) => onChange({ site_id: filter.site_id, plant_id: filter.plant_id, function_id: e.currentTarget.value })}
    >
      <option value="">All functions</option>
      ${functions.map((f) => html`<option value=${f.function_id}>${f.function_name}</option>`)}
    </${Field}>
  </form>`;
}

/**
 * "3 assets: 1 in alarm, 1 critical, 1 normal" (an asset in alarm is counted there only).
 * @param {AssetRow[]} assets
 * @param {Map<string, unknown[]>} alarms
 */
function countsOf(assets, alarms) {
  /** @type {Record<string, number>} */
  const n = { "in alarm": 0, critical: 0, warning: 0, normal: 0 };
  for (const a of assets) {
    const k = alarms.has(a.asset_id) ? "in alarm" : a.health?.asset_status || "normal";
    n[k] = (n[k] ?? 0) + 1;
  }
  const parts = ["in alarm", "critical", "warning", "normal"].filter((k) => n[k] > 0).map((k) => `${n[k]} ${k}`);
  return `${assets.length} asset${assets.length === 1 ? "" : "s"}${parts.length ? `: ${parts.join(", ")}` : ""}`;
}

/** @param {{ assets: AssetRow[], withHealth: boolean, alarms: Map<string, import("../../lib/types.js").PlacedAlert[]> }} props */
function AssetTable({ assets, withHealth, alarms }) {
  /** @type {import("../../lib/ui.js").Column<AssetRow>[]} */
  const columns = [
    { label: "Asset", cell: (a) => html`<a href=${href("assets", a.asset_id)}>${a.asset_name}</a>` },
    ...(withHealth
      ? [
          { label: "Health", cell: (/** @type {AssetRow} */ a) => html`<${AssetState} health=${a.health} alarms=${alarms.get(a.asset_id)} empty=${html`<span class="muted">—</span>`} />` },
          { label: "Faults", cell: (/** @type {AssetRow} */ a) => (a.health?.asset_faults?.length ? a.health.asset_faults.join(", ") : html`<span class="muted">none found</span>`) },
          {
            label: "Event",
            cell: (/** @type {AssetRow} */ a) =>
              a.health?.event_id
                ? html`${a.health.event_label} <span class="muted small">since ${time(Number(a.health.event_start) * 1000)} · ${a.health.event_status}</span>`
                : html`<span class="muted">—</span>`,
          },
        ]
      : []),
    { label: "Critical asset", cell: (a) => a.is_critical },
    { label: "Category", cell: (a) => a.asset_category },
    { label: "Monitors", num: true, cell: (a) => a.monitor_count },
    { label: "Function", cell: (a) => a.function_name },
    { label: "Plant", cell: (a) => a.plant_name },
    { label: "Site", cell: (a) => a.site_name },
  ];
  return html`<${Table} caption=${countsOf(assets, alarms)} columns=${columns} rows=${assets} rowKey=${(/** @type {AssetRow} */ a) => a.asset_id} empty="No asset here." />`;
}

/** @param {import("../../lib/types.js").PageProps} props */
export function AssetList({ user, route }) {
  const withHealth = user.modules.includes("Condition Monitoring");
  const filter = { site_id: route.query.site_id || undefined, plant_id: route.query.plant_id || undefined, function_id: route.query.function_id || undefined };
  const [find, setFind] = useState("");
  const places = useData(loadPlaces, [user.username]);
  const functions = places.data ? chosenFunctions(places.data, filter) : null;
  const fnKey = functions ? functions.map((f) => f.fn.function_id).join(",") : null;
  const assets = useData(() => (functions ? loadAssets(functions, withHealth) : Promise.resolve(undefined)), [fnKey, withHealth], REFRESH_MS);
  // The filter lives in the hash, so that a chosen plant survives a reload and the back button.
  /** @param {AssetFilter} next */
  const choose = (next) => {
    const q = new URLSearchParams(Object.entries(next).filter(([, v]) => v));
    location.hash = `#/assets${q.toString() ? `?${q}` : ""}`;
  };
  const alarms = alarmsByAsset(useAlarms().summary);
  const needle = find.trim().toLowerCase();
  const shown = (assets.data ?? [])
    .filter((a) => !needle || a.asset_name.toLowerCase().includes(needle))
    .sort((a, b) => rankOf(a, alarms) - rankOf(b, alarms) || a.asset_name.localeCompare(b.asset_name));
  const tools = html`<span class="muted small">${withHealth ? `Health refreshed every ${REFRESH_MS / 1000} s` : ""}</span>`;
  return html`<${Page} title="Assets" tools=${tools}>
    <${ErrorNote} error=${places.error} />
    ${places.data === undefined && !places.error ? html`<${Loading} what="Loading the sites" />` : null}
    ${places.data
      ? html`<div class="card">
          <div class="row">
            <${Filters} places=${places.data} filter=${filter} onChange=${choose} />
            <${Field} label="Find asset" name="find" type="search" value=${find} onInput=${(/** @type {ControlEvent<HTMLInputElement>} */ e) => setFind(e.currentTarget.value)} placeholder="name" />
          </div>
        </div>`
      : null}
    <${ErrorNote} error=${assets.error} />
    ${places.data && assets.data === undefined && !assets.error ? html`<${Loading} what="Loading the assets" />` : null}
    ${assets.data ? html`<div class="asset-list"><${AssetTable} assets=${shown} withHealth=${withHealth} alarms=${alarms} /></div>` : null}
  </${Page}>`;
}

export { AssetPage } from "./asset.js";
