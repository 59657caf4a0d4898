/** The gateway's catalog of routes (services/api/catalog.ts): every declared route before any service joins, and what joins later. */
import { SERVICE_SCHEMAS } from "../../../services";
import { DOMAIN_SERVICE_SCHEMAS } from "../../../services/domain-services";
import { declaredServices, RouteCatalog, type AnnouncedService } from "../../../services/api/catalog";

describe("declaredServices", () => {
  const declared = declaredServices(Object.values(DOMAIN_SERVICE_SCHEMAS));

  it("names each action as the registry does, with its params and http declaration", () => {
    const config = declared.find((s) => s.name === "config")!;
    const action = config.actions!["config.sites.list"]!;
    expect(action.name).toBe("config.sites.list");
    expect(action.http?.routes).toContain("GET /_config/sites/_list");
    expect(action.params).toBeDefined();
    expect(Object.keys(config.settings?.openapi?.schemas ?? {})).toContain("Site");
  });

  it("makes a catalog that knows every service's routes, and nothing else", () => {
    const catalog = new RouteCatalog(declared);
    expect(catalog.methodsAt("/_config/sites/_list")).toEqual(["GET"]);
    expect(catalog.methodsAt("/_ems/monitor/_all")).toEqual(["GET"]);
    expect(catalog.methodsAt("/_config/users/someone@example.com").sort()).toEqual(["DELETE", "GET", "PUT"]);
    expect(catalog.methodsAt("/_config/nothing-here")).toEqual([]);
    expect(new Set(catalog.operations().map((op) => op.action.split(".")[0]))).toEqual(
      new Set(Object.keys(DOMAIN_SERVICE_SCHEMAS).filter((name) => name !== "notifier")),
    );
  });

  it("hands moleculer-web its route on the first update, and again only when what is announced changes it", () => {
    const catalog = new RouteCatalog(declared);
    expect(catalog.update([])).toBe(true);
    expect(catalog.update(declared)).toBe(false);
    const api = declaredServices([SERVICE_SCHEMAS.api!]) as AnnouncedService[];
    expect(catalog.update(api)).toBe(true);
    expect(catalog.methodsAt("/_auth/session").sort()).toEqual(["DELETE", "GET", "POST"]);
  });
});
