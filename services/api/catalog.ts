/**
 * The gateway's routes: every operation the code base declares (each action's `http`, lib/operations.ts),
 * known from the services' schemas before their nodes join, and what the services announce in the
 * registry, local or on another node, on top (a newer replica's routes). A known route whose
 * service has no live node answers 503 `Service unavailable` (the service is away, or not up
 * yet) rather than 404 (no such thing).
 */
import type { ActionSchema, ServiceSchema } from "moleculer";
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

/**
 * The services as their schemas declare them (mixins included), in the registry's shape: what
 * the gateway knows of a service whose node has not joined yet.
 */
export function declaredServices(schemas: Iterable<Partial<ServiceSchema>>): AnnouncedService[] {
  const services: AnnouncedService[] = [];
  const collect = (schema: Partial<ServiceSchema>, into: AnnouncedService) => {
    for (const mixin of schema.mixins ?? []) collect(mixin, into);
    const resources = schema.settings?.openapi?.schemas;
    if (resources) into.settings = { openapi: { schemas: { ...into.settings?.openapi?.schemas, ...resources } } };
    for (const [key, action] of Object.entries(schema.actions ?? {})) {
      if (typeof action !== "object" || action === null) continue;
      const { name = key, params, http } = action as ActionSchema;
      const fullName = `${into.name}.${name}`;
      (into.actions ??= {})[fullName] = { name: fullName, ...(params ? { params: params as Record<string, unknown> } : {}), ...(http ? { http } : {}) };
    }
  };
  for (const schema of schemas) {
    if (!schema.name) continue;
    const service: AnnouncedService = { name: schema.name };
    collect(schema, service);
    services.push(service);
  }
  return services;
}

export class RouteCatalog {
  private readonly byRoute = new Map<string, Operation>();
  private readonly schemas = new Map<string, unknown>();
  private matcher: (urlPath: string) => Method[] = () => [];
  /** Of the routes last handed to moleculer-web: none yet, so the first update always makes the gateway's route. */
  private signature = "";

  /** `declared`: the services as the code base declares them (declaredServices), known before they join. */
  constructor(declared: AnnouncedService[] = []) {
    this.take(declared);
    this.matcher = methodsMatcher(this.operations());
  }

  private take(services: AnnouncedService[]): void {
    for (const service of services) {
      for (const [name, schema] of Object.entries(service.settings?.openapi?.schemas ?? {})) this.schemas.set(name, schema);
      for (const op of operationsOf(Object.values(service.actions ?? {}))) this.byRoute.set(`${op.method} ${op.path}`, op);
    }
  }

  /** Takes what the services announce; true when the routes changed (always, the first time). */
  update(services: AnnouncedService[]): boolean {
    this.take(services);
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
