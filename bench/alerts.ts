/**
 * `npm run bench:alerts`: alert latency under load, in the embedded default (one process, the
 * PostgreSQL-log stream adapter) unless BENCH_ALERTS_TRANSPORTER=nats://… is set.
 *
 * - 10 condition-free gateways, each with 10 monitors (tags temp, vib) and one watcher of 100
 *   triggers (1,000 in all), thresholds the background never reaches;
 * - background: every gateway posts a batch every 500 ms (BENCH_ALERTS_TICK_MS) to the ingestion
 *   API, 10,000 readings/s in all (BENCH_ALERTS_RATE): 20 batches of 500 readings a second;
 * - probes: on one gateway at a time, a reading past a probe trigger's threshold, then one
 *   1,001 ms later (by its timestamp) that completes the trigger's 1 s duration; the latency is from
 *   that request's answer to the alert row being visible in PostgreSQL (polled every 2 ms). A cold
 *   reading then closes the alert for the next probe. Probes are BENCH_ALERTS_PROBE_GAP_MS apart
 *   (250), so that they sample the background over tens of seconds; their timestamps step 3 s
 *   from a few minutes back, ending in the past, as a gateway catching up would send them.
 *
 * Reports p50/p99 latency, the background rate achieved, and checks that each probe opened
 * exactly one alert, that each closed, and the background none. Target on the 2-core machine: p99
 * under 500 ms.
 *
 * Case (c), `latency-hysteresis`: the same with every one of the 1,000 triggers given a deadband
 * (BENCH_ALERTS_DEADBAND, "2") and a clear_delay (BENCH_ALERTS_CLEAR_DELAY_S, 2 s), and the probe's
 * close adapted to them (see closeProbe).
 *
 * Env: BENCH_ALERTS_RATE (10000), BENCH_ALERTS_PROBES (100), BENCH_ALERTS_WARMUP_S (5),
 * BENCH_ALERTS_TICK_MS (500), BENCH_ALERTS_PROBE_GAP_MS (250),
 * BENCH_ALERTS_DIAG=1 (prints the stream's backlog each second before the probes).
 * Case (a), the alarm KPI over a million alerts, is bench/alerts-kpi.ts (BENCH_ALERTS_CASES=kpi alone);
 * case (b), bulk acknowledge, is bench/alerts-ack.ts (BENCH_ALERTS_CASES=ack alone);
 * `scale`, one alerting replica against two over NATS, is bench/alerts-scale.ts (BENCH_ALERTS_CASES=scale alone).
 */
import { Client } from "pg";
import { startTestNode } from "../test/helpers/node";
import { ackBench } from "./alerts-ack";
import { scaleBench } from "./alerts-scale";
import { create, createPlace, pct, sleep } from "./alerts-common";
import { kpiBench } from "./alerts-kpi";

const RATE = Number(process.env.BENCH_ALERTS_RATE ?? 10_000);
const PROBES = Number(process.env.BENCH_ALERTS_PROBES ?? 100);
const WARMUP_S = Number(process.env.BENCH_ALERTS_WARMUP_S ?? 5);
const GATEWAYS = 10;
const MONITORS_PER_GATEWAY = 10;
const TICK_MS = Number(process.env.BENCH_ALERTS_TICK_MS ?? 500);
const PROBE_GAP_MS = Number(process.env.BENCH_ALERTS_PROBE_GAP_MS ?? 250);
/** Probe timestamps step this much from one probe to the next, so one trigger's probes are GATEWAYS × this apart. */
const PROBE_STEP_MS = 3000;
const PROBE_THRESHOLD = 50;
const DEADBAND = Number(process.env.BENCH_ALERTS_DEADBAND ?? 2);
const CLEAR_DELAY_MS = Number(process.env.BENCH_ALERTS_CLEAR_DELAY_S ?? 2) * 1000;

interface Gateway {
  id: string;
  key: string;
  monitors: string[];
  watcher: string;
}

export interface LatencyOptions {
  /** Case (c): every trigger with `deadband` and `clear_delay`. */
  hysteresis: boolean;
}

export interface LatencyResult {
  p50: number;
  p99: number;
  /** Every probe opened exactly one alert that closed, and the background opened none. */
  ok: boolean;
}

