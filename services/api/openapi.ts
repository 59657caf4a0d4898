/**
 * The OpenAPI 3.1 document of the gateway, made from the route table (routes.ts: every path,
 * method, authentication and module) and the spec's per-operation texts (openapi.operations.ts),
 * served at /openapi.json with a documentation page at /docs, both without authentication.
 */
import type { ServerResponse } from "node:http";
import { OPERATION_DOCS, type Answer, type OperationDoc } from "./openapi.operations";
import { DOCS_PAGE } from "./docs.page";
import { OPERATIONS, type Operation } from "./routes";

type Schema = Record<string, unknown>;

const str = { type: "string" };
const int = { type: "integer" };
const num = { type: "number" };
const bool = { type: "boolean" };
const obj = (properties: Record<string, Schema>, required: string[] = []): Schema => ({
  type: "object",
  properties,
  ...(required.length ? { required } : {}),
});
const arr = (items: Schema): Schema => ({ type: "array", items });
const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const strings = (...names: string[]) => Object.fromEntries(names.map((n) => [n, str]));

/** The resources of the spec (Resources and their fields), as response schemas. */
export const SCHEMAS: Record<string, Schema> = {
  Error: obj({ error: obj({ status: int, message: str }, ["status", "message"]) }, ["error"]),
  Created: obj({ id: str }, ["id"]),
  PipelineCreated: obj({ id: str, ingest_key: { type: "string", description: "secret, shown once" } }, ["id", "ingest_key"]),
  Firmware: obj({ current_version: str, previous_version: str, latest_version: str }),
  Site: obj({
    ...strings("site_id", "site_name", "location", "latitude", "longitude", "timezone"),
    retention_period: { type: "integer", description: "days" },
    edge_firmware: ref("Firmware"),
  }),
  Plant: obj(strings("plant_id", "plant_name", "site_id", "site_name")),
  PlantListItem: obj({ ...strings("plant_id", "plant_name", "site_id", "site_name"), function_count: int, pipeline_count: int }),
  Function: obj(strings("function_id", "function_name", "plant_name", "site_name")),
  FunctionListItem: obj({ ...strings("function_id", "function_name", "plant_name", "site_name"), monitor_count: int }),
  AssetAttributes: obj({
    ...strings("machine_type", "manufacturer", "machine_model", "serial_no", "phases"),
    rotating_speed: { type: "number", description: "RPM" },
    kw: num,
    frequency: num,
    volts: num,
    amp: num,
  }),
  Asset: obj({
    ...strings("asset_id", "asset_name", "function_name", "plant_name", "site_name", "asset_category"),
    is_critical: { type: "string", enum: ["Yes", "No"] },
    attributes: ref("AssetAttributes"),
  }),
  AssetListItem: obj({
    ...strings("asset_id", "asset_name", "asset_category", "function_name", "plant_name", "site_name"),
    is_critical: { type: "string", enum: ["Yes", "No"] },
    monitor_count: int,
  }),
  MonitorTag: obj({
    ...strings("tag_id", "tag_name", "tag_desc", "tag_unit"),
    thresholds: obj(strings("caution", "operational", "warning")),
  }),
  Monitor: obj({
    ...strings("monitor_id", "monitor_name", "monitor_type", "function_id"),
    created_at: { type: ["integer", "null"] },
    gateway: obj({ ...strings("pipeline_id", "data_source", "data_source_subtype"), slave_id: int }),
    tags: arr(ref("MonitorTag")),
    specs: obj({ speed_type: str }),
    attributes: { type: "object" },
  }),
  MonitorListItem: obj({ ...strings("monitor_id", "monitor_name", "monitor_type"), created_at: { type: ["integer", "null"] }, device_registered: bool }),
  PipelineAction: obj({ ...strings("action_id", "action", "status"), issued_at: int, completed_at: { type: ["integer", "null"] } }),
  Pipeline: obj({
    ...strings("pipeline_id", "pipeline_name", "function_id", "plant_id", "site_id", "data_type", "data_source", "data_source_subtype", "status", "data_directory"),
    created_at: int,
    total_event_count: int,
    firmware_update: int,
    settings: { type: "object" },
    tags: arr({ type: "object" }),
  }),
  PipelineListItem: obj({
    ...strings("pipeline_id", "pipeline_name", "data_type", "data_source", "data_source_subtype", "status", "plant_name", "function_name"),
    created_at: int,
    gateway_firmware: ref("Firmware"),
    total_events: int,
    latest_event: arr({}),
    heart_beats: obj({ log_parser: { type: ["integer", "null"] }, producer: { type: ["integer", "null"] }, gateway: { type: ["integer", "null"] }, stasher: { type: ["integer", "null"] } }),
    last_actions: arr(ref("PipelineAction")),
    expired_license_caution: bool,
  }),
  Condition: obj(strings("comparison", "monitor_id", "tag_id", "threshold"), ["comparison", "monitor_id", "tag_id", "threshold"]),
  NotifyTo: obj({ email: bool, sms: bool, whatsapp: bool, users: arr(str) }, ["email", "sms", "whatsapp", "users"]),
  Trigger: obj(
    {
      ...strings("id", "name"),
      minimum_duration: { type: "string", examples: ["0s", "2s", "5m"] },
      condition: arr(ref("Condition")),
      notifyTo: ref("NotifyTo"),
      severity: { type: "integer", description: "1 High, 2 Medium, 3 and above Low" },
      trigger_relation: { type: "string", enum: ["AND", "OR"] },
    },
    ["id", "name", "minimum_duration", "notifyTo", "severity", "trigger_relation"],
  ),
  Watcher: obj({
    ...strings("watcher_id", "watcher_name", "function_id", "plant_id", "site_id", "gateway_id", "gateway_name"),
    is_enabled: { type: "integer", enum: [0, 1] },
    is_hidden: { type: "integer", enum: [0, 1] },
    created_at_time: int,
    last_update_time: int,
    latest_alert_date: int,
    total_alerts: int,
    triggers: arr(ref("Trigger")),
  }),
  Alert: obj({
    ...strings("_id", "asset", "monitor", "monitor_id", "note", "severity", "state", "trigger_id", "trigger_name", "type_of_data", "watcher_id", "watcher_name"),
    duration: { type: "integer", description: "seconds" },
    start_time: { type: "string", format: "date-time" },
    end_time: { type: ["string", "null"], format: "date-time" },
    tag: { type: "object", additionalProperties: str },
  }),
  AlertCount: obj({ high: int, medium: int, low: int }),
  AlertTrend: obj(Object.fromEntries(["high", "medium", "low"].map((k) => [k, arr(obj({ time: int, total: int }))]))),
  User: obj({
    ...strings("username", "mobile_number", "country_code", "user_type", "site_id", "plant_id", "site_name", "created_at", "last_login_time"),
    plant_name: { type: ["string", "null"] },
    permissions: {},
    modules: arr(str),
  }),
  UserFetch: obj({
    hash: str,
    reserved: bool,
    hidden: bool,
    backend_roles: arr(str),
    attributes: { type: "object" },
    platform_security_roles: arr(str),
    static: bool,
  }),
  Notebook: obj({
    ...strings("notebook_id", "notebook_name", "status", "created_by", "updated_by"),
    created_at: int,
    updated_at: int,
    last_run: { type: ["string", "null"] },
    no_of_runs: int,
    schedule: obj({ period: { type: ["string", "null"] }, until: { type: ["string", "null"] }, time: { type: ["string", "null"] } }),
    attributes: obj({ path: str }),
  }),
  NotebookCreated: obj(strings("username", "notebook_name", "path")),
  NotebookCount: obj({ "Total Notebooks": int, "Not Scheduled": int, Scheduled: int }),
  FftPeak: obj({ freq: num, tag_value: num, fundamental_freq: num }),
  SpectrumPoint: obj({ freq: num, tag_value: num, peak: bool }),
  CmAsset: obj({
    ...strings("asset_id", "asset_name", "asset_status", "event_assignee", "event_id", "event_status", "event_label"),
    asset_faults: arr(str),
    event_start: { type: ["integer", "string"], description: "epoch seconds; empty string without an event" },
    event_severity: { type: ["integer", "string"] },
  }),
  EnergyMetrics: obj({
    ...strings("monitor_id", "monitor_name", "function_id", "function_name", "plant_id", "plant_name", "site_id", "site_name"),
    ...strings("energy_unit", "current_unit", "power_unit", "voltage_unit"),
    total_consumption: num,
    percent_of_total: num,
    total_energy: num,
    Voltage: num,
    Current: num,
    Power: num,
  }),
  EnergyTrendPoint: obj({ Date: str, Energy: num, unit: str }),
  Reading: obj({ ...strings("monitor_id", "tag_id"), ts: int, value: num }, ["monitor_id", "tag_id", "ts", "value"]),
  IngestAnswer: obj({ accepted: int, rejected: arr(obj({ index: int, reason: str })) }),
};

