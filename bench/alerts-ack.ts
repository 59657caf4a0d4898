/**
 * `npm run bench:alerts`, case (b): acknowledging in bulk (`POST /_alerting/alerts/_ack`, 500 ids a
 * request, the most it takes). BENCH_ALERTS_ACK_ALERTS (100,000) active unacknowledged alerts of one
 * function, seeded by SQL (one per trigger, as at most one is active per trigger): the first half
 * acknowledged 500 at a time by one client, the second half by BENCH_ALERTS_ACK_CLIENTS (4) clients
 * at once. Baseline in the same run: BENCH_ALERTS_ACK_SINGLE (2,000) more, acknowledged one by one
 * (`POST /_alerting/alerts/<id>/_ack`) by one client. Reports alerts acknowledged per second and
 * p50/p99 per request; checks that the bulk answers' `acknowledged` sum to the bulk seed and that
 * every seeded alert ended acknowledged, each with its history entry.
 */
import { randomUUID } from "node:crypto";
import { Client } from "pg";
import { startTestNode, type TestNode } from "../test/helpers/node";
import { createPlace, pct } from "./alerts-common";

const ALERTS = Number(process.env.BENCH_ALERTS_ACK_ALERTS ?? 100_000);
const SINGLE = Number(process.env.BENCH_ALERTS_ACK_SINGLE ?? 2_000);
const CLIENTS = Number(process.env.BENCH_ALERTS_ACK_CLIENTS ?? 4);
const BULK = 500;

interface Run {
  ms: number[];
  acknowledged: number;
  seconds: number;
}

async function bulkAck(t: TestNode, alert_ids: string[]): Promise<{ ms: number; acknowledged: number }> {
  const started = performance.now();
  const res = await t.http<{ acknowledged: number }>("POST", "/_alerting/alerts/_ack", { body: { alert_ids } });
  const ms = performance.now() - started;
  if (res.status !== 200) throw new Error(`bulk ack: ${res.status} ${JSON.stringify(res.body)}`);
  return { ms, acknowledged: res.body.acknowledged };
}

/** The ids in requests of BULK, sent by `clients` clients each taking the next request when its last is answered. */
async function bulkRun(t: TestNode, ids: string[], clients: number): Promise<Run> {
  const batches = Array.from({ length: Math.ceil(ids.length / BULK) }, (_, i) => ids.slice(i * BULK, (i + 1) * BULK));
  const run: Run = { ms: [], acknowledged: 0, seconds: 0 };
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < batches.length) {
        const r = await bulkAck(t, batches[next++]);
        run.ms.push(r.ms);
        run.acknowledged += r.acknowledged;
      }
    }),
  );
  run.seconds = (performance.now() - started) / 1000;
  return run;
}

async function singleRun(t: TestNode, ids: string[]): Promise<Run> {
  const run: Run = { ms: [], acknowledged: 0, seconds: 0 };
  const started = performance.now();
  for (const id of ids) {
    const began = performance.now();
    const res = await t.http("POST", `/_alerting/alerts/${id}/_ack`);
    run.ms.push(performance.now() - began);
    if (res.status !== 200) throw new Error(`ack ${id}: ${res.status} ${JSON.stringify(res.body)}`);
    run.acknowledged++;
  }
  run.seconds = (performance.now() - started) / 1000;
  return run;
}

const rate = (r: Run) => r.acknowledged / r.seconds;

function line(label: string, r: Run): string {
  return (
    `${label}: ${r.acknowledged.toLocaleString("en")} alerts in ${r.ms.length} requests, ${r.seconds.toFixed(1)} s, ` +
    `${Math.round(rate(r)).toLocaleString("en")} alerts/s; per request p50 ${pct(r.ms, 0.5).toFixed(0)} ms, p99 ${pct(r.ms, 0.99).toFixed(0)} ms, max ${Math.max(...r.ms).toFixed(0)} ms`
  );
}