/** The latency case; with `hysteresis`, case (c). */
async function latencyBench({ hysteresis }: LatencyOptions): Promise<LatencyResult> {
  // A probe's alert, from its first reading to the one that closes it (closeProbe).
  const PROBE_SPAN_MS = hysteresis ? 1003 + 2 * CLEAR_DELAY_MS : 1002;
  // It must have closed, by reading timestamps, before that trigger's next probe.
  if (PROBE_SPAN_MS >= GATEWAYS * PROBE_STEP_MS) throw new Error(`clear_delay ${CLEAR_DELAY_MS} ms outlasts a probe trigger's rotation`);
  const env: Record<string, string> = {};
  if (process.env.BENCH_ALERTS_TRANSPORTER) env.TRANSPORTER = process.env.BENCH_ALERTS_TRANSPORTER;
  const t = await startTestNode({ services: ["api", "auth", "config", "pipelines", "alerting"], env });
  const pg = new Client({ connectionString: t.db.url });
  await pg.connect();
  let stopLoad = false;
  const label = hysteresis ? `latency-hysteresis (deadband ${DEADBAND}, clear_delay ${CLEAR_DELAY_MS / 1000}s on every trigger)` : "latency";
  try {
    const { site, plant, fn } = await createPlace(t, "Bench");
    const gateways: Gateway[] = [];
    for (let g = 0; g < GATEWAYS; g++) {
      const monitors: string[] = [];
      for (let m = 0; m < MONITORS_PER_GATEWAY; m++) {
        const tags = [
          { tag_id: "temp", tag_name: "Temperature", tag_desc: "", tag_unit: "C" },
          { tag_id: "vib", tag_name: "Vibration", tag_desc: "", tag_unit: "mm/s" },
          ...(m === 0 ? [{ tag_id: "probe", tag_name: "Probe", tag_desc: "", tag_unit: "" }] : []),
        ];
        monitors.push((await create(t, "/_config/monitors", { monitor_name: `M${g}-${m}`, monitor_type: "process-monitor", function_id: fn, tags })).id);
      }
      const gw = await create(t, "/_config/pipelines/edge-server", {
        pipeline_name: `Gateway ${g}`,
        function_id: fn,
        data_type: "Process",
        data_source: "Edge IOT Gateway",
        data_source_subtype: "Modbus RTU",
        settings: { mac_address: `02:00:00:00:10:${g.toString(16).padStart(2, "0")}`, port: "/dev/ttyUSB0", stopbit: 1, bytesize: 8, parity: "N", baudrate: 9600, sampling_rate: 10 },
        gateway_firmware: { current_version: "2.1.0", previous_version: "2.0.0" },
        tags: [{ tag_name: "Temperature", tag_desc: "", tag_unit: "C", address: "40001", decode_bits: "16", decode_type: "float", scale: 1 }],
        registration: monitors.map((monitor_id, i) => ({ monitor_id, slave_id: String(i + 1), registered_by_asset: false })),
      });
      // 100 triggers: 5 on temp and 5 on vib of each monitor, except that monitor 0's first vib trigger is the probe.
      const triggers = monitors.flatMap((monitor_id, m) =>
        (["temp", "vib"] as const).flatMap((tag_id) =>
          [0, 1, 2, 3, 4].map((k) => {
            const probe = m === 0 && tag_id === "vib" && k === 0;
            return {
              id: probe ? "probe" : `${m}-${tag_id}-${k}`,
              name: probe ? "Probe" : `M${m} ${tag_id} over ${80 + k}`,
              minimum_duration: probe ? "1s" : "5s",
              condition: [{ comparison: ">", monitor_id, tag_id: probe ? "probe" : tag_id, threshold: String(probe ? PROBE_THRESHOLD : 80 + k) }],
              notifyTo: { email: true, sms: false, whatsapp: false, users: ["oncall@example.com"] },
              severity: 1 + (k % 3),
              trigger_relation: k % 2 ? "OR" : "AND",
              ...(hysteresis ? { deadband: String(DEADBAND), clear_delay: `${CLEAR_DELAY_MS / 1000}s` } : {}),
            };
          }),
        ),
      );
      const res = await t.http<string>("POST", "/_alerting/watchers", {
        body: { watcher_name: `Watch ${g}`, function_id: fn, plant_id: plant, site_id: site, gateway_id: gw.id, is_enabled: 1, triggers },
      });
      if (res.status !== 200) throw new Error(JSON.stringify(res.body));
      gateways.push({ id: gw.id, key: gw.ingest_key ?? "", monitors, watcher: /ID (\S+)\./.exec(res.body)![1] });
    }
    const [{ n: triggerCount }] = (await pg.query(`SELECT count(*)::int AS n FROM alerting.triggers`)).rows;
    console.log(`Case ${label}. Setup: ${GATEWAYS} gateways, ${GATEWAYS * MONITORS_PER_GATEWAY} monitors, ${triggerCount} triggers`);

    const post = async (g: Gateway, readings: unknown[]) => {
      const res = await fetch(`${t.baseUrl}/_ingest/pipelines/${g.id}/readings`, {
        method: "POST",
        headers: { authorization: `Bearer ${g.key}`, "content-type": "application/json" },
        body: JSON.stringify({ readings }),
      });
      const body = (await res.json()) as { accepted: number };
      if (res.status !== 200 || body.accepted !== readings.length) throw new Error(`ingest: ${res.status} ${JSON.stringify(body)}`);
    };

    /**
     * Closes the probe's alert, opened by the reading at `opened`. Plain: one cold reading.
     * Hysteresis: readings inside the deadband for a clear_delay (they still hold: without the
     * deadband the alert would close here), then below it for a clear_delay (the off-delay), so
     * the alert spans PROBE_SPAN_MS only if both work; all before the trigger's next probe
     * GATEWAYS × PROBE_STEP_MS on (checked above), which must open a new one.
     */
    const closeProbe = async (g: Gateway, opened: number) => {
      const probe = (dt: number, value: number) => post(g, [{ monitor_id: g.monitors[0], tag_id: "probe", ts: opened + dt, value }]);
      if (!hysteresis) return probe(1, 0);
      await probe(1, PROBE_THRESHOLD - DEADBAND / 2);
      await probe(1 + CLEAR_DELAY_MS, PROBE_THRESHOLD - DEADBAND / 2);
      await probe(2 + CLEAR_DELAY_MS, 0);
      await probe(2 + 2 * CLEAR_DELAY_MS, 0);
    };

    // Background load: per gateway, one batch per tick, readings spread over its 20 series.
    const perBatch = Math.max(1, Math.round((RATE * TICK_MS) / 1000 / GATEWAYS));
    let sent = 0;
    const loops = gateways.map(async (g, gi) => {
      let next = performance.now() + (gi * TICK_MS) / GATEWAYS;
      let seq = 0;
      while (!stopLoad) {
        const now = Date.now();
        const readings = Array.from({ length: perBatch }, (_, i) => {
          const series = i % (MONITORS_PER_GATEWAY * 2);
          return {
            monitor_id: g.monitors[series >> 1],
            tag_id: series & 1 ? "vib" : "temp",
            // Distinct, increasing timestamps per series within and across batches.
            ts: now - TICK_MS + Math.floor(i / (MONITORS_PER_GATEWAY * 2)),
            value: 20 + ((seq * 31 + i * 7) % 100) / 10,
          };
        });
        seq++;
        await post(g, readings);
        sent += readings.length;
        next += TICK_MS;
        const wait = next - performance.now();
        if (wait > 0) await sleep(wait);
        else next = performance.now();
      }
    });

    await sleep(WARMUP_S * 1000);
    if (process.env.BENCH_ALERTS_DIAG) {
      for (let i = 0; i < 10; i++) {
        const lag = await pg.query(
          `SELECT h.seq - g.position AS behind FROM streams.heads h JOIN streams.groups g ON g.stream = h.stream WHERE g.grp = 'alerting'`,
        );
        console.log(`stream lag: ${JSON.stringify(lag.rows)}, sent ${sent}`);
        await sleep(1000);
      }
    }
    const loadStart = performance.now();
    const sentAtStart = sent;

    const latencies: number[] = [];
    let probeTs = Date.now() - PROBES * PROBE_STEP_MS - 10_000;
    for (let p = 0; p < PROBES; p++) {
      const g = gateways[p % GATEWAYS];
      probeTs += PROBE_STEP_MS;
      if (p > 0) await sleep(PROBE_GAP_MS);
      const before = (await pg.query(`SELECT count(*)::int AS n FROM alerting.alerts WHERE watcher_id = $1 AND trigger_id = 'probe'`, [g.watcher])).rows[0].n;
      await post(g, [{ monitor_id: g.monitors[0], tag_id: "probe", ts: probeTs, value: 90 }]);
      await post(g, [{ monitor_id: g.monitors[0], tag_id: "probe", ts: probeTs + 1001, value: 91 }]);
      const answered = performance.now();
      for (;;) {
        const r = await pg.query(`SELECT count(*)::int AS n FROM alerting.alerts WHERE watcher_id = $1 AND trigger_id = 'probe'`, [g.watcher]);
        if (r.rows[0].n > before) break;
        if (performance.now() - answered > 30_000) {
          const state = (await pg.query(`SELECT state FROM alerting.triggers WHERE watcher_id = $1 AND trigger_id = 'probe'`, [g.watcher])).rows[0];
          throw new Error(`probe ${p}: no alert after 30 s; trigger state ${JSON.stringify(state)}; probe ts ${probeTs}`);
        }
        await sleep(2);
      }
      latencies.push(performance.now() - answered);
      await closeProbe(g, probeTs + 1001);
    }
    const loadS = (performance.now() - loadStart) / 1000;
    const rate = (sent - sentAtStart) / loadS;
    stopLoad = true;
    await Promise.all(loops);
    // The last probe's closing readings are still on their way: up to 10 s for every probe alert to close.
    const closing = performance.now() + 10_000;
    const activeProbes = async () => (await pg.query(`SELECT count(*)::int AS n FROM alerting.alerts WHERE trigger_id = 'probe' AND state = 'active'`)).rows[0].n as number;
    await sleep(2000);
    while ((await activeProbes()) > 0 && performance.now() < closing) await sleep(100);

    const probeAlerts = (await pg.query(`SELECT count(*)::int AS n FROM alerting.alerts WHERE trigger_id = 'probe'`)).rows[0].n;
    const spanned = (
      await pg.query(`SELECT count(*)::int AS n FROM alerting.alerts WHERE trigger_id = 'probe' AND state = 'closed' AND end_ts - start_ts = $1`, [PROBE_SPAN_MS])
    ).rows[0].n;
    const other = (await pg.query(`SELECT count(*)::int AS n FROM alerting.alerts WHERE trigger_id <> 'probe'`)).rows[0].n;
    const doubled = (await pg.query(`SELECT count(*)::int AS n FROM (SELECT start_ts FROM alerting.alerts GROUP BY watcher_id, trigger_id, start_ts HAVING count(*) > 1) d`)).rows[0].n;
    const p50 = pct(latencies, 0.5);
    const p99 = pct(latencies, 0.99);
    console.log(`Background: ${Math.round(rate).toLocaleString("en")} readings/s achieved (target ${RATE.toLocaleString("en")}) over ${loadS.toFixed(1)} s`);
    console.log(`Latency, ingestion answer of the completing reading -> alert row (${PROBES} probes): p50 ${p50.toFixed(0)} ms, p99 ${p99.toFixed(0)} ms, max ${Math.max(...latencies).toFixed(0)} ms`);
    console.log(
      `Alerts: ${probeAlerts} from ${PROBES} probes (missed ${Math.max(0, PROBES - probeAlerts)}, extra ${Math.max(0, probeAlerts - PROBES)}), ` +
        `${spanned} closed ${PROBE_SPAN_MS} ms after opening (expected ${PROBES}), ${other} from background (expected 0), ${doubled} doubled`,
    );
    return { p50, p99, ok: probeAlerts === PROBES && spanned === PROBES && other === 0 && doubled === 0 };
  } finally {
    stopLoad = true;
    await pg.end().catch(() => undefined);
    await t.stop();
  }
}

