/**
 * The OpenAPI 3.1 document of the gateway, made from what the services announce: each action's
 * `http` declaration (route, group, summary, field docs, answer, errors from its messages.ts),
 * its params schema (the fields' types) and each service's resource schemas. Served at
 * /openapi.json with the documentation page at /docs, both without authentication.
 */
import { createHash } from "node:crypto";
import type { ServerResponse } from "node:http";
import { arr, int, obj, ref, str, type JsonSchema } from "../../lib/openapi-schema";
import { ROUTE_GROUPS, type Answer, type DocType, type FieldDoc, type Operation } from "../../lib/operations";
import { THROTTLED_MESSAGE } from "../../lib/throttle";
import type { RouteCatalog } from "./catalog";
import { DOCS_PAGE } from "./docs.page";
import { SESSION_COOKIE } from "./sessions";

/** The gateway's own schemas: the envelope and the answer of a create. */
const GATEWAY_SCHEMAS: Record<string, JsonSchema> = {
  Error: obj({ error: obj({ status: int, message: str, field: { type: "string", description: "the input the error is about, when it is about one" } }, ["status", "message"]) }, ["error"]),
  Created: obj({ id: { type: "string", format: "uuid" } }, ["id"]),
};

/** A `DocType` (`integer`, `enum(a|b)`, `$Site[]` …) as a JSON Schema. */
export function docTypeSchema(type: DocType | undefined): JsonSchema {
  if (!type || type === "string") return { ...str };
  if (type.startsWith("$")) return type.endsWith("[]") ? arr(ref(type.slice(1, -2))) : ref(type.slice(1));
  const enumMatch = /^enum\((.*)\)$/.exec(type);
  if (enumMatch) {
    const values = enumMatch[1]!.split("|");
    return values.every((v) => /^\d+$/.test(v)) ? { type: "integer", enum: values.map(Number) } : { type: "string", enum: values };
  }
  if (type.endsWith("[]")) return arr(docTypeSchema(type.slice(0, -2)));
  return { type };
}

type Rule = Record<string, unknown>;

/** fastest-validator's shorthand (`"string|optional"`) as a rule object. */
function ruleOf(rule: unknown): Rule {
  if (typeof rule === "string") {
    const [type, ...flags] = rule.split("|");
    return { type, ...Object.fromEntries(flags.map((f) => [f.split(":")[0], f.includes(":") ? f.split(":")[1] : true])) };
  }
  if (Array.isArray(rule)) return { type: "multi", rules: rule };
  return rule && typeof rule === "object" ? (rule as Rule) : {};
}

/** A params rule as a JSON Schema: type, enum, bounds, items and properties; null too where the rule is `nullable`. */
export function ruleSchema(input: unknown): JsonSchema {
  const rule = ruleOf(input);
  const schema = typeSchema(rule);
  return rule.nullable === true && typeof schema.type === "string" ? { ...schema, type: [schema.type, "null"] } : schema;
}

function typeSchema(rule: Rule): JsonSchema {
  const bounds = (min: string, max: string): JsonSchema => ({
    ...(typeof rule.min === "number" ? { [min]: rule.min } : {}),
    ...(typeof rule.max === "number" ? { [max]: rule.max } : {}),
  });
  switch (rule.type) {
    case "string":
      return { type: "string", ...(Array.isArray(rule.enum) ? { enum: rule.enum } : {}), ...bounds("minLength", "maxLength") };
    case "uuid":
      return { type: "string", format: "uuid" };
    case "number":
      return { type: rule.integer ? "integer" : "number", ...(Array.isArray(rule.enum) ? { enum: rule.enum } : {}), ...bounds("minimum", "maximum") };
    case "boolean":
      return { type: "boolean" };
    case "enum":
      return { enum: rule.values };
    case "equal":
      return { const: rule.value };
    case "array":
      return { type: "array", ...(rule.items ? { items: ruleSchema(rule.items) } : {}), ...bounds("minItems", "maxItems") };
    case "object":
      return objectSchema(rule.props as Record<string, unknown> | undefined);
    case "multi":
      return { oneOf: (rule.rules as unknown[]).map(ruleSchema) };
    default:
      return {};
  }
}

