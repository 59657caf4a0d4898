// Notebooks (issue 18): not drawn yet.
import { Page, html } from "../ui.js";

export default function Notebooks() {
  return html`<${Page} title="Notebooks"><p class="muted">This view is being built.</p></${Page}>`;
}
