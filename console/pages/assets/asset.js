// @ts-check
// The asset page (`#/assets/<asset_id>`): the asset and its condition-monitoring health, the fault
// summary, its monitors' latest values against their thresholds with a last-hour trend beside each,
// the trend of any tag with zoom, and the vibration spectra (spectrum.js).
// Each section loads and refreshes its own data, so a refresh of the values redraws no chart.
import { useState } from "preact/hooks";
import { get } from "../../lib/api.js";
import { Sparkline, TrendSection, limitOf } from "./trend.js";
import { SeveritySection } from "./severity.js";
import { SpectrumSection } from "./spectrum.js";
import { AckState, AlertFlags, AlertState, alertHref, duration, listAlerts } from "../../lib/alerts.js";
import { AssetState, alarmsByAsset, useAlarms } from "../../lib/alarms.js";
import { viewSiteZone, zoneOfSite, zoneOfSiteName } from "../../lib/prefs.js";
import { ErrorNote, Loading, Page, Severity, Status, Table, html, href, monitorKind, num, time, toneOfColor, useData } from "../../lib/ui.js";

/** @typedef {import("../../lib/types.js").AssetMonitor} AssetMonitor */
/** @typedef {import("../../lib/types.js").MonitorLatest} MonitorLatest */
/** @typedef {import("../../lib/types.js").TagValue} TagValue */

const VALUES_MS = 5_000;
const HEALTH_MS = 10_000;
const SUMMARY_MS = 30_000;

/** Keys of an op 72 item that are not tag names. */
const NOT_TAGS = new Set(["monitor_id", "monitor_name", "timestamp"]);

/**
 * The asset's monitors with their tags (units, thresholds) from the configuration (ops 21, 20).
 * A user without the Configuration module reads them from the latest values (op 72): names only.
 * @param {string} assetId
 * @returns {Promise<AssetMonitor[]>}
 */
async function loadMonitors(assetId) {
  try {
    /** @type {import("../../lib/types.js").Monitor[]} */
    const list = await get("/_config/monitors/_list", { asset_id: assetId });
    /** @type {import("../../lib/types.js").Monitor[]} */
    const details = await Promise.all(list.map((m) => get(`/_config/monitors/${encodeURIComponent(m.monitor_id)}`)));
    return list.map((m, i) => ({ ...m, tags: details[i].tags ?? [], gateway: details[i].gateway, specs: details[i].specs, function_id: details[i].function_id }));
  } catch (e) {
    /** @type {MonitorLatest[]} */
    const latest = await get("/_cm/monitors/_list", { asset_id: assetId }).catch(() => {
      throw e;
    });
    return latest.map((m) => ({
      monitor_id: m.monitor_id,
      monitor_name: m.monitor_name,
      monitor_type: "",
      tags: Object.keys(m)
        .filter((k) => !NOT_TAGS.has(k))
        .map((k) => ({ tag_name: k, tag_unit: "", thresholds: {} })),
    }));
  }
}

/**
 * A value's state in words beside its colour (ISA-101: never colour alone). Past warning and past
 * caution are abnormal and coloured; above operational is still normal for the service (its asset
 * status counts it so), so it stays grey and says so in words.
 * @param {string | undefined} color
 * @param {number | null | undefined} value
 * @returns {{ tone: string, word: string }}
 */
export function valueState(color, value) {
  if (value === null || value === undefined) return { tone: "stale", word: "No data" };
  switch (color) {
    case "red":
      return { tone: toneOfColor(color), word: "Above warning" };
    case "orange":
      return { tone: toneOfColor(color), word: "Above caution" };
    case "yellow":
      return { tone: "normal", word: "Above operational" };
    case "green":
      return { tone: "normal", word: "Normal" };
    default:
      return { tone: "normal", word: "No limits set" };
  }
}

/**
 * @param {import("../../lib/types.js").Thresholds} thresholds
 * @param {string} unit
 */
function limitsText(thresholds, unit) {
  const parts = ["operational", "caution", "warning"].map((k) => [k, limitOf(thresholds, k)]).filter(([, v]) => v !== undefined);
  if (parts.length === 0) return html`<span class="muted">none</span>`;
  return html`${parts.map(([k, v], i) => html`<span class="limit"><span class="small muted">${k}</span> ${num(v, unit)}</span>${i < parts.length - 1 ? " · " : ""}`)}`;
}

