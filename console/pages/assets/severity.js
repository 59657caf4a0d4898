// @ts-check
// The asset page's vibration severity: each velocity tag's ISO 20816-3 zone (A-D) from its latest
// value, against the boundaries of the asset's machine group and foundation
// (`GET /_cm/assets/<asset_id>/_severity`).
import { get } from "../../lib/api.js";
import { ErrorNote, Loading, Status, html, num, time, useData } from "../../lib/ui.js";

/** @typedef {import("../../lib/types.js").AssetMonitor} AssetMonitor */
/** @typedef {import("../../lib/types.js").Severity} Severity */

const SEVERITY_MS = 10_000;

/** What a zone means (ISO 20816-3), and its tone: C and D are abnormal, said in words beside the colour. */
/** @type {Record<string, { tone: string, word: string }>} */
const ZONES = {
  A: { tone: "normal", word: "Zone A: newly commissioned" },
  B: { tone: "normal", word: "Zone B: unrestricted operation" },
  C: { tone: "warning", word: "Zone C: restricted operation" },
  D: { tone: "critical", word: "Zone D: damage may occur" },
};

const GROUPS = /** @type {Record<number, string>} */ ({ 1: "group 1 (300 kW to 50 MW)", 2: "group 2 (15 kW to 300 kW)" });

/** @param {{ assetId: string, monitors: AssetMonitor[] }} props */
export function SeveritySection({ assetId, monitors }) {
  /** @type {import("../../lib/ui.js").Data<Severity>} */
  const { data, error } = useData(() => get(`/_cm/assets/${encodeURIComponent(assetId)}/_severity`), [assetId], SEVERITY_MS);
  const names = new Map(monitors.map((m) => [m.monitor_id, m.monitor_name]));
  const b = data?.boundaries;
  return html`<section class="card" aria-labelledby="severity-title">
    <h2 id="severity-title">Vibration severity (ISO 20816-3)</h2>
    <${ErrorNote} error=${error} />
    ${!data && !error ? html`<${Loading} />` : null}
    ${data && b
      ? html`<p class="legend-note">
            ${`Machine ${GROUPS[data.machine_group] ?? data.machine_group}, ${data.foundation} foundation: zone A below ${num(b.ab, "mm/s")}, B below ${num(b.bc, "mm/s")}, C below ${num(b.cd, "mm/s")}, D from ${num(b.cd, "mm/s")} (RMS velocity, 10–1000 Hz).`}
          </p>
          ${data.tags.length === 0
            ? html`<p class="muted">No velocity tag (mm/s) on this asset's condition monitors.</p>`
            : html`<table class="grid severity">
                <caption>Zone of each velocity tag${data.zone ? `, worst ${data.zone}` : ""}</caption>
                <thead><tr><th scope="col">Monitor</th><th scope="col">Tag</th><th scope="col" class="num">Velocity</th><th scope="col">Zone</th></tr></thead>
                <tbody>
                  ${data.tags.map((t) => {
                    const zone = t.zone ? ZONES[t.zone] : null;
                    return html`<tr key=${`${t.monitor_id} ${t.tag}`}>
                      <td>${names.get(t.monitor_id) ?? t.monitor_id}</td>
                      <th scope="row">${t.tag}</th>
                      <td class="num">${t.value === null ? "—" : num(t.value, "mm/s", 2)}${t.timestamp ? html` <span class="muted small">${time(t.timestamp, true)}</span>` : null}</td>
                      <td>${zone ? html`<${Status} tone=${zone.tone}>${zone.word}</${Status}>` : html`<${Status} tone="stale">No reading</${Status}>`}</td>
                    </tr>`;
                  })}
                </tbody>
              </table>`}`
      : null}
  </section>`;
}
