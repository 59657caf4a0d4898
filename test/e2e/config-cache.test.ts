/**
 * The config read cache on Redis (the cluster's cacher): every write is visible to the next
 * read, whichever entity it touched, and nothing of one caller's scope is served to another.
 */
import { startTestNode, type TestNode } from "../helpers/node";

let t: TestNode;
beforeAll(async () => {
  t = await startTestNode({ services: ["api", "auth", "config"], env: { REDIS_URL: process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379" } });
});
afterAll(async () => {
  await t?.stop();
});

async function post(path: string, body: Record<string, unknown>): Promise<string> {
  const res = await t.http<{ id: string }>("POST", path, { body });
  if (res.status !== 200) throw new Error(`${path}: ${JSON.stringify(res.body)}`);
  return res.body.id;
}

it("runs on the Redis cacher and serves every write to the next read", async () => {
  expect(t.node.broker.cacher?.constructor.name).toBe("RedisCacher");
  const names = async () => ((await t.http<{ site_name: string }[]>("GET", "/_config/sites/_list")).body).map((s) => s.site_name);
  expect(await names()).toEqual([]);
  const site = await post("/_config/sites", { site_name: "Cached", location: "x", timezone: "UTC", latitude: "1", edge_firmware: {} });
  expect(await names()).toEqual(["Cached"]);
  await t.http("PUT", `/_config/sites/${site}`, { body: { location: "y", retention_period: 10, site_name: "Cached 2" } });
  expect(await names()).toEqual(["Cached 2"]);

  const plant = await post("/_config/plants", { plant_name: "P", site_id: site });
  const fn = await post("/_config/functions", { function_name: "F", plant_id: plant });
  const fnList = async () => (await t.http<{ monitor_count: number; site_name: string }[]>("GET", `/_config/functions/_list?plant_id=${plant}`)).body;
  expect((await fnList())[0]).toMatchObject({ monitor_count: 0, site_name: "Cached 2" });
  const monitor = await post("/_config/monitors", { monitor_name: "M", monitor_type: "energy-monitor", function_id: fn });
  expect((await fnList())[0].monitor_count).toBe(1);
  // A parent's rename reaches the children's derived names at once.
  await t.http("PUT", `/_config/sites/${site}`, { body: { location: "y", retention_period: 10, site_name: "Cached 3" } });
  expect((await fnList())[0].site_name).toBe("Cached 3");

  const registered = async () => (await t.http<{ device_registered: boolean }[]>("GET", `/_config/monitors/_list?function_id=${fn}`)).body[0].device_registered;
  expect(await registered()).toBe(false);
  await t.node.broker.emit("pipelines.monitor.registered", { monitor_id: monitor, pipeline_id: "7c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f", data_type: "Energy" });
  for (let i = 0; i < 50 && !(await registered()); i++) await new Promise((r) => setTimeout(r, 50));
  expect(await registered()).toBe(true);
});
