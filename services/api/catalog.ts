/**
 * The gateway's routes, as the services announce them: every action with an `http` declaration
 * (lib/operations.ts) in the registry, local or on another node. A route once announced stays
 * known after its service goes, so that its callers read 503 `Service unavailable` (the service
 * is away) rather than 404 (no such thing).
 */
import {
  methodsMatcher,
  operationsOf,
  orderedOperations,
  type AnnouncedAction,
  type HttpDeclaration,
  type Method,
  type Operation,
} from "../../lib/operations";

/** What the gateway reads from the alias a request matched (authenticate, authorize). */
export type GatewayAlias = Pick<Operation, "action" | "auth" | "module" | "denied" | "changes"> & Pick<HttpDeclaration, "refusesTokens" | "rateLimit">;

/** A service as `registry.getServiceList({ withActions: true })` lists it. */
export interface AnnouncedService {
  name: string;
  settings?: { openapi?: { schemas?: Record<string, unknown> } } & Record<string, unknown>;
  actions?: Record<string, AnnouncedAction>;
}

export class RouteCatalog {
  private readonly byRoute = new Map<string, Operation>();
  private readonly schemas = new Map<string, unknown>();
  private matcher: (urlPath: string) => Method[] = () => [];
  private signature = "";

  /** Takes what the services announce; true when the routes changed. */
  update(services: AnnouncedService[]): boolean {
    for (const service of services) {
      for (const [name, schema] of Object.entries(service.settings?.openapi?.schemas ?? {})) this.schemas.set(name, schema);
      for (const op of operationsOf(Object.values(service.actions ?? {}))) this.byRoute.set(`${op.method} ${op.path}`, op);
    }
    const signature = [...this.byRoute.entries()].map(([route, op]) => `${route}=${op.action}`).sort().join("\n");
    if (signature === this.signature) return false;
    this.signature = signature;
    this.matcher = methodsMatcher(this.operations());
    return true;
  }

  /** Static paths before parameterised ones. */
  operations(): Operation[] {
    return orderedOperations([...this.byRoute.values()]);
  }

  /** The resource schemas the services announce (their `openapi.schemas` setting), by name. */
  componentSchemas(): Record<string, unknown> {
    return Object.fromEntries([...this.schemas.entries()].sort(([a], [b]) => a.localeCompare(b)));
  }

  methodsAt(urlPath: string): Method[] {
    return this.matcher(urlPath);
  }

  /** moleculer-web's aliases: what authenticate and authorize read from the matched alias. */
  aliases(): Record<string, GatewayAlias> {
    return Object.fromEntries(
      this.operations().map((op) => [
        `${op.method} ${op.path}`,
        {
          action: op.action,
          auth: op.auth,
          module: op.module,
          denied: op.denied,
          changes: op.changes,
          refusesTokens: op.http.refusesTokens,
          rateLimit: op.http.rateLimit,
        },
      ]),
    );
  }
}
