// Alerts (issue 18 item 3): `#/alerts` the board, `#/alerts/kpi` the alarm system's performance,
// `#/alerts/<alert_id>` one alert (the link of the alert emails). Alert ids are UUIDs, so the
// word `kpi` cannot be one.
import AlertBoard from "./board.js";
import AlertKpi from "./kpi.js";
import AlertPage from "./alert.js";
import { html } from "../../lib/ui.js";

export default function Alerts({ user, route }) {
  const sub = route.parts[1];
  if (sub === "kpi") return html`<${AlertKpi} user=${user} route=${route} />`;
  if (sub) return html`<${AlertPage} key=${sub} id=${sub} user=${user} />`;
  return html`<${AlertBoard} user=${user} route=${route} />`;
}