/** `name?:type` of openapi.operations.ts as a JSON Schema. */
function fieldSchema(type: string | undefined): Schema {
  if (!type || type === "string") return { ...str };
  if (type.startsWith("$")) return type.endsWith("[]") ? arr(ref(type.slice(1, -2))) : ref(type.slice(1));
  const enumMatch = /^enum\((.*)\)$/.exec(type);
  if (enumMatch) {
    const values = enumMatch[1]!.split("|");
    return values.every((v) => /^\d+$/.test(v)) ? { type: "integer", enum: values.map(Number) } : { type: "string", enum: values };
  }
  if (type.endsWith("[]")) return arr(fieldSchema(type.slice(0, -2)));
  return { type };
}

function parseField(field: string): { name: string; required: boolean; schema: Schema } {
  const [head, type] = field.split(":") as [string, string | undefined];
  const required = !head.endsWith("?");
  return { name: required ? head : head.slice(0, -1), required, schema: fieldSchema(type) };
}

function answerSchema(answer: Answer): { schema: Schema; example?: unknown } {
  if ("text" in answer) return { schema: { ...str }, example: answer.text };
  if ("id" in answer) return { schema: ref("Created"), example: { id: "3f1c2a9e-8a61-4a4e-9d0b-2b7f6c1d5e42" } };
  if ("status" in answer) return { schema: obj({ status: str, message: str }), example: { status: answer.status, message: answer.message } };
  return { schema: fieldSchema(answer.schema === "object[]" ? "object[]" : answer.schema), ...(answer.example !== undefined ? { example: answer.example } : {}) };
}

