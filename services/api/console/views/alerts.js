// Alerts (issue 18): not drawn yet.
import { Page, html } from "../ui.js";

export default function Alerts() {
  return html`<${Page} title="Alerts"><p class="muted">This view is being built.</p></${Page}>`;
}
