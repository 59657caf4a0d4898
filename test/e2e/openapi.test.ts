/**
 * /openapi.json: made from what the running services declare, served without authentication,
 * lists exactly the routes the gateway serves, is a well-formed OpenAPI 3.1 document, and
 * documents the answers (error texts included) the gateway and the services really give.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { DOCUMENT_PATHS } from "../../services/api/openapi";
import { SERVICE_SCHEMAS } from "../../services";
import { startTestNode, type TestNode } from "../helpers/node";

interface Doc {
  openapi: string;
  paths: Record<string, Record<string, any>>;
  components: { schemas: Record<string, unknown>; securitySchemes: Record<string, unknown> };
}

let t: TestNode;
let doc: Doc;
beforeAll(async () => {
  t = await startTestNode({ services: Object.keys(SERVICE_SCHEMAS), env: { LOG_LEVEL: "fatal" } });
  const res = await t.http<Doc>("GET", "/openapi.json", { auth: null });
  expect(res.status).toBe(200);
  doc = res.body;
});
afterAll(async () => {
  await t?.stop();
});

const ops = () =>
  Object.entries(doc.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ path, method: method.toUpperCase(), op })));
/** Whether the operation documents this status with this text; `<name>` in a documented text stands for a value. */
function isDocumented(op: any, status: number, message: string): boolean {
  const documented: string[] = Object.values(op.responses[String(status)]?.content?.["application/json"]?.examples ?? {}).map((e: any) => e.value.error.message);
  const pattern = (d: string) => new RegExp(`^${d.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/<[^>]+>/g, ".*")}$`);
  return documented.some((d) => d === message || pattern(d).test(message));
}
const toRoute = (path: string) => path.replace(/\{([A-Za-z_]+)\}/g, ":$1");

