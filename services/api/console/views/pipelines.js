// Pipelines (issue 18): not drawn yet.
import { Page, html } from "../ui.js";

export default function Pipelines() {
  return html`<${Page} title="Pipelines"><p class="muted">This view is being built.</p></${Page}>`;
}