const isOptional = (rule: unknown): boolean => {
  const r = ruleOf(rule);
  return r.optional === true || r.default !== undefined;
};

function objectSchema(props: Record<string, unknown> | undefined): JsonSchema {
  if (!props) return { type: "object" };
  const fields = Object.entries(props).filter(([name]) => !name.startsWith("$$"));
  const required = fields.filter(([, rule]) => !isOptional(rule)).map(([name]) => name);
  return obj(Object.fromEntries(fields.map(([name, rule]) => [name, ruleSchema(rule)])), required);
}

interface Field {
  name: string;
  in: "path" | "query" | "body" | "header";
  required: boolean;
  schema: JsonSchema;
}

const pathParamsOf = (path: string): string[] => [...path.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1]!);

/** Every field of an operation: its params (types from the schema, docs from the declaration), in path, query or body. */
export function fieldsOf(op: Operation): Field[] {
  const docs = op.http.fields ?? {};
  const inPath = pathParamsOf(op.path);
  // The id-less form of a route (`GET /_ems/monitor`, for the spec's own message) takes no id elsewhere.
  const inAnyPath = new Set(op.http.routes.flatMap((r) => pathParamsOf(r)));
  const bodyRoute = op.method === "POST" || op.method === "PUT";
  const rules = Object.entries(op.params ?? {}).filter(([name]) => !name.startsWith("$$"));
  const names = [...new Set([...rules.map(([n]) => n), ...Object.keys(docs)])];
  const fields: Field[] = inPath.map((name) => ({ name: docs[name]?.name ?? name, in: "path", required: true, schema: withDoc({ ...str }, docs[name]) }));
  for (const name of names) {
    const doc: FieldDoc | undefined = docs[name];
    if (inAnyPath.has(name) || doc?.hidden) continue;
    const rule = rules.find(([n]) => n === name)?.[1];
    const schema = withDoc(doc?.type ? docTypeSchema(doc.type) : rule === undefined ? { ...str } : ruleSchema(rule), doc);
    const where = doc?.in ?? (bodyRoute ? "body" : "query");
    fields.push({ name, in: where, required: doc?.required ?? (rule !== undefined && !isOptional(rule)), schema });
  }
  return fields;
}

function withDoc(schema: JsonSchema, doc: FieldDoc | undefined): JsonSchema {
  if (!doc) return schema;
  return {
    ...schema,
    ...(doc.description ? { description: doc.description } : {}),
    ...(doc.unit ? { "x-unit": doc.unit } : {}),
    ...(doc.enum ? { enum: doc.enum } : {}),
    ...(doc.example !== undefined ? { examples: [doc.example] } : {}),
  };
}

function answerSchema(answer: Answer): { schema: JsonSchema; example?: unknown } {
  if ("text" in answer) return { schema: { ...str }, example: answer.text };
  if ("id" in answer) return { schema: ref("Created"), example: { id: "3f1c2a9e-8a61-4a4e-9d0b-2b7f6c1d5e42" } };
  if ("status" in answer) return { schema: obj({ status: str, message: str }), example: { status: answer.status, message: answer.message } };
  return { schema: docTypeSchema(answer.schema), ...(answer.example !== undefined ? { example: answer.example } : {}) };
}

const DENIED: Record<string, string> = {
  configuration: "You do not have access to this module",
  users: "Unauthorized access",
  "module-by-type": "Unauthorized access to module by <user_type>",
};

/** Every error an operation answers: its own (the spec's table) and the gateway's common ones. */
export function errorsOf(op: Operation, fields: Field[] = fieldsOf(op)): [number, string][] {
  const errors: [number, string][] = [];
  if (op.auth === "basic") errors.push([401, "Invalid credentials"]);
  if (op.auth === "basic" && op.denied) errors.push([401, DENIED[op.denied]!]);
  // A `read` API token's change.
  if (op.auth === "basic" && op.method !== "GET") errors.push([403, "Unauthorized operation"]);
  if (op.auth === "ingest") errors.push([401, "Invalid ingest key"]);
  // Failed sign-ins are throttled (lib/throttle.ts), whatever the route.
  if (op.auth === "basic") errors.push([429, THROTTLED_MESSAGE]);
  if (fields.some((f) => f.in === "body")) errors.push([400, "Invalid content type"], [400, "Invalid request body"]);
  if (fields.some((f) => f.required)) errors.push([400, "Insufficient inputs"]);
  for (const e of op.http.errors ?? []) if (!errors.some(([s, m]) => s === e[0] && m === e[1])) errors.push(e);
  errors.push([503, "Service unavailable"], [504, "Service timed out"]);
  return errors;
}

