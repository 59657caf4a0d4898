// @ts-check
// Overview: the caller's sites → plants → functions → assets, with live health (the CM status of
// each asset, refreshed every 10 s without a reload; the alarms standing against each asset and
// function from the one alarm summary of the page, lib/alarms.js). Only what deviates is coloured;
// shelved alarms are counted apart, not as active.
import { get } from "../../lib/api.js";
import { AssetState, alarmsByAsset, useAlarms } from "../../lib/alarms.js";
import { ErrorNote, Loading, Page, Severity, Status, html, href, num, toneOfColor, useData } from "../../lib/ui.js";

const REFRESH_MS = 10_000;

/** @typedef {import("../../lib/api.js").User} User */
/** @typedef {import("../../lib/types.js").Site} Site */
/** @typedef {import("../../lib/types.js").Plant} Plant */
/** @typedef {import("../../lib/types.js").PlantFunction} PlantFunction */
/** @typedef {import("../../lib/types.js").Asset} Asset */
/** @typedef {import("../../lib/types.js").AssetHealth} AssetHealth */
/** @typedef {import("../../lib/types.js").SeverityCounts} SeverityCounts */

/**
 * Everything the tree shows, fetched level by level, the levels' requests in parallel.
 * @param {User} user
 */
async function loadTree(user) {
  const cm = user.modules.includes("Condition Monitoring");
  /** @type {Site[]} */
  const sites = await get("/_config/sites/_list");
  return Promise.all(
    sites.map(async (site) => {
      /** @type {Plant[]} */
      const plants = await get("/_config/plants/_list", { site_id: site.site_id });
      return {
        ...site,
        plants: await Promise.all(
          plants.map(async (plant) => {
            /** @type {PlantFunction[]} */
            const functions = await get("/_config/functions/_list", { plant_id: plant.plant_id });
            return {
              ...plant,
              functions: await Promise.all(
                functions.map(async (fn) => {
                  /** @type {[Asset[], AssetHealth[]]} */
                  const [assets, health] = await Promise.all([
                    get("/_config/assets/_list", { function_id: fn.function_id }),
                    cm ? get("/_cm/assets/_list", { function_id: fn.function_id }).catch(() => []) : [],
                  ]);
                  const statusOf = new Map(health.map((a) => [a.asset_id, a]));
                  return { ...fn, assets: assets.map((a) => ({ ...a, health: statusOf.get(a.asset_id) })) };
                }),
              ),
            };
          }),
        ),
      };
    }),
  );
}

/**
 * The active alarms of a function by severity (shelved ones apart), from the page's alarm summary.
 * @param {import("../../lib/types.js").ActiveAlerts | undefined} summary
 * @param {string} functionId
 * @returns {{ active: SeverityCounts, shelved: number } | null}
 */
function countsOf(summary, functionId) {
  if (!summary) return null;
  const active = { high: 0, medium: 0, low: 0 };
  let shelved = 0;
  for (const a of summary.alerts) {
    if (a.function_id !== functionId) continue;
    if (a.shelved_until) shelved++;
    else active[/** @type {keyof SeverityCounts} */ (String(a.severity).toLowerCase())]++;
  }
  return { active, shelved };
}

