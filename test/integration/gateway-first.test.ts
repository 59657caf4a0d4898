/**
 * An api that starts before the services (over NATS, alone in its namespace) knows every route
 * the code base declares: a known route answers 503 `Service unavailable` with `Retry-After`
 * until its service joins (the service's node is looked for before credentials, so auth being
 * away too changes nothing), then as usual; an unknown path is 404 from the first moment.
 */
import { pollUntil, startCluster, type Cluster } from "../helpers/cluster";

let cluster: Cluster;

beforeAll(async () => {
  cluster = await startCluster({ processes: [["api"]], waitReady: false });
  await pollUntil(async () => (await cluster.http("GET", "/openapi.json", { auth: null })).status === 200, 60_000, "the api alone to listen", [cluster.process("api")]);
}, 120_000);

afterAll(async () => {
  await cluster?.stop();
}, 60_000);

const unavailable = { status: 503, body: { error: { status: 503, message: "Service unavailable" } } };

describe("an api started alone", () => {
  it("answers a known route 503 with Retry-After, with valid credentials or none", async () => {
    for (const auth of [undefined, null]) {
      const res = await cluster.http("GET", "/_config/sites/_list", { auth });
      expect(res).toMatchObject(unavailable);
      expect(res.headers.get("retry-after")).toBe("5");
    }
    // Another service's route, a change with a body, and a parameterised path.
    expect(await cluster.http("POST", "/_alerting/watchers", { body: { watcher_name: "w" } })).toMatchObject(unavailable);
    expect(await cluster.http("GET", "/_ems/monitor/m-1")).toMatchObject(unavailable);
    expect(await cluster.http("GET", "/_config/users/someone@example.com")).toMatchObject(unavailable);
  });

  it("still answers an unknown path 404, and a known path with another method 405", async () => {
    const unknown = await cluster.http("GET", "/_config/nothing-here");
    expect(unknown).toMatchObject({ status: 404, body: { error: { status: 404, message: "Not found" } } });
    expect(unknown.headers.get("retry-after")).toBeNull();
    expect(await cluster.http("DELETE", "/_config/sites/_list")).toMatchObject({ status: 405, body: { error: { status: 405, message: "This method is not allowed" } } });
  });

  it("documents every declared route already", async () => {
    const paths = Object.keys((await cluster.http<{ paths: Record<string, unknown> }>("GET", "/openapi.json", { auth: null })).body.paths);
    expect(paths).toEqual(expect.arrayContaining(["/_config/sites/_list", "/_ems/monitor/_all", "/_notebooks/notebooks/_all", "/_ingest/pipelines/{pipeline_id}/readings"]));
  });

  it("answers the same route 200 once the services start", async () => {
    cluster.addProcess(["auth", "config", "notifier"]);
    await cluster.waitReady(90_000);
    expect(await cluster.http("GET", "/_config/sites/_list")).toMatchObject({ status: 200, body: [] });
  }, 120_000);
});