describe("/openapi.json", () => {
  it("is OpenAPI 3.1, served as JSON without credentials", async () => {
    const res = await t.http("GET", "/openapi.json", { auth: null });
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(doc.openapi).toBe("3.1.0");
    expect(DOCUMENT_PATHS).toEqual(["/openapi.json", "/docs", "/"]);
  });

  it("lists every route the gateway serves, and no other", async () => {
    // Path parameters by position: a route may document its parameter under another name than its own (PUT /_config/users/:user as {username}).
    const anyName = (route: string) => route.replace(/:[A-Za-z_]+/g, ":_");
    const aliases = await t.node.broker.call<{ fullPath: string; methods: string }[]>("api.listAliases");
    const served = new Set(aliases.map((a) => anyName(`${a.methods} ${a.fullPath.replace(/\/+$/, "")}`)));
    const documented = new Set(ops().map((o) => anyName(`${o.method} ${toRoute(o.path)}`)));
    expect(served.size).toBeGreaterThan(90);
    expect([...documented].sort()).toEqual([...served].sort());
  });

  it("has all 78 operations of the spec and the ingestion API", () => {
    const numbers = new Set(ops().map((o) => o.op["x-operation-number"]).filter(Boolean));
    expect([...numbers].sort((a, b) => a - b)).toEqual(Array.from({ length: 78 }, (_, i) => i + 1));
    expect(ops().filter((o) => o.path.startsWith("/_ingest/")).map((o) => o.op["x-action"]).sort()).toEqual([
      "pipelines.ingest.ack",
      "pipelines.ingest.actions",
      "pipelines.ingest.config",
      "pipelines.ingest.heartbeat",
      "pipelines.ingest.readings",
      "pipelines.ingest.waveform",
    ]);
  });

  it("documents every operation for a newcomer: a summary, and each field with a description and a type", () => {
    const gaps: string[] = [];
    for (const { path, method, op } of ops()) {
      if (!op.summary) gaps.push(`${method} ${path}: no summary`);
      // Operation numbers belong to a document users do not have: only in x-operation-number.
      if (/\bop(eration)?s?\s*\d/i.test(`${op.summary} ${op.description}`)) gaps.push(`${method} ${path}: names an operation number`);
      const body = op.requestBody?.content["application/json"].schema.properties ?? {};
      const fields = [...(op.parameters ?? []).map((p: any) => [p.name, p.in, p.schema]), ...Object.entries(body).map(([n, s]) => [n, "body", s])];
      for (const [name, where, schema] of fields) {
        if (where !== "path" && !schema.description) gaps.push(`${method} ${path}: ${name} has no description`);
        if (!schema.type && !schema.$ref && !schema.enum && !schema.oneOf && !schema.const) gaps.push(`${method} ${path}: ${name} has no type`);
      }
    }
    expect(gaps).toEqual([]);
  });

  it("gives the answers of a bare call (no body, unknown ids) as documented: status and text", async () => {
    const id = "00000000-0000-4000-8000-000000000001";
    const undocumented: string[] = [];
    for (const { path, method, op } of ops()) {
      const url = path.replace(/\{[A-Za-z_]+\}/g, id);
      const auth = op.security.length ? undefined : null;
      const res = await t.http<{ error?: { status: number; message: string } }>(method, url, { auth });
      if (res.status < 400) continue;
      if (!isDocumented(op, res.status, res.body?.error?.message ?? "")) undocumented.push(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    }
    expect(undocumented).toEqual([]);
  });

  it("is well formed: unique operation ids, declared path parameters, references that resolve", () => {
    const ids = ops().map((o) => o.op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const { path, op } of ops()) {
      const declared = (op.parameters ?? []).filter((p: any) => p.in === "path").map((p: any) => p.name);
      expect(declared).toEqual([...path.matchAll(/\{([A-Za-z_]+)\}/g)].map((m) => m[1]));
      expect(op.responses["200"]).toBeDefined();
      for (const scheme of op.security.flatMap((s: object) => Object.keys(s))) expect(doc.components.securitySchemes[scheme]).toBeDefined();
    }
    const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]!);
    expect(refs.length).toBeGreaterThan(50);
    for (const r of refs) expect(doc.components.schemas[r]).toBeDefined();
  });

  it("passes Redocly's recommended rules with no error (npx @redocly/cli lint)", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ims-openapi-"));
    try {
      const file = path.join(dir, "openapi.json");
      fs.writeFileSync(file, JSON.stringify(doc, null, 1));
      const cli = path.join(path.dirname(require.resolve("@redocly/cli/package.json")), "bin", "cli.js");
      const run = spawnSync(process.execPath, [cli, "lint", file, "--extends=recommended", "--format=json"], {
        cwd: dir,
        encoding: "utf8",
        timeout: 60_000,
        env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" },
      });
      const report = JSON.parse(run.stdout) as { totals: { errors: number }; problems: { ruleId: string; severity: string; message: string }[] };
      expect(report.problems.filter((p) => p.severity === "error").map((p) => `${p.ruleId}: ${p.message}`)).toEqual([]);
      expect(report.totals.errors).toBe(0);
      expect(run.status).toBe(0);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);

  it("documents the user's routes under one path, {username}, whatever the route names its parameter", () => {
    expect(Object.keys(doc.paths).filter((p) => p.startsWith("/_config/users/{"))).toEqual(expect.arrayContaining(["/_config/users/{username}"]));
    expect(Object.keys(doc.paths)).not.toContain("/_config/users/{user}");
    expect(Object.keys(doc.paths["/_config/users/{username}"]!).sort()).toEqual(["delete", "get", "put"]);
    const put = doc.paths["/_config/users/{username}"]!.put;
    expect(put.parameters.filter((p: any) => p.in === "path").map((p: any) => p.name)).toEqual(["username"]);
    expect(put.requestBody.content["application/json"].schema.required).toContain("username");
  });

  it("carries the spec's error messages with the envelope as examples", () => {
    const createSite = doc.paths["/_config/sites"]!.post;
    const messages = Object.values(createSite.responses["400"].content["application/json"].examples).map((e: any) => e.value.error.message);
    expect(messages).toEqual(
      expect.arrayContaining([
        "Site with name <site_name> already exists. Please choose a different name.",
        "Error occurred during Site creation",
        "Either of latitude or longitude has to be specified",
        "Invalid content type",
        "Insufficient inputs",
      ]),
    );
    expect(createSite.responses["401"].description).toBe("Invalid credentials | You do not have access to this module");
    expect(doc.paths["/_config/sites/{site_id}"]!.get.responses["405"].description).toBe("This method is not allowed");
    expect(doc.paths["/_cm/assets/_list"]!.get.responses["401"].description).toContain("Unauthorized access to module by <user_type>");
    expect(doc.paths["/_notebooks/notebooks"]!.delete.responses["200"].description).toContain("No notebooks deleted");
  });

  it("documents what the gateway answers to a caller without credentials, on every route", async () => {
    const id = "00000000-0000-4000-8000-000000000001";
    const undocumented: string[] = [];
    for (const { path, method, op } of ops()) {
      const url = path.replace(/\{[A-Za-z_]+\}/g, id);
      const res = await t.http<{ error?: { status: number; message: string } }>(method, url, { auth: null });
      expect([404, 405]).not.toContain(res.status);
      if (!res.body?.error || !isDocumented(op, res.status, res.body.error.message)) undocumented.push(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    }
    expect(undocumented).toEqual([]);
  });
});