export const openApiPath = (path: string): string => path.replace(/:([A-Za-z_]+)/g, "{$1}");

/** The route's path as documented: its parameters under their documented names (FieldDoc.name). */
const documentedPath = (op: Operation): string => openApiPath(op.path.replace(/:([A-Za-z_]+)/g, (_, name: string) => `:${op.http.fields?.[name]?.name ?? name}`));

/** An example request body from the fields' examples. */
function bodyExample(fields: Field[]): Record<string, unknown> | undefined {
  const withExample = fields.filter((f) => Array.isArray(f.schema.examples));
  if (!withExample.length) return undefined;
  return Object.fromEntries(withExample.map((f) => [f.name, (f.schema.examples as unknown[])[0]]));
}

function operationObject(op: Operation, all: Operation[]): JsonSchema {
  const fields = fieldsOf(op);
  const parameters = fields.filter((f) => f.in !== "body").map((f) => ({ name: f.name, in: f.in, required: f.required, schema: f.schema }));
  const body = fields.filter((f) => f.in === "body");
  const answer = answerSchema(op.http.answer);
  const responses: Record<string, JsonSchema> = {
    "200": { description: "Success", content: { "application/json": { schema: answer.schema, ...(answer.example !== undefined ? { example: answer.example } : {}) } } },
  };
  const byStatus = new Map<number, string[]>();
  for (const [status, message] of errorsOf(op, fields)) byStatus.set(status, [...(byStatus.get(status) ?? []), message]);
  for (const [status, messages] of byStatus) {
    const examples = Object.fromEntries(messages.map((message, i) => [`e${i + 1}`, { summary: message, value: { error: { status, message } } }]));
    if (status === 200) {
      // The one envelope on a 200 the spec names (notebook delete that deletes nothing).
      const ok = responses["200"] as { description: string; content: Record<string, { schema: JsonSchema }> };
      ok.description = `Success, or the envelope: ${messages.join(" | ")}`;
      ok.content["application/json"]!.schema = { oneOf: [answer.schema, ref("Error")] };
    } else responses[String(status)] = { description: messages.join(" | "), content: { "application/json": { schema: ref("Error"), examples } } };
  }
  const sameAction = all.filter((o) => o.action === op.action);
  const others = sameAction.filter((o) => o !== op);
  const example = bodyExample(body);
  return {
    operationId: others.length ? `${op.action}#${sameAction.indexOf(op) + 1}` : op.action,
    summary: op.http.summary,
    description: [
      op.http.description ?? "",
      op.module ? `Needs the ${op.module} module.` : "",
      op.auth === "none" ? "Called without an Authorization header." : "",
      op.auth === "ingest" ? "Authorized by the pipeline's ingest key." : "",
      others.length ? `Also served at ${others.map((o) => `${o.method} ${o.path}`).join(", ")}.` : "",
    ]
      .filter(Boolean)
      .join(" "),
    tags: [ROUTE_GROUPS[op.http.group].title],
    ...(op.http.op ? { "x-operation-number": op.http.op } : {}),
    "x-action": op.action,
    security: securityOf(op),
    ...(parameters.length ? { parameters } : {}),
    ...(body.length
      ? {
          requestBody: {
            required: body.some((f) => f.required),
            content: {
              "application/json": {
                schema: obj(Object.fromEntries(body.map((f) => [f.name, f.schema])), body.filter((f) => f.required).map((f) => f.name)),
                ...(example ? { example } : {}),
              },
            },
          },
        }
      : {}),
    responses,
  };
}