const DENIED: Record<string, string> = {
  configuration: "You do not have access to this module",
  users: "Unauthorized access",
  "module-by-type": "Unauthorized access to module by <user_type>",
};

/** Every error an operation answers: its own (the spec's table) and the gateway's common ones. */
export function errorsOf(op: Operation, doc: OperationDoc): [number, string][] {
  const errors: [number, string][] = [];
  if (op.auth === "basic") errors.push([401, "Invalid credentials"]);
  if (op.auth === "basic" && op.denied) errors.push([401, DENIED[op.denied]!]);
  if (op.auth === "ingest") errors.push([401, "Invalid ingest key"]);
  if (doc.body) errors.push([400, "Invalid content type"], [400, "Invalid request body"]);
  const required = [...(doc.query ?? []), ...(doc.body ?? [])].some((f) => !f.split(":")[0]!.endsWith("?"));
  if (required || op.path.includes(":")) errors.push([400, "Insufficient inputs"]);
  for (const e of doc.errors ?? []) if (!errors.some(([s, m]) => s === e[0] && m === e[1])) errors.push(e);
  errors.push([503, "Service unavailable"], [504, "Service timed out"]);
  return errors;
}

const TAGS: [RegExp, string][] = [
  [/^\/_alerting\/watchers/, "Watchers"],
  [/^\/_alerting\/alerts?\//, "Alerts"],
  [/^\/_config\/assets/, "Assets"],
  [/^\/_config\/monitors/, "Monitors"],
  [/^\/_config\/functions/, "Functions"],
  [/^\/_config\/sites/, "Sites"],
  [/^\/_config\/plants/, "Plants"],
  [/^\/_config\/users\/(password|validate_otp)/, "Password reset"],
  [/^\/_config\/users/, "Users"],
  [/^\/_config\/pipelines/, "Pipelines"],
  [/^\/_notebooks/, "Notebooks"],
  [/^\/_cm/, "Condition monitoring"],
  [/^\/_ems/, "Energy metrics"],
  [/^\/_ingest/, "Ingestion (edge gateways)"],
  [/^\/_config\/server-time/, "Utility"],
];

export const documentationOf = (op: Operation): OperationDoc | undefined => OPERATION_DOCS[op.op ?? op.action];

export const openApiPath = (path: string): string => path.replace(/:([A-Za-z_]+)/g, "{$1}");

function operationObject(op: Operation, index: number): Schema {
  // A route added without its entry in openapi.operations.ts is still listed (test/e2e/openapi.test.ts flags it).
  const doc = documentationOf(op) ?? { summary: op.action, answer: { schema: "object" } };
  const pathParams = [...op.path.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1]!);
  const parameters = [
    ...pathParams.map((name) => ({ name, in: "path", required: true, schema: { ...str } })),
    ...(doc.query ?? []).map(parseField).map((f) => ({ name: f.name, in: "query", required: f.required, schema: f.schema })),
  ];
  const body = (doc.body ?? []).map(parseField);
  const responses: Record<string, Schema> = {};
  const answer = answerSchema(doc.answer);
  responses["200"] = {
    description: "Success",
    content: { "application/json": { schema: answer.schema, ...(answer.example !== undefined ? { example: answer.example } : {}) } },
  };
  const byStatus = new Map<number, string[]>();
  for (const [status, message] of errorsOf(op, doc)) byStatus.set(status, [...(byStatus.get(status) ?? []), message]);
  for (const [status, messages] of byStatus) {
    const examples = Object.fromEntries(messages.map((message, i) => [`e${i + 1}`, { summary: message, value: { error: { status, message } } }]));
    const entry = { description: messages.join(" | "), content: { "application/json": { schema: ref("Error"), examples } } };
    if (status === 200) {
      // The one envelope on a 200 the spec names (notebook delete that deletes nothing).
      const ok = responses["200"] as { description: string; content: Record<string, { schema: Schema }> };
      ok.description = `Success, or the envelope: ${messages.join(" | ")}`;
      ok.content["application/json"]!.schema = { oneOf: [answer.schema, ref("Error")] };
    } else responses[String(status)] = entry;
  }
  const sameOp = OPERATIONS.filter((o) => (o.op ?? o.action) === (op.op ?? op.action));
  return {
    operationId: sameOp.length > 1 ? `${op.action}#${index}` : op.action,
    summary: doc.summary,
    description: [
      op.op ? `Operation ${op.op} of the interface specification.` : "Ingestion API of the edge gateways (contract).",
      op.module ? `Module: ${op.module}.` : "",
      op.auth === "none" ? "Called without an Authorization header." : "",
      sameOp.length > 1 ? `Also served at ${sameOp.filter((o) => o !== op).map((o) => `${o.method} ${o.path}`).join(", ")}.` : "",
    ]
      .filter(Boolean)
      .join(" "),
    tags: [TAGS.find(([re]) => re.test(op.path))?.[1] ?? "Other"],
    ...(op.op ? { "x-operation-number": op.op } : {}),
    "x-action": op.action,
    security: op.auth === "basic" ? [{ basicAuth: [] }] : op.auth === "ingest" ? [{ ingestKey: [] }] : [],
    ...(parameters.length ? { parameters } : {}),
    ...(body.length
      ? {
          requestBody: {
            required: true,
            content: {
              "application/json": {
                schema: {
                  type: "object",
                  properties: Object.fromEntries(body.map((f) => [f.name, f.schema])),
                  required: body.filter((f) => f.required).map((f) => f.name),
                },
              },
            },
          },
        }
      : {}),
    responses,
  };
}

