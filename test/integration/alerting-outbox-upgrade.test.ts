/**
 * An upgrade from the release whose alerting kept its own alert_outbox: the notices still pending
 * there move into the alerts stream's outbox in the migration that drops the table, and the
 * notifier records each once when the new release runs.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { Client } from "pg";
import { startNode, type RunningNode } from "../../bin/runtime";
import { readConfig } from "../../lib/config";
import { migrateSchema } from "../../mixins/db.mixin";
import { migrations } from "../../services/alerting/migrations";
import { createTestDatabase, type TestDatabase } from "../helpers/db";
import { ADMIN } from "../helpers/node";

let db: TestDatabase;
let pg: Client;
let node: RunningNode | undefined;

const notice = (alert_id: string) => ({
  alert_id,
  watcher_id: randomUUID(),
  watcher_name: "Old watch",
  trigger_id: "t1",
  trigger_name: "Bearing hot",
  severity: "High",
  start_time: "2025-01-01T00:00:00+00:00",
  start_ts: 1735689600000,
  site: "Site u1",
  plant: "Plant u1",
  function: "Cooling u1",
  asset: "Pump u1",
  monitor: "Bearing u1",
  tag: "Temperature",
  value: 93.5,
  threshold: 80,
  comparison: ">=",
  unit: "C",
  conditions: [],
  notifyTo: { email: true, sms: false, whatsapp: false, users: [ADMIN.username] },
});

beforeAll(async () => {
  db = await createTestDatabase();
  pg = new Client({ connectionString: db.url });
  await pg.connect();
});

afterAll(async () => {
  await node?.stop();
  await pg?.end();
  await db?.drop();
}, 60_000);

describe("alerting's alert_outbox on upgrade", () => {
  it("hands every pending notice to the notifier through the alerts stream, once", async () => {
    // The schema as the previous release left it: the init migration (alert_outbox) and the series clock.
    const previous = migrations.filter((m) => !(new m().name ?? "").startsWith("AlertingAlertsStream"));
    expect(previous.length).toBe(migrations.length - 1);
    await migrateSchema({ schema: "alerting", migrations: previous }, db.url);
    const [due, backingOff] = [randomUUID(), randomUUID()];
    await pg.query(`INSERT INTO alerting.alert_outbox (alert_id, payload, next_attempt_at) VALUES ($1, $2, 0)`, [due, JSON.stringify(notice(due))]);
    await pg.query(
      `INSERT INTO alerting.alert_outbox (alert_id, payload, attempts, next_attempt_at, last_error) VALUES ($1, $2, 4, $3, 'Service unavailable')`,
      [backingOff, JSON.stringify(notice(backingOff)), Date.now() + 300_000],
    );

    node = await startNode(
      readConfig({
        SERVICES: "auth,config,alerting,notifier",
        DATABASE_URL: db.url,
        NAMESPACE: `test-${randomBytes(4).toString("hex")}`,
        LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "error",
        ADMIN_USERNAME: ADMIN.username,
        ADMIN_PASSWORD: ADMIN.password,
        DATA_DIR: `/tmp/ims-test-${randomBytes(4).toString("hex")}`,
      }),
    );

    const [table] = (await pg.query(`SELECT to_regclass('alerting.alert_outbox') AS t`)).rows as { t: string | null }[];
    expect(table?.t).toBeNull();
    const keys = async () =>
      (await pg.query(`SELECT idempotency_key, status FROM notifier.notifications ORDER BY idempotency_key`)).rows as { idempotency_key: string; status: string }[];
    const deadline = Date.now() + 30_000;
    while ((await keys()).filter((k) => k.status === "sent").length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    await new Promise((r) => setTimeout(r, 1000));
    expect(await keys()).toEqual(
      [due, backingOff].map((id) => ({ idempotency_key: `alert:${id}:${ADMIN.username}:email`, status: "sent" })).sort((a, b) => a.idempotency_key.localeCompare(b.idempotency_key)),
    );
    const [left] = (await pg.query(`SELECT count(*)::int AS n FROM alerting.stream_outbox`)).rows as { n: number }[];
    expect(left?.n).toBe(0);
  }, 90_000);
});