/** @param {{ counts: { active: SeverityCounts, shelved: number } | null, functionId: string }} props */
function AlertCounts({ counts, functionId }) {
  if (!counts) return null;
  const { active, shelved } = counts;
  const total = active.high + active.medium + active.low;
  const apart = shelved > 0 ? html` <span class="muted small">${shelved} shelved</span>` : null;
  if (total === 0) return html`<span class="muted small">no active alerts</span>${apart}`;
  return html`<a class="counts" href=${`#/alerts?function_id=${encodeURIComponent(functionId)}`} aria-label=${`${total} active alerts`}>
    ${/** @type {(keyof SeverityCounts)[]} */ (["high", "medium", "low"]).filter((s) => active[s] > 0).map((s) => html`<span class="count"><${Severity} level=${s} /> ${active[s]}</span> `)}
  </a>${apart}`;
}

const VALUES_MS = 30_000;
/** The monitors' keys that are not tag names (op 72). */
const NOT_TAGS = new Set(["monitor_id", "monitor_name", "timestamp"]);
/** At most this many values beside an asset: its key values, not its whole page. */
const KEY_VALUES = 4;

/**
 * The unit of each tag of an asset's monitors (`monitor_id|tag_name`), read once a page's life
 * from the configuration (the latest values carry none).
 * @type {Map<string, Promise<Map<string, string>>>}
 */
const units = new Map();
/** @param {string} assetId */
function unitsOf(assetId) {
  let found = units.get(assetId);
  if (!found) {
    found = (async () => {
      /** @type {import("../../lib/types.js").Monitor[]} */
      const list = await get("/_config/monitors/_list", { asset_id: assetId });
      /** @type {import("../../lib/types.js").Monitor[]} */
      const details = await Promise.all(list.map((m) => get(`/_config/monitors/${encodeURIComponent(m.monitor_id)}`)));
      return new Map(details.flatMap((m) => (m.tags ?? []).map((t) => [`${m.monitor_id}|${t.tag_name}`, t.tag_unit ?? ""])));
    })().catch(() => new Map());
    units.set(assetId, found);
  }
  return found;
}

/**
 * An asset's key values beside its state: its monitors' latest values (op 72), each with its
 * unit and, past a limit, its colour and a symbol (ISA-101: the abnormal stands out, never by
 * colour alone), read every 30 s.
 * @param {{ assetId: string }} props
 */
function KeyValues({ assetId }) {
  /** @type {import("../../lib/ui.js").Data<{ latest: import("../../lib/types.js").MonitorLatest[], units: Map<string, string> }>} */
  const { data } = useData(
    async () => {
      const [latest, units] = await Promise.all([get("/_cm/monitors/_list", { asset_id: assetId }), unitsOf(assetId)]);
      return { latest, units };
    },
    [assetId],
    VALUES_MS,
  );
  const values = (data?.latest ?? [])
    .flatMap((m) => Object.entries(m).filter(([k]) => !NOT_TAGS.has(k)).map(([tag, v]) => ({ tag, unit: data?.units.get(`${m.monitor_id}|${tag}`) ?? "", v: /** @type {import("../../lib/types.js").TagValue} */ (v) })))
    .filter(({ v }) => v && v.value !== null && v.value !== undefined)
    .slice(0, KEY_VALUES);
  if (values.length === 0) return null;
  return html`<span class="key-values small">${values.map(
    ({ tag, unit, v }) => html` <span class="key-value"><span class="muted">${tag}</span> <${Status} tone=${toneOfColor(v.color)}>${num(v.value, unit, 2)}</${Status}></span>`,
  )}</span>`;
}

/** @param {import("../../lib/types.js").PageProps} props */
export function Overview({ user }) {
  if (!user.modules.includes("Configuration")) {
    return html`<${Page} title="Overview">
      <p class="muted">The tree of sites, plants and assets needs the Configuration module, which your account does not have. The views in the navigation are those of your modules.</p>
    </${Page}>`;
  }
  return html`<${Tree} user=${user} />`;
}

/** @param {{ user: User }} props */
function Tree({ user }) {
  const { data, error, loading } = useData(() => loadTree(user), [user.username], REFRESH_MS);
  const { summary } = useAlarms();
  const alarms = alarmsByAsset(summary);
  const cm = user.modules.includes("Condition Monitoring");
  const tools = html`<span class="muted small" aria-live="off">${loading ? "Refreshing…" : `Refreshed every ${REFRESH_MS / 1000} s`}</span>`;
  return html`<${Page} title="Overview" tools=${tools}>
    <${ErrorNote} error=${error} />
    ${data === undefined && !error ? html`<${Loading} what="Loading the sites" />` : null}
    ${data && data.length === 0 ? html`<p class="muted">No site yet. An administrator adds one under Settings.</p>` : null}
    ${data && data.length > 0
      ? html`<div class="tree card" role="tree" aria-label="Sites, plants, functions and assets">
          <ul>
            ${data.map(
              (site) => html`<li role="treeitem" aria-expanded="true" aria-label=${`Site ${site.site_name}`}>
                <span class="node"><span class="kind">Site</span> <strong>${site.site_name}</strong> <span class="muted small">${site.location} · ${site.timezone}</span></span>
                <ul role="group">
                  ${site.plants.map(
                    (plant) => html`<li role="treeitem" aria-expanded="true" aria-label=${`Plant ${plant.plant_name}`}>
                      <span class="node"><span class="kind">Plant</span> <strong>${plant.plant_name}</strong></span>
                      <ul role="group">
                        ${plant.functions.map(
                          (fn) => html`<li role="treeitem" aria-expanded="true" aria-label=${`Function ${fn.function_name}`}>
                            <span class="node"><span class="kind">Function</span> ${fn.function_name} <${AlertCounts} counts=${countsOf(summary, fn.function_id)} functionId=${fn.function_id} /></span>
                            <ul role="group">
                              ${fn.assets.map(
                                (a) => html`<li role="treeitem" aria-label=${`Asset ${a.asset_name}`}>
                                  <span class="node"><span class="kind">Asset</span> <a href=${href("assets", a.asset_id)}>${a.asset_name}</a>
                                  <${AssetState} health=${a.health} alarms=${alarms.get(a.asset_id)} />${cm ? html`<${KeyValues} assetId=${a.asset_id} />` : null} <span class="muted small">${a.monitor_count} monitors</span></span>
                                </li>`,
                              )}
                            </ul>
                          </li>`,
                        )}
                      </ul>
                    </li>`,
                  )}
                </ul>
              </li>`,
            )}
          </ul>
        </div>`
      : null}
  </${Page}>`;
}