/**
 * BENCH_ALERTS_CASES: which cases run, comma-separated (default all): `latency` (above), `kpi` (a,
 * bench/alerts-kpi.ts), `ack` (b, bench/alerts-ack.ts), `latency-hysteresis` (c, above), `scale`
 * (bench/alerts-scale.ts: needs the machine's NATS and Redis).
 */
const ALL_CASES = ["latency", "latency-hysteresis", "kpi", "ack", "scale"];
const CASES = new Set((process.env.BENCH_ALERTS_CASES ?? ALL_CASES.join(",")).split(",").map((c) => c.trim()));

async function all() {
  const unknown = [...CASES].filter((c) => !ALL_CASES.includes(c));
  if (unknown.length) throw new Error(`BENCH_ALERTS_CASES: unknown ${unknown.join(", ")} (cases: ${ALL_CASES.join(", ")})`);
  const plain = CASES.has("latency") ? await latencyBench({ hysteresis: false }) : null;
  const hysteresis = CASES.has("latency-hysteresis") ? await latencyBench({ hysteresis: true }) : null;
  if (plain && hysteresis) {
    const fmt = (r: LatencyResult) => `p50 ${r.p50.toFixed(0)} ms, p99 ${r.p99.toFixed(0)} ms`;
    console.log(`Latency, same run: plain triggers ${fmt(plain)}; with deadband and clear_delay ${fmt(hysteresis)} (target p99 < 500 ms)`);
  }
  if ((plain && !plain.ok) || (hysteresis && !hysteresis.ok)) process.exitCode = 1;
  if (CASES.has("kpi") && !(await kpiBench())) process.exitCode = 1;
  if (CASES.has("ack") && !(await ackBench())) process.exitCode = 1;
  if (CASES.has("scale") && !(await scaleBench())) process.exitCode = 1;
}

all().catch((err) => {
  console.error(err);
  process.exit(1);
});