/** Who may call: Basic, a token or the console's cookie on the API's routes; the cookie alone on the session's. */
function securityOf(op: Operation): JsonSchema[] {
  switch (op.auth) {
    case "basic":
      return [{ basicAuth: [] }, { apiToken: [] }, { sessionCookie: [] }];
    case "ingest":
      return [{ ingestKey: [] }];
    case "session":
      return [{ sessionCookie: [] }];
    default:
      return [];
  }
}

export function buildOpenApi(catalog: RouteCatalog): JsonSchema {
  const operations = catalog.operations();
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const op of operations) {
    const p = documentedPath(op);
    paths[p] ??= {};
    paths[p]![op.method.toLowerCase()] = operationObject(op, operations);
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Industrial Monitoring Service",
      version: "0.1.0",
      description:
        "Configuration, ingestion, alerting, notifications, notebooks, condition monitoring and energy metrics. " +
        "Errors are `{error: {status, message}}` with the HTTP status equal to `error.status`; an error about one input names it in `field`. " +
        "Lists accept `limit` (1..1000) and `offset` and return the total in `X-Total-Count`. A trailing slash is optional on every path.",
    },
    servers: [{ url: "/" }],
    tags: [...new Set(Object.values(ROUTE_GROUPS).map((g) => g.title))].map((name) => ({ name })),
    components: {
      securitySchemes: {
        basicAuth: { type: "http", scheme: "basic", description: "base64 of username:password" },
        apiToken: {
          type: "http",
          scheme: "bearer",
          description: "an API token (POST /_config/users/{username}/tokens), acting as its user; a read token may only make GET requests",
        },
        ingestKey: { type: "http", scheme: "bearer", description: "the pipeline's ingest key, shown once when the pipeline is created" },
        sessionCookie: {
          type: "apiKey",
          in: "cookie",
          name: SESSION_COOKIE,
          description: "the console's session (POST /_auth/session); a request other than GET or HEAD made with it needs the header X-Requested-With: ims-console",
        },
      },
      schemas: { ...GATEWAY_SCHEMAS, ...catalog.componentSchemas() },
    },
    paths,
  };
}

/** The documents the gateway serves itself, without authentication; they are not operations (`/` is the console, console.ts). */
export const DOCUMENT_PATHS = ["/openapi.json", "/docs", "/"] as const;

const hashOf = (text: string): string => `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`;

/**
 * A strict Content-Security-Policy for one of the gateway's pages: nothing but this origin, and
 * of inline code only the page's own `<script>` and `<style>` blocks, by their hashes (no
 * 'unsafe-inline': an injected script or style would not run). No frames, no plugins, no `<base>`.
 */
export function pagePolicy(html: string): string {
  const blocks = (tag: string) => [...html.matchAll(new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, "g"))].map((m) => hashOf(m[1]!));
  const scripts = blocks("script");
  const styles = blocks("style");
  return [
    "default-src 'none'",
    `script-src ${scripts.length ? scripts.join(" ") : "'none'"}`,
    `style-src ${styles.length ? styles.join(" ") : "'none'"}`,
    "connect-src 'self'",
    "img-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}

const PAGES: Record<string, { html: string; policy: string }> = {
  "/docs": { html: DOCS_PAGE, policy: pagePolicy(DOCS_PAGE) },
};

/** Answers /openapi.json and /docs; false for any other path. `document` makes the JSON text when asked. */
export function serveDocument(urlPath: string, res: ServerResponse, document: () => string): boolean {
  const path = urlPath.length > 1 ? urlPath.replace(/\/$/, "") : urlPath;
  if (path === "/openapi.json") {
    const text = document();
    res.writeHead(200, { "Content-Type": "application/json; charset=utf-8", "Content-Length": Buffer.byteLength(text) });
    res.end(text);
    return true;
  }
  const page = PAGES[path];
  if (page === undefined) return false;
  res.writeHead(200, {
    "Content-Type": "text/html; charset=utf-8",
    "Content-Security-Policy": page.policy,
    "Content-Length": Buffer.byteLength(page.html),
  });
  res.end(page.html);
  return true;
}
