/**
 * The upgrade that puts the unique index of edge gateways' MAC addresses on the address as the
 * code compares it (services/pipelines/migrations/0010-edge-mac-normalised.ts): without
 * duplicates the index is replaced; with edge pipelines that already share a MAC address once
 * separators are removed, nothing is deleted, the old index stays and the log names them.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { Client } from "pg";
import { migrateSchema } from "../../mixins/db.mixin";
import { migrations } from "../../services/pipelines/migrations";
import { createTestDatabase, type TestDatabase } from "../helpers/db";

const dbs: TestDatabase[] = [];

afterAll(async () => {
  for (const db of dbs) await db.drop();
});

const previous = migrations.slice(0, migrations.findIndex((m) => new m().name === "PipelinesEdgeMacNormalised1767250000200"));

/** A database at the release before, with edge pipelines of these MAC addresses. */
async function before(macs: string[]): Promise<{ pg: Client; ids: string[] }> {
  const db = await createTestDatabase();
  dbs.push(db);
  await migrateSchema({ schema: "pipelines", migrations: previous }, db.url);
  const pg = new Client({ connectionString: db.url });
  await pg.connect();
  const ids: string[] = [];
  for (const [i, mac] of macs.entries()) {
    const id = randomUUID();
    ids.push(id);
    await pg.query(
      `INSERT INTO pipelines.pipelines (pipeline_id, kind, pipeline_name, site_id, plant_id, data_type, data_source, data_source_subtype, mac_address, ingest_key_hash, created_at)
       VALUES ($1, 'edge', $2, $3, $3, 'Process', 'Edge IOT Gateway', 'Modbus RTU', $4, $5, $6)`,
      [id, `Gateway ${i}`, randomUUID(), mac, randomBytes(32), 1000 + i],
    );
  }
  return { pg, ids };
}

const indexOf = async (pg: Client) =>
  (await pg.query<{ indexdef: string }>(`SELECT indexdef FROM pg_indexes WHERE schemaname = 'pipelines' AND indexname = 'pipelines_edge_mac'`)).rows[0]!.indexdef;

describe("the MAC address index on upgrade", () => {
  it("is replaced by one on the address without separators: a twin written differently is refused", async () => {
    const { pg } = await before(["00:1B:44:11:3A:B7", "zz", "02-00-00-00-00-01"]);
    try {
      await migrateSchema({ schema: "pipelines", migrations }, dbs.at(-1)!.url);
      expect(await indexOf(pg)).toContain("regexp_replace");
      await expect(
        pg.query(
          `INSERT INTO pipelines.pipelines (pipeline_id, kind, pipeline_name, site_id, plant_id, data_type, data_source, data_source_subtype, mac_address, ingest_key_hash, created_at)
           VALUES ($1, 'edge', 'Twin', $1, $1, 'Process', 'Edge IOT Gateway', 'Modbus RTU', '001b44113ab7', $2, 1)`,
          [randomUUID(), randomBytes(32)],
        ),
      ).rejects.toMatchObject({ code: "23505", constraint: "pipelines_edge_mac" });
    } finally {
      await pg.end();
    }
  });

  it("with gateways already sharing one, deletes nothing, keeps the old index and names them in the log", async () => {
    const { pg, ids } = await before(["00:1B:44:11:3A:B7", "00-1b-44-11-3a-b7", "02:00:00:00:00:02"]);
    const warned: string[] = [];
    const warn = jest.spyOn(console, "warn").mockImplementation((line: string) => void warned.push(line));
    try {
      await migrateSchema({ schema: "pipelines", migrations }, dbs.at(-1)!.url);
      expect(await indexOf(pg)).toContain("lower(mac_address)");
      expect(await indexOf(pg)).not.toContain("regexp_replace");
      const { rows } = await pg.query<{ pipeline_id: string }>(`SELECT pipeline_id FROM pipelines.pipelines ORDER BY created_at`);
      expect(rows.map((r) => r.pipeline_id)).toEqual(ids);
      expect(warned).toHaveLength(1);
      expect(warned[0]).toContain(`${ids[0]} (00:1B:44:11:3A:B7), ${ids[1]} (00-1b-44-11-3a-b7)`);
      expect(warned[0]).toContain("The unique index stays on lower(mac_address)");
      const { rows: applied } = await pg.query<{ name: string }>(`SELECT name FROM pipelines.migrations WHERE name = 'PipelinesEdgeMacNormalised1767250000200'`);
      expect(applied).toHaveLength(1);
    } finally {
      warn.mockRestore();
      await pg.end();
    }
  });
});
