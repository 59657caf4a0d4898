/**
 * Two config replicas over NATS sharing the Redis cache: each keeps the cache generation in
 * memory (one Redis round trip per cached read) and learns of a new one by the
 * `config.cache.changed` broadcast. A write through either replica is seen by the very next read,
 * whichever replica answers it: the gateway's round robin alternates between them.
 *
 * A write also deletes every entry of the shared cache, but each replica keeps the lists it
 * served in its own memory under its generation: without the broadcast, the other replica would
 * answer the old list until it next reads the generation (within a second).
 */
import { startCluster, type Cluster } from "../helpers/cluster";

let cluster: Cluster;

beforeAll(async () => {
  cluster = await startCluster({ processes: [["api", "auth"], ["config"], ["config"]] });
}, 120_000);

afterAll(async () => {
  await cluster?.stop();
}, 60_000);

const names = async (): Promise<string[]> => {
  const res = await cluster.http<{ site_name: string }[]>("GET", "/_config/sites/_list");
  expect(res.status).toBe(200);
  return res.body.map((s) => s.site_name);
};

it("serves every write to the next read from either replica", async () => {
  expect(cluster.process("config").pid).not.toBe(undefined);
  const created = await cluster.http<{ id: string }>("POST", "/_config/sites", {
    body: { site_name: "Replica 0", location: "x", timezone: "UTC", latitude: "1", edge_firmware: {} },
  });
  expect(created.status).toBe(200);
  for (let i = 0; i < 4; i++) expect(await names()).toEqual(["Replica 0"]);
  for (let v = 1; v <= 6; v++) {
    // Writes land on alternate replicas too; each replica's cache is warm before every write.
    const res = await cluster.http("PUT", `/_config/sites/${created.body.id}`, {
      body: { location: "x", retention_period: 10, site_name: `Replica ${v}` },
    });
    expect(res.status).toBe(200);
    for (let i = 0; i < 4; i++) expect(await names()).toEqual([`Replica ${v}`]);
  }
});
