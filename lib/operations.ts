/**
 * The declaration of an HTTP operation, written once on the action that serves it (its `http`
 * field, beside `params` and the handler). Declarations travel with the service's schema in the
 * registry, so the gateway builds its routes, its 404/405 answers and /openapi.json from what
 * the running services announce: a service started alone over NATS brings its routes with it.
 *
 * Everything here is plain data (it crosses the bus as JSON): error texts are taken from the
 * owning service's `messages.ts`, with `<name>` standing for a value the message carries.
 */
import type { ModuleName } from "./access";

export type Method = "GET" | "POST" | "PUT" | "DELETE";
export type Route = `${Method} /${string}`;

/**
 * How a caller is known: HTTP Basic (or the console's session cookie), a pipeline's ingest key,
 * not at all, or `session`: the console's sign-in routes, where the cookie's session (if any) is
 * the caller and none is no error.
 */
export type AuthKind = "basic" | "ingest" | "none" | "session";

/** How a caller without the module's grant is refused (spec: Errors, common to most operations). */
export type DeniedMessage = "module-by-type" | "configuration" | "users";

export interface RouteGroup {
  /** The heading the spec groups the route under; the docs group by it too. */
  title: string;
  auth: AuthKind;
  module?: ModuleName;
  denied?: DeniedMessage;
}

const configuration = { auth: "basic", module: "Configuration", denied: "configuration" } as const;
const alerting = { auth: "basic", module: "Alerting", denied: "module-by-type" } as const;

/** The spec's route groups (Endpoints), in its order, and the ingestion API of the contract. */
export const ROUTE_GROUPS = {
  watchers: { title: "Watchers", ...alerting },
  alerts: { title: "Alerts", ...alerting },
  assets: { title: "Assets", ...configuration },
  monitors: { title: "Monitors", ...configuration },
  functions: { title: "Functions", ...configuration },
  sites: { title: "Sites", ...configuration },
  plants: { title: "Plants", ...configuration },
  users: { title: "Users", auth: "basic", module: "Configuration", denied: "users" },
  // A user manages its own API tokens whatever its modules: a token grants no more than its user has.
  tokens: { title: "Users", auth: "basic" },
  password: { title: "Password reset", auth: "none" },
  session: { title: "Console session", auth: "session" },
  // Every user type reaches the handler, which answers 403 `Unauthorized operation` to all but the admins (docs/security.md, the audit trail).
  audit: { title: "Audit trail", auth: "basic" },
  thirdparty: { title: "Third-party pipelines", ...configuration },
  edge: { title: "Edge server pipelines", ...configuration },
  pipelines: { title: "Pipelines, all kinds", ...configuration },
  sqlConnect: { title: "Pipelines, all kinds", auth: "none" },
  notebooks: { title: "Notebooks", auth: "basic", module: "Notebooks", denied: "module-by-type" },
  cm: { title: "Condition monitoring", auth: "basic", module: "Condition Monitoring", denied: "module-by-type" },
  ems: { title: "Energy metrics", auth: "basic", module: "Energy Monitoring", denied: "module-by-type" },
  utility: { title: "Utility", ...configuration },
  ingest: { title: "Ingestion (edge gateways)", auth: "ingest" },
} as const satisfies Record<string, RouteGroup>;

export type GroupName = keyof typeof ROUTE_GROUPS;

/**
 * A field's type in the docs, where the params schema does not say enough: `string`, `integer`,
 * `number`, `boolean`, `object`, `array`, `string[]`, `enum(a|b)`, or a resource `$Schema` /
 * `$Schema[]` (see the service's `openapi` setting).
 */
export type DocType = string;

export interface FieldDoc {
  description?: string;
  /** The unit of a number or of a text holding one: `epoch ms`, `s`, `Hz`, `mm/s`, `kWh`, `days`. */
  unit?: string;
  example?: unknown;
  type?: DocType;
  enum?: (string | number)[];
  /** Where the field is read from; by default path parameters from the path, the rest from the query (GET, DELETE) or the body. */
  in?: "query" | "body" | "header";
  /** Required or not, where the handler decides rather than the params schema (the spec's own messages). */
  required?: boolean;
  /** Accepted but not documented: fields a record read back may carry, never written. */
  hidden?: boolean;
  /**
   * A path parameter's name in the docs, where the route's own must differ: `PUT
   * /_config/users/:user` is documented as `{username}`, like the other routes of that path
   * (its body's `username` would be overwritten by a path parameter of that name).
   */
  name?: string;
}

/** What a success answers. */
export type Answer =
  | { text: string }
  | { schema: DocType; example?: unknown }
  | { id: true }
  | { status: string; message: string };