/** Answers whether every check held. */
export async function ackBench(): Promise<boolean> {
  const t = await startTestNode({ services: ["api", "auth", "config", "alerting"], env: { LOG_LEVEL: "warn" } });
  const pg = new Client({ connectionString: t.db.url });
  await pg.connect();
  try {
    const { site, plant, fn } = await createPlace(t, "Ack");
    const total = ALERTS + SINGLE;
    const now = Date.now();
    const seeding = performance.now();
    // Alert i of trigger t<i> (one active alert per trigger and reason), opened i ms apart over the last minutes.
    await pg.query(
      `INSERT INTO alerting.alerts (alert_id, watcher_id, watcher_name, trigger_id, trigger_name, is_hidden, function_id, plant_id, site_id,
                                    asset_id, asset, monitor_id, monitor, tag, type_of_data, severity, state, start_ts, end_ts, note, details,
                                    opened_at, ack_state, acked_by, acked_at)
       SELECT md5('ack' || i)::uuid, '00000000-0000-4000-8000-000000000001'::uuid, 'Bench watch', 't' || i, 'Trigger ' || i, 0, $1, $2, $3,
              NULL, '', 'm', 'Monitor', '{}', 'Process', 1 + (i % 5), 'active', s, NULL, '', '{}', s, 'unacknowledged', NULL, NULL
         FROM generate_series(1, $4::int) AS i, LATERAL (SELECT $5::bigint - $4::bigint + i AS s) x`,
      [fn, plant, site, total, now],
    );
    // As autovacuum leaves a table after a bulk insert.
    await pg.query(`VACUUM ANALYZE alerting.alerts`);
    const ids = (await pg.query<{ alert_id: string }>(`SELECT alert_id FROM alerting.alerts ORDER BY start_ts`)).rows.map((r) => r.alert_id);
    console.log(`Ack: seeded ${total.toLocaleString("en")} active unacknowledged alerts of one function in ${((performance.now() - seeding) / 1000).toFixed(1)} s`);

    // Warm-up (plans, connections): ids that exist nowhere acknowledge nothing.
    await bulkAck(t, Array.from({ length: BULK }, () => randomUUID()));
    const half = Math.floor(ALERTS / 2);
    const one = await bulkRun(t, ids.slice(0, half), 1);
    const many = await bulkRun(t, ids.slice(half, ALERTS), CLIENTS);
    const single = await singleRun(t, ids.slice(ALERTS));

    const [counts] = (
      await pg.query<{ acked: number; unacked: number; logged: number }>(
        `SELECT count(*) FILTER (WHERE ack_state = 'acknowledged')::int AS acked, count(*) FILTER (WHERE ack_state <> 'acknowledged')::int AS unacked,
                (SELECT count(*)::int FROM alerting.alert_history WHERE action = 'acknowledged') AS logged
           FROM alerting.alerts`,
      )
    ).rows;
    const answered = one.acknowledged + many.acknowledged;
    console.log(line(`Bulk acknowledge, ${BULK} ids a request, 1 client`, one));
    console.log(line(`Bulk acknowledge, ${BULK} ids a request, ${CLIENTS} clients`, many));
    console.log(line(`One by one (POST /_alerting/alerts/<id>/_ack), 1 client`, single));
    console.log(`Bulk over one by one, 1 client: ${(rate(one) / rate(single)).toFixed(0)}× the alerts acknowledged per second`);
    console.log(
      `Checks: bulk answers' acknowledged summed to ${answered.toLocaleString("en")} of ${ALERTS.toLocaleString("en")}; ` +
        `${counts.acked.toLocaleString("en")} of ${total.toLocaleString("en")} seeded alerts acknowledged (${counts.unacked} not), ` +
        `${counts.logged.toLocaleString("en")} history entries`,
    );
    return answered === ALERTS && counts.acked === total && counts.unacked === 0 && counts.logged === total;
  } finally {
    await pg.end().catch(() => undefined);
    await t.stop();
  }
}
