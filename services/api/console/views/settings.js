// Settings (issue 18): not drawn yet.
import { Page, html } from "../ui.js";

export default function Settings() {
  return html`<${Page} title="Settings"><p class="muted">This view is being built.</p></${Page}>`;
}
