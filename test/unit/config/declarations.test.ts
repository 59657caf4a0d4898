/** The config service's HTTP declarations, read from its schema without a broker. */
import type { ActionSchema } from "moleculer";
import { operationsOf, type AnnouncedAction } from "../../../lib/operations";
import ConfigService from "../../../services/config/config.service";
import { MSG } from "../../../services/config/messages";
import { CONFIG_SCHEMAS } from "../../../services/config/openapi";
import { AUDIT_SCHEMAS } from "../../../services/config/audit.actions";

const actions: AnnouncedAction[] = Object.entries(ConfigService.actions ?? {}).map(([name, a]) => {
  const action = a as ActionSchema;
  return { name: `config.${name}`, params: action.params as Record<string, unknown> | undefined, http: action.http };
});
const operations = operationsOf(actions);

describe("config's routes", () => {
  it("serves the spec's configuration operations, each route once, behind the Configuration module", () => {
    const routes = operations.map((o) => `${o.method} ${o.path} ${o.action}`);
    expect(new Set(routes).size).toBe(routes.length);
    expect(routes.sort()).toEqual(
      [
        "POST /_config/assets config.assets.create",
        "DELETE /_config/assets/:asset_id config.assets.remove",
        "PUT /_config/assets/:asset_id config.assets.update",
        "GET /_config/assets/:asset_id config.assets.get",
        "GET /_config/assets/_list config.assets.list",
        "GET /_config/assets/_count config.assets.count",
        "POST /_config/monitors config.monitors.create",
        "DELETE /_config/monitors/:monitor_id config.monitors.remove",
        "PUT /_config/monitors/:monitor_id config.monitors.update",
        "GET /_config/monitors/:monitor_id config.monitors.get",
        "GET /_config/monitors/_list config.monitors.list",
        "GET /_config/monitors/_count config.monitors.count",
        "POST /_config/functions config.functions.create",
        "DELETE /_config/functions/:function_id config.functions.remove",
        "PUT /_config/functions/:function_id config.functions.update",
        "GET /_config/functions/:function_id config.functions.get",
        "GET /_config/functions/_list config.functions.list",
        "POST /_config/sites config.sites.create",
        "DELETE /_config/sites/:site_id config.sites.remove",
        "PUT /_config/sites/:site_id config.sites.update",
        "GET /_config/sites/:site_id config.sites.get",
        "GET /_config/sites/_list config.sites.list",
        "POST /_config/plants config.plants.create",
        "DELETE /_config/plants/:plant_id config.plants.remove",
        "PUT /_config/plants/:plant_id config.plants.update",
        "GET /_config/plants/:plant_id config.plants.get",
        "GET /_config/plants/_list config.plants.list",
        "GET /_config/server-time config.serverTime",
        // The audit trail (docs/security.md): its own group, every user type reaches the handler's 403.
        "GET /_config/audit config.audit.list",
        "GET /_config/audit/_verify config.audit.verify",
      ].sort(),
    );
    const spec = operations.filter((o) => o.http.op !== undefined);
    for (const o of spec) expect(o).toMatchObject({ auth: "basic", module: "Configuration", denied: "configuration" });
    expect(spec.map((o) => o.http.op).sort((a, b) => a! - b!)).toEqual([...Array.from({ length: 27 }, (_, i) => i + 11), 78]);
  });

  it("keeps the internal actions off HTTP", () => {
    const internal = actions.filter((a) => a.name.endsWith(".resolve"));
    expect(internal).toHaveLength(5);
    for (const a of internal) expect(a.http).toBeUndefined();
  });
});

describe("config's docs", () => {
  const texts = new Set<string>(
    Object.values(MSG).map((m) => (typeof m === "function" ? (m as (v: string) => string)("<value>") : m)),
  );
  const pattern = (t: string) => t.replace(/<[a-z_]+>/g, "<value>");

  it("takes every error text from messages.ts", () => {
    for (const o of operations) {
      for (const [status, text] of o.http.errors ?? []) {
        expect(status >= 400 && status <= 599).toBe(true);
        expect(texts.has(pattern(text)) ? text : `${o.action}: ${text}`).toBe(text);
      }
    }
  });

  it("documents every field and names only the resources it announces", () => {
    const names = new Set([...Object.keys(CONFIG_SCHEMAS), ...Object.keys(AUDIT_SCHEMAS)]);
    const refsOf = (value: unknown): string[] =>
      JSON.stringify(value).match(/#\/components\/schemas\/\w+|"\$[A-Z]\w*(\[\])?"/g)?.map((r) => r.replace(/.*\/|["$[\]]/g, "")) ?? [];
    for (const name of [...refsOf(CONFIG_SCHEMAS), ...operations.flatMap((o) => refsOf([o.http.answer, o.http.fields]))]) {
      expect(names.has(name) || ["Created", "Error"].includes(name) ? name : `unknown schema ${name}`).toBe(name);
    }
    for (const o of operations) {
      const params = Object.keys(o.params ?? {}).filter((n) => !n.startsWith("$$"));
      for (const field of params) {
        const doc = o.http.fields?.[field];
        expect(doc?.description || doc?.hidden ? field : `${o.action}: ${field} undocumented`).toBe(field);
      }
    }
  });

  it("never names an operation by its number in text a user reads", () => {
    const prose = JSON.stringify([operations.map((o) => [o.http.summary, o.http.description, o.http.fields]), CONFIG_SCHEMAS]);
    expect(prose).not.toMatch(/\bops? ?\d+/i);
  });
});