export interface HttpDeclaration {
  /** The operation's number in the interface specification (kept for tooling as `x-operation-number`). */
  op?: number;
  /** Every route that serves the operation: the spec's double forms and id-less forms included. */
  routes: Route[];
  group: GroupName;
  summary: string;
  description?: string;
  /** Per field: description, unit, example; its type comes from the params schema unless given. */
  fields?: Record<string, FieldDoc>;
  answer: Answer;
  /** The operation's own errors, texts from the service's messages.ts. */
  errors?: [number, string][];
  /**
   * The operation changes something, in every form, a GET one included (op 64's run, op 65's
   * schedule): a `read` token is refused and a console session needs its header, as for any
   * change. Left out: the operation changes something when any of its routes is not a GET.
   */
  changes?: boolean;
  /** An API token may not call it (it issues or revokes tokens, or changes a credential): 403 `Unauthorized operation`. */
  refusesTokens?: true;
  /** At most `limit` calls per client address within `windowS` seconds, counted across api replicas; then 429 `Too many requests`. */
  rateLimit?: { limit: number; windowS: number };
}

/** One route of one declared operation, as the gateway serves it. */
export interface Operation {
  method: Method;
  path: string;
  action: string;
  /** The params schema the action announced (fastest-validator rules, as plain data). */
  params?: Record<string, unknown>;
  http: HttpDeclaration;
  auth: AuthKind;
  module?: ModuleName;
  denied?: DeniedMessage;
  /** The operation changes something, whatever the method of this route (HttpDeclaration.changes). */
  changes: boolean;
}

/** Whether an operation changes something: as declared, else when any of its routes is not a GET. */
export const changesSomething = (http: HttpDeclaration): boolean =>
  http.changes ?? http.routes.some((route) => parseRoute(route).method !== "GET");

export function parseRoute(route: Route): { method: Method; path: string } {
  const at = route.indexOf(" ");
  return { method: route.slice(0, at) as Method, path: route.slice(at + 1) };
}

/** An action as the registry lists it: only what is plain data survives the bus. */
export interface AnnouncedAction {
  name: string;
  params?: Record<string, unknown>;
  http?: HttpDeclaration;
}

/** The routes of the announced actions. */
export function operationsOf(actions: Iterable<AnnouncedAction>): Operation[] {
  const ops: Operation[] = [];
  for (const action of actions) {
    if (!action.http) continue;
    const group: RouteGroup = ROUTE_GROUPS[action.http.group];
    for (const route of action.http.routes) {
      ops.push({
        ...parseRoute(route),
        action: action.name,
        ...(action.params ? { params: action.params } : {}),
        http: action.http,
        auth: group.auth,
        ...(group.module ? { module: group.module } : {}),
        ...(group.denied ? { denied: group.denied } : {}),
        changes: changesSomething(action.http),
      });
    }
  }
  return ops;
}

const isStatic = (path: string): boolean => !path.includes(":");

/** Static paths first, so `/_config/sites/_list` is never read as a site called `_list`. */
export function orderedOperations(ops: Operation[]): Operation[] {
  return [...ops.filter((o) => isStatic(o.path)), ...ops.filter((o) => !isStatic(o.path))];
}

function toRegExp(path: string): RegExp {
  const body = path
    .split("/")
    .map((seg) => (seg.startsWith(":") ? "[^/]+" : seg.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
    .join("/");
  return new RegExp(`^${body}/?$`);
}

/** The methods served at a URL path: static routes shadow parameterised ones, as in routing. */
export function methodsMatcher(ops: Operation[]): (urlPath: string) => Method[] {
  const matchers = ops.map((op) => ({ op, re: toRegExp(op.path), static: isStatic(op.path) }));
  return (urlPath) => {
    const hits = matchers.filter((m) => m.re.test(urlPath));
    const statics = hits.filter((m) => m.static);
    return [...new Set((statics.length ? statics : hits).map((m) => m.op.method))];
  };
}

// An action's schema may carry its HTTP declaration (moleculer's ActionSchema has no place for it).
declare module "moleculer" {
  interface ActionSchema {
    http?: HttpDeclaration;
    /**
     * An unrouted action that only reads (other services' lookups): a call lost with a dying node
     * may be sent again to another replica (lib/failfast.ts). Routed actions say it by their GET routes.
     */
    readOnly?: true;
  }
  interface ServiceSettingSchema {
    /** The resources the service's answers are made of, which declarations name as `$Name`. */
    openapi?: { schemas: Record<string, Record<string, unknown>> };
  }
}
