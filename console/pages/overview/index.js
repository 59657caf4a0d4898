// @ts-check
// Overview: the caller's sites → plants → functions → assets, with live health (the CM status of
// each asset, the active alerts of each function by severity), refreshed every 10 s without a
// reload. Only what deviates is coloured.
import { get } from "../../lib/api.js";
import { ErrorNote, Loading, Page, Severity, Status, html, href, useData } from "../../lib/ui.js";

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
  const alerting = user.modules.includes("Alerting");
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
                  /** @type {[Asset[], AssetHealth[], SeverityCounts | null]} */
                  const [assets, health, active] = await Promise.all([
                    get("/_config/assets/_list", { function_id: fn.function_id }),
                    cm ? get("/_cm/assets/_list", { function_id: fn.function_id }).catch(() => []) : [],
                    alerting ? get("/_alerting/alerts/_count", { function_id: fn.function_id, state: "active" }).catch(() => null) : null,
                  ]);
                  const statusOf = new Map(health.map((a) => [a.asset_id, a]));
                  return { ...fn, active, assets: assets.map((a) => ({ ...a, health: statusOf.get(a.asset_id) })) };
                }),
              ),
            };
          }),
        ),
      };
    }),
  );
}

/** @type {Record<string, string>} */
const TONE = { critical: "critical", warning: "warning", normal: "normal" };

/** @param {{ health: AssetHealth | undefined }} props */
function AssetHealth({ health }) {
  if (!health || !health.asset_status) return html`<${Status} tone="normal">Normal</${Status}>`;
  const tone = TONE[health.asset_status] ?? "normal";
  const word = health.asset_status[0].toUpperCase() + health.asset_status.slice(1);
  return html`<${Status} tone=${tone}>${word}</${Status}>${health.asset_faults?.length ? html` <span class="small">(${health.asset_faults.join(", ")})</span>` : null}`;
}

/** @param {{ active: SeverityCounts | null, functionId: string }} props */
function AlertCounts({ active, functionId }) {
  if (!active) return null;
  const total = active.high + active.medium + active.low;
  if (total === 0) return html`<span class="muted small">no active alerts</span>`;
  return html`<a class="counts" href=${`#/alerts?function_id=${encodeURIComponent(functionId)}`} aria-label=${`${total} active alerts`}>
    ${/** @type {(keyof SeverityCounts)[]} */ (["high", "medium", "low"]).filter((s) => active[s] > 0).map((s) => html`<span class="count"><${Severity} level=${s} /> ${active[s]}</span> `)}
  </a>`;
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
                            <span class="node"><span class="kind">Function</span> ${fn.function_name} <${AlertCounts} active=${fn.active} functionId=${fn.function_id} /></span>
                            <ul role="group">
                              ${fn.assets.map(
                                (a) => html`<li role="treeitem" aria-label=${`Asset ${a.asset_name}`}>
                                  <span class="node"><span class="kind">Asset</span> <a href=${href("assets", a.asset_id)}>${a.asset_name}</a>
                                  <${AssetHealth} health=${a.health} /> <span class="muted small">${a.monitor_count} monitors</span></span>
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
