// Assets (issue 18): not drawn yet.
import { Page, html } from "../ui.js";

export default function Assets() {
  return html`<${Page} title="Assets"><p class="muted">This view is being built.</p></${Page}>`;
}