/** @param {{ asset: import("../../lib/types.js").AssetDetail | undefined, cm: import("../../lib/types.js").AssetHealth | null | undefined, summary: import("../../lib/types.js").FaultSummary[] | undefined, alarms: import("../../lib/types.js").PlacedAlert[] | undefined }} props */
function AssetFacts({ asset, cm, summary, alarms }) {
  const attrs = asset?.attributes ?? {};
  const facts = [
    ["Machine type", attrs.machine_type],
    ["Running speed", attrs.rotating_speed ? `${num(attrs.rotating_speed, "rpm", 0)} (${num(attrs.rotating_speed / 60, "Hz", 2)})` : undefined],
    ["Power", attrs.kw ? num(attrs.kw, "kW") : undefined],
    ["Manufacturer", attrs.manufacturer],
    ["Model", attrs.machine_model],
    ["Serial no.", attrs.serial_no],
    ["Category", asset?.asset_category],
    ["Critical asset", asset?.is_critical],
  ].filter(([, v]) => v !== undefined && v !== null && v !== "");
  return html`<div class="asset-head">
    <section class="card" aria-labelledby="health-title">
      <h2 id="health-title">Health</h2>
      ${cm
        ? html`<p class="asset-status"><${AssetState} health=${cm} alarms=${alarms} />
            ${cm.event_id
              ? html` <span>${cm.event_label}</span> <span class="muted small">since ${time(Number(cm.event_start) * 1000)} · ${cm.event_status}${cm.event_assignee ? ` · ${cm.event_assignee}` : ""}</span>`
              : html` <span class="muted small">no open event</span>`}
          </p>
          <p>Faults: ${cm.asset_faults?.length ? html`<strong>${cm.asset_faults.join(", ")}</strong>` : html`<span class="muted">none found in the latest spectra</span>`}</p>`
        : alarms?.length
          ? html`<p class="asset-status"><${AssetState} health=${null} alarms=${alarms} /></p>`
          : html`<p class="muted">Condition monitoring not available.</p>`}
      ${facts.length
        ? html`<dl class="facts">${facts.map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}</dl>`
        : null}
    </section>
    <section class="card" aria-labelledby="summary-title">
      <h2 id="summary-title">Fault summary</h2>
      ${summary === undefined ? html`<${Loading} />` : null}
      ${summary && summary.length === 0 ? html`<p class="muted">No spectrum yet: the summary is made from each monitor's latest vibration captures.</p>` : null}
      ${(summary ?? []).map(
        (s) => html`<div class="summary">
          <h3>${s.monitor_name} <span class="muted small">${time(s.Timestamp)}</span></h3>
          <ul>${String(s.summary ?? "").split("\n").filter(Boolean).map((line) => html`<li>${line}</li>`)}</ul>
        </div>`,
      )}
    </section>
  </div>`;
}

const ALARMS_MS = 10_000;
const RECENT_DAYS = 7;

/**
 * The asset's alarms: those standing now (from the page's alarm summary, so a new one shows at
 * once; shelved ones listed apart) and those of the last RECENT_DAYS days, newest first. The
 * alert list is asked by function (the asset's, as its monitors name it: the asset fetch names
 * no ids); an asset without a monitor has no alarm.
 * @param {{ assetId: string, functionId: string | undefined }} props
 */
function AssetAlarms({ assetId, functionId }) {
  const { summary } = useAlarms();
  const recent = useData(
    () =>
      functionId
        ? listAlerts([{ function_id: functionId }], { asset_id: assetId, from: new Date(Date.now() - RECENT_DAYS * 86_400_000).toISOString() }, { limit: 50 })
        : Promise.resolve({ alerts: [], total: 0 }),
    [assetId, functionId],
    ALARMS_MS,
  );
  const standing = (summary?.alerts ?? []).filter((a) => a.asset_id === assetId);
  const active = standing.filter((a) => !a.shelved_until);
  const shelved = standing.filter((a) => a.shelved_until);
  const ids = new Set(standing.map((a) => a._id));
  const past = (recent.data?.alerts ?? []).filter((a) => !ids.has(a._id) && a.state !== "active").sort((x, y) => Date.parse(y.start_time) - Date.parse(x.start_time));
  /** @type {import("../../lib/ui.js").Column<import("../../lib/types.js").Alert>[]} */
  const columns = [
    { label: "Severity", cell: (a) => html`<${Severity} level=${String(a.severity).toLowerCase()} />` },
    { label: "Alert", cell: (a) => html`<a href=${alertHref(a._id)}>${a.trigger_name}</a> <span class="muted small">${a.monitor}</span> <${AlertFlags} alert=${a} />` },
    { label: "Started", cell: (a) => time(a.start_time, true) },
    { label: "State", cell: (a) => html`<${AlertState} alert=${a} /> <span class="muted small">${duration(a.state === "active" ? (Date.now() - Date.parse(a.start_time)) / 1000 : a.duration)}</span>` },
    { label: "Acknowledgement", cell: (a) => html`<${AckState} alert=${a} />` },
  ];
  return html`<section aria-labelledby="alarms-title" class="card asset-alarms">
    <h2 id="alarms-title">Alarms</h2>
    <${ErrorNote} error=${recent.error} />
    <${Table} caption="Active now" columns=${columns} rows=${active} empty="No active alarm." rowKey=${(/** @type {{ _id: string }} */ a) => a._id} />
    ${shelved.length > 0 ? html`<${Table} caption="Shelved (not counted as active)" columns=${columns} rows=${shelved} rowKey=${(/** @type {{ _id: string }} */ a) => a._id} />` : null}
    ${recent.data === undefined && !recent.error
      ? html`<${Loading} what="Loading the recent alarms" />`
      : html`<${Table} caption=${`Closed in the last ${RECENT_DAYS} days`} columns=${columns} rows=${past} empty=${`No alarm closed in the last ${RECENT_DAYS} days.`} rowKey=${(/** @type {{ _id: string }} */ a) => a._id} />`}
  </section>`;
}

/**
 * The latest value of every tag of every monitor, refreshed every few seconds, a trend beside each.
 * @param {{ assetId: string, monitors: AssetMonitor[], onTrend: (sel: { monitor_id: string, tag: string }) => void, selected: { monitor_id: string, tag: string } | null }} props
 */
function LatestValues({ assetId, monitors, onTrend, selected }) {
  /** @type {import("../../lib/ui.js").Data<MonitorLatest[]>} */
  const { data, error } = useData(() => get("/_cm/monitors/_list", { asset_id: assetId }), [assetId], VALUES_MS);
  const byMonitor = new Map((data ?? []).map((m) => [m.monitor_id, m]));
  return html`<div class="values">
    <${ErrorNote} error=${error} />
    <table class="grid values-table">
      <caption>Latest values, refreshed every ${VALUES_MS / 1000} s</caption>
      <thead>
        <tr>
          <th scope="col">Tag</th>
          <th scope="col" class="num">Value</th>
          <th scope="col">State</th>
          <th scope="col">Last hour</th>
          <th scope="col">Limits</th>
          <th scope="col"><span class="visually-hidden">Trend</span></th>
        </tr>
      </thead>
      ${monitors.map((/** @type {AssetMonitor} */ m) => {
        const latest = byMonitor.get(m.monitor_id);
        return html`<tbody key=${m.monitor_id}>
          <tr class="monitor-row">
            <th scope="rowgroup" colspan="6">
              ${m.monitor_name} <span class="muted small">${monitorKind(m.monitor_type)}${latest?.timestamp ? ` · updated ${time(latest.timestamp, true)}` : latest ? " · no reading yet" : ""}</span>
            </th>
          </tr>
          ${m.tags.map((t) => {
            // A tag name's key holds its TagValue (the item's other keys are not tag names).
            const v = /** @type {TagValue | undefined} */ (latest?.[t.tag_name]);
            const state = valueState(v?.color, v?.value);
            const isShown = selected?.monitor_id === m.monitor_id && selected?.tag === t.tag_name;
            return html`<tr key=${t.tag_name} class=${`tag-row tone-row-${state.tone}`} data-tag=${t.tag_name}>
              <th scope="row" class="tag-name">${t.tag_name}${t.tag_desc ? html` <span class="muted small">${t.tag_desc}</span>` : null}</th>
              <td class=${`num value tone-${state.tone}`}>${latest ? num(v?.value, t.tag_unit, 3) : "…"}</td>
              <td><${Status} tone=${state.tone}>${state.word}</${Status}></td>
              <td><${Sparkline} monitorId=${m.monitor_id} tag=${t.tag_name} unit=${t.tag_unit} thresholds=${t.thresholds} /></td>
              <td class="limits">${limitsText(t.thresholds, t.tag_unit)}</td>
              <td>
                <button type="button" class="small-button" aria-pressed=${isShown ? "true" : "false"} aria-label=${`Trend of ${t.tag_name} (${m.monitor_name})`}
                  onClick=${() => onTrend({ monitor_id: m.monitor_id, tag: t.tag_name })}>Trend</button>
              </td>
            </tr>`;
          })}
          ${m.tags.length === 0 ? html`<tr><td colspan="6" class="muted">No tags configured.</td></tr>` : null}
        </tbody>`;
      })}
    </table>
  </div>`;
}

/**
 * `#/assets/<asset_id>`: `id` is the asset's.
 * @param {import("../../lib/types.js").PageProps & { id: string }} props
 */
export function AssetPage({ user, id: assetId }) {
  const cmModule = user.modules.includes("Condition Monitoring");
  /** @type {import("../../lib/ui.js").Data<import("../../lib/types.js").AssetDetail>} */
  const asset = useData(() => get(`/_config/assets/${encodeURIComponent(assetId)}`), [assetId]);
  /** @type {import("../../lib/ui.js").Data<import("../../lib/types.js").AssetHealth | null>} */
  const cm = useData(() => (cmModule ? get(`/_cm/assets/${encodeURIComponent(assetId)}`) : Promise.resolve(null)), [assetId], HEALTH_MS);
  /** @type {import("../../lib/ui.js").Data<import("../../lib/types.js").FaultSummary[]>} */
  const summary = useData(() => (cmModule ? get("/_cm/fft/_summary", { asset_id: assetId }) : Promise.resolve([])), [assetId], SUMMARY_MS);
  const monitors = useData(() => loadMonitors(assetId), [assetId]);
  const [trend, setTrend] = useState(/** @type {{ monitor_id: string, tag: string } | null} */ (null));
  const [picked, setPicked] = useState(/** @type {{ at: number } | null} */ (null));

  const alarms = alarmsByAsset(useAlarms().summary).get(assetId);
  viewSiteZone(zoneOfSite(alarms?.[0]?.site_id) ?? zoneOfSiteName(asset.data?.site_name));
  const name = asset.data?.asset_name ?? cm.data?.asset_name;
  const place = asset.data ? `${asset.data.site_name} › ${asset.data.plant_name} › ${asset.data.function_name}` : "";
  const tools = html`<a href=${href("assets")}>All assets</a><span class="muted small">${place}</span>`;
  const mons = monitors.data ?? [];
  /** @param {{ monitor_id: string, tag: string }} sel */
  const chooseTrend = (sel) => {
    setTrend(sel);
    document.getElementById("trend-title")?.scrollIntoView({ block: "start", behavior: "smooth" });
  };
  if (!name && (asset.error || cm.error) && !asset.loading) {
    return html`<${Page} title="Asset"><${ErrorNote} error=${asset.error ?? cm.error} /><p><a href=${href("assets")}>All assets</a></p></${Page}>`;
  }
  return html`<${Page} title=${name ?? "Asset"} tools=${tools}>
    ${!name ? html`<${Loading} what="Loading the asset" />` : null}
    <${AssetFacts} asset=${asset.data} cm=${cmModule ? cm.data : null} summary=${cmModule ? summary.data : []} alarms=${alarms} />
    ${monitors.data && user.modules.includes("Alerting") ? html`<${AssetAlarms} assetId=${assetId} functionId=${monitors.data.find((m) => m.function_id)?.function_id} />` : null}
    <${ErrorNote} error=${cm.error ?? summary.error} />
    <section aria-labelledby="values-title">
      <h2 id="values-title">Monitors and latest values</h2>
      <${ErrorNote} error=${monitors.error} />
      ${monitors.data === undefined && !monitors.error ? html`<${Loading} what="Loading the monitors" />` : null}
      ${monitors.data && mons.length === 0 ? html`<p class="muted">No monitor is attached to this asset.</p>` : null}
      ${mons.length > 0 && cmModule ? html`<${LatestValues} assetId=${assetId} monitors=${mons} onTrend=${chooseTrend} selected=${trend} />` : null}
    </section>
    ${mons.length > 0 && cmModule ? html`<${SeveritySection} assetId=${assetId} monitors=${mons} />` : null}
    ${mons.length > 0 && !cmModule ? html`<p class="muted">Latest values, trends and spectra need the Condition Monitoring module.</p>` : null}
    ${mons.length > 0 && cmModule
      ? html`<section aria-labelledby="trend-title" class="card">
          <h2 id="trend-title">Trend</h2>
          <${TrendSection}
            monitors=${mons}
            selected=${trend}
            onSelect=${setTrend}
            onPick=${(/** @type {number} */ at) => setPicked({ at })}
            marker=${picked ? { at: picked.at, label: "spectrum", color: "#1a5fb4" } : null}
          />
        </section>`
      : null}
    ${mons.length > 0 && cmModule
      ? html`<section aria-labelledby="spectrum-title" class="card">
          <h2 id="spectrum-title">Spectrum</h2>
          <${SpectrumSection} monitors=${mons} picked=${picked} />
        </section>`
      : null}
  </${Page}>`;
}
