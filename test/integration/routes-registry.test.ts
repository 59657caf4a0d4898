/**
 * The gateway knows every route the code base declares, and what the services announce on the
 * bus joins them: a service started on its own (here ems, in a process of its own) is served as
 * soon as it joins, and before it joins and after it stops its routes answer 503 (the service is
 * away) with `Retry-After`, not 404.
 */
import { pollUntil, startCluster, type Cluster, type ServiceProcess } from "../helpers/cluster";

let cluster: Cluster;
let ems: ServiceProcess | undefined;

beforeAll(async () => {
  cluster = await startCluster({ processes: [["api", "auth", "config"]], env: { REQUEST_TIMEOUT_MS: "3000" } });
}, 120_000);

afterAll(async () => {
  await cluster?.stop();
}, 60_000);

const paths = async (): Promise<string[]> =>
  Object.keys((await cluster.http<{ paths: Record<string, unknown> }>("GET", "/openapi.json", { auth: null })).body.paths);

describe("routes announced by the services", () => {
  it("knows an energy route while no ems has ever joined: 503 with Retry-After, documented", async () => {
    const res = await cluster.http("GET", "/_ems/monitor");
    expect(res).toMatchObject({ status: 503, body: { error: { status: 503, message: "Service unavailable" } } });
    expect(res.headers.get("retry-after")).toBe("5");
    expect(await paths()).toContain("/_ems/monitor/_all");
    expect(await paths()).toContain("/_config/sites/_list");
  });

  it("serves ems's routes, documented, once an ems process joins", async () => {
    ems = cluster.addProcess(["ems"]);
    await pollUntil(async () => (await cluster.http("GET", "/_ems/monitor")).status === 400, 60_000, "ems's routes at the gateway", [ems]);
    expect(await cluster.http("GET", "/_ems/monitor")).toMatchObject({ status: 400, body: { error: { status: 400, message: "Monitor id not given" } } });
    expect(await paths()).toEqual(expect.arrayContaining(["/_ems/monitor/_all", "/_ems/monitor/{monitor_id}", "/_ems/monitor/_trend/{monitor_id}"]));
    const doc = (await cluster.http<any>("GET", "/openapi.json", { auth: null })).body;
    expect(doc.components.schemas.EnergyMetrics).toBeDefined();
  }, 90_000);

  it("answers 503 on them when ems stops, and serves them again when it is back", async () => {
    await ems!.stop("SIGTERM");
    await pollUntil(async () => (await cluster.http("GET", "/_ems/monitor")).status === 503, 30_000, "503 once ems is gone");
    expect(await cluster.http("GET", "/_ems/monitor")).toMatchObject({ status: 503, body: { error: { status: 503, message: "Service unavailable" } } });
    expect(await paths()).toContain("/_ems/monitor/_all");
    ems!.start();
    await pollUntil(async () => (await cluster.http("GET", "/_ems/monitor")).status === 400, 60_000, "ems back", [ems!]);
  }, 120_000);
});