export function buildOpenApi(operations: Operation[] = OPERATIONS): Schema {
  const paths: Record<string, Record<string, Schema>> = {};
  operations.forEach((op, i) => {
    const p = openApiPath(op.path);
    paths[p] ??= {};
    paths[p]![op.method.toLowerCase()] = operationObject(op, i);
  });
  return {
    openapi: "3.1.0",
    info: {
      title: "Industrial Monitoring Service",
      version: "0.1.0",
      description:
        "Configuration, ingestion, alerting, notifications, notebooks, condition monitoring and energy metrics. " +
        "Errors are `{error: {status, message}}` with the HTTP status equal to `error.status`. Lists accept `limit` " +
        "(1..1000) and `offset` and return the total in `X-Total-Count`. A trailing slash is optional on every path.",
    },
    servers: [{ url: "/" }],
    tags: [...new Set(TAGS.map(([, t]) => t))].map((name) => ({ name })),
    components: {
      securitySchemes: {
        basicAuth: { type: "http", scheme: "basic", description: "base64 of username:password" },
        ingestKey: { type: "http", scheme: "bearer", description: "the pipeline's ingest key, shown once when the pipeline is created" },
      },
      schemas: SCHEMAS,
    },
    paths,
  };
}

let cached: string | undefined;

/** The documents the gateway serves itself, without authentication; they are not spec operations. */
export const DOCUMENT_PATHS = ["/openapi.json", "/docs"] as const;

/** Answers /openapi.json and /docs; false for any other path. */
export function serveDocument(urlPath: string, res: ServerResponse): boolean {
  const path = urlPath.length > 1 ? urlPath.replace(/\/$/, "") : urlPath;
  if (path === "/openapi.json") {
    cached ??= JSON.stringify(buildOpenApi());
    res.writeHead(200, { "Content-Type": "application/json; charset=utf-8", "Content-Length": Buffer.byteLength(cached) });
    res.end(cached);
    return true;
  }
  if (path === "/docs") {
    res.writeHead(200, {
      "Content-Type": "text/html; charset=utf-8",
      "Content-Length": Buffer.byteLength(DOCS_PAGE),
      "Content-Security-Policy": "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'",
    });
    res.end(DOCS_PAGE);
    return true;
  }
  return false;
}
