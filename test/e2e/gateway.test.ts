import http from "node:http";
import { startTestNode, type TestNode } from "../helpers/node";

let t: TestNode;
beforeAll(async () => {
  t = await startTestNode();
});
afterAll(async () => {
  await t?.stop();
});

describe("gateway", () => {
  it("refuses a request without credentials with 401 Invalid credentials", async () => {
    const res = await t.http("GET", "/_config/sites/_list", { auth: null });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: { status: 401, message: "Invalid credentials" } });
  });

  it("refuses a wrong password the same way", async () => {
    const res = await t.http("GET", "/_config/sites/_list", { auth: { username: "admin@localhost", password: "nope" } });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: { status: 401, message: "Invalid credentials" } });
  });

  it("refuses an overlong username or password as wrong credentials, not as bad input", async () => {
    for (const auth of [
      { username: "admin@localhost", password: "A1".repeat(600) },
      { username: `${"a".repeat(400)}@localhost`, password: "Admin12345" },
    ]) {
      const res = await t.http("GET", "/_config/sites/_list", { auth });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: { status: 401, message: "Invalid credentials" } });
    }
  });

  it("answers an unknown route with 404 Not found", async () => {
    const res = await t.http("GET", "/_config/nothing-here");
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: { status: 404, message: "Not found" } });
  });

  it("answers a path whose percent-encoding does not decode with 404 Not found, not a fault", async () => {
    for (const path of ["/_config/plants/%ZZ", "/_config/sites/%E0%A4%A"]) {
      expect(await t.http("GET", path)).toMatchObject({ status: 404, body: { error: { status: 404, message: "Not found" } } });
    }
  });

  it("answers a URL too long for the HTTP server with a 431 envelope, not a bare status line", async () => {
    const res = await fetch(`${t.baseUrl}/_config/sites/_list?x=${"a".repeat(20_000)}`);
    expect(res.status).toBe(431);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await res.json()).toEqual({ error: { status: 431, message: "Request line or headers too large" } });
    expect((await t.http("GET", "/_config/sites/_list")).status).toBe(200);
  });

  it("answers an Expect header it cannot meet with a 417 envelope", async () => {
    const url = new URL(`${t.baseUrl}/_config/sites`);
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(
        { host: url.hostname, port: url.port, path: url.pathname, method: "POST", headers: { expect: "200-ok", "content-type": "application/json" } },
        (res) => {
          let body = "";
          res.on("data", (c: Buffer) => (body += c.toString()));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on("error", reject);
      req.end("{}");
    });
    expect(answer.status).toBe(417);
    expect(JSON.parse(answer.body)).toEqual({ error: { status: 417, message: "Expectation failed" } });
  });

  it("answers a wrong method on a known path with 405", async () => {
    const res = await t.http("DELETE", "/_config/sites/_list");
    expect(res.status).toBe(405);
    expect(res.body).toEqual({ error: { status: 405, message: "This method is not allowed" } });
  });

  it("treats a trailing slash as the same route", async () => {
    const a = await t.http("GET", "/_config/sites/_list");
    const b = await t.http("GET", "/_config/sites/_list/");
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    expect(b.body).toEqual(a.body);
  });

  it("refuses malformed JSON with 400 Invalid request body and a non-JSON body with Invalid content type", async () => {
    const bad = await t.http("POST", "/_config/sites", { rawBody: '{"site_name":', headers: { "content-type": "application/json" } });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ error: { status: 400, message: "Invalid request body" } });
    const text = await t.http("POST", "/_config/sites", { rawBody: "site_name=x", headers: { "content-type": "text/plain" } });
    expect(text.status).toBe(400);
    expect(text.body).toEqual({ error: { status: 400, message: "Invalid content type" } });
  });

  it("refuses __proto__ keys", async () => {
    const res = await t.http("POST", "/_config/sites", {
      rawBody: '{"__proto__": {"site_name": "x"}}',
      headers: { "content-type": "application/json" },
    });
    expect(res.status).toBe(400);
  });

  it("refuses __proto__ and constructor keys in the query too, which the query parser would drop", async () => {
    for (const query of ["__proto__=1", "a[__proto__]=1", "constructor.x=1", "%5F%5Fproto%5F%5F=1", "toString=x", "valueOf=1&hasOwnProperty=2"]) {
      const res = await t.http("GET", `/_config/sites/_list?${query}`);
      expect({ query, body: res.body }).toEqual({ query, body: { error: { status: 400, message: "Invalid request body" } } });
    }
  });

  it("puts a request id on every response, keeping a caller's own", async () => {
    const res = await t.http("GET", "/_config/sites/_list", { headers: { "x-request-id": "trace-123" } });
    expect(res.headers.get("x-request-id")).toBe("trace-123");
    const other = await t.http("GET", "/nowhere");
    expect(other.headers.get("x-request-id")).toMatch(/[0-9a-f-]{36}/);
  });

  it("answers server time in seconds with a fraction", async () => {
    const before = Date.now() / 1000;
    const res = await t.http<number>("GET", "/_config/server-time");
    expect(res.status).toBe(200);
    expect(typeof res.body).toBe("number");
    expect(res.body).toBeGreaterThanOrEqual(before - 1);
    expect(res.body).toBeLessThan(before + 60);
  });
});
