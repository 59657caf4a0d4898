// Energy (issue 18): not drawn yet.
import { Page, html } from "../ui.js";

export default function Energy() {
  return html`<${Page} title="Energy"><p class="muted">This view is being built.</p></${Page}>`;
}
