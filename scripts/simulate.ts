/**
 * `npm run simulate -- --pipeline <id> --key <ingest key> [--url http://127.0.0.1:3000] [--rate 1]
 *                     [--waveform-every 30] [--run] [--backfill 30d [--step 60s]]`
 *
 * Behaves as an edge gateway against the ingestion API: fetches its configuration with its key,
 * sends heartbeats for its four components every 10 s, polls its actions every 2 s and acks
 * them (a start makes it stream, a stop makes it stop), and while running sends `--rate`
 * batches a second holding one reading of every tag of every monitor registered to it:
 *   - process values: a level by unit, a slow drift (10-minute swing) and noise;
 *   - energy monitors (`energy-monitor`, tags by unit): a rising kWh counter, kW around a
 *     load profile, V near 400, A from kW and V;
 *   - condition monitors: their tags as values, and every `--waveform-every` s a vibration
 *     capture per axis (x, y, z) whose spectrum has a running-speed peak (the asset's
 *     rotating_speed, else 1480 RPM) with harmonics, an inner race tone with its ±1x sidebands,
 *     and noise.
 * `--run` streams from the start without waiting for a start action.
 *
 * `--mqtt` makes it a Sparkplug B edge node instead (scripts/simulate-mqtt.ts, docs/sparkplug.md):
 * its configuration still comes from the ingestion API, its readings go over MQTT to `--broker`
 * (the service's front door by default, or the plant's broker the service is a host on).
 *
 * `--backfill <span>` first sends the history a gateway would have buffered: every tag at every
 * `--step` from now - span to now, oldest first, in batches of BACKFILL_BATCH readings through the
 * same ingestion API, with a triaxial capture of each condition monitor every hour; then it goes
 * on as above (heartbeats, actions, streaming once started). Values follow the same model, so a
 * month's trend shows the day's load cycle and the 10-minute swing in its extremes.
 *
 * Every batch of readings and every capture carries its own `Idempotency-Key`; one that fails
 * (no answer within REQUEST_TIMEOUT_MS, a lost connection, 409, 429 or 5xx) is sent again with
 * the same key and body after a growing wait, at most RETRIES times: stored once whatever was lost.
 */
import { randomUUID } from "node:crypto";
import { parseArgs } from "node:util";
import type { SparkplugGateway } from "./simulate-mqtt";

interface Args {
  pipeline: string;
  key: string;
  url: string;
  rate: number;
  waveformEvery: number;
  run: boolean;
  /** How far back to send history, ms (0: none). */
  backfill: number;
  step: number;
  /** As a Sparkplug B edge node over MQTT, to `broker`. */
  mqtt: boolean;
  broker: string;
  hostId: string;
  group: string;
}

interface MonitorConfig {
  monitor_id: string;
  monitor_name: string;
  monitor_type: string;
  asset_attributes: { rotating_speed?: number };
  tags: { tag_id: string; tag_name: string; tag_unit: string }[];
}

interface GatewayConfig {
  pipeline_id: string;
  pipeline_name: string;
  status: string;
  settings: { mac_address?: string };
  registration: { monitor_id: string; slave_id?: string | number | null }[];
  monitors: MonitorConfig[];
}

const USAGE = `usage: npm run simulate -- --pipeline <id> --key <ingest key> [--url http://127.0.0.1:3000] [--rate 1] [--waveform-every 30] [--run]
                            [--backfill 30d [--step 60s]]

  --pipeline <id>         the edge pipeline to act as
  --key <ingest key>      its ingest key (shown once, when the pipeline was created)
  --url <url>             the API (default: IMS_URL, else http://127.0.0.1:3000)
  --rate <n>              reading batches a second (default 1)
  --waveform-every <s>    seconds between vibration captures of each condition monitor (default 30; 0: none)
  --run                   stream at once, without waiting for a start action
  --backfill <span>       first send the history of every tag from now - span to now (units s, m, h, d: 30d, 12h),
                          with an hourly capture of each condition monitor; then go on as a gateway
  --step <span>           time between backfilled readings (default 60s)
  --mqtt                  be a Sparkplug B edge node over MQTT instead (docs/sparkplug.md): births, data by alias
                          --rate times a second, rebirth when asked, death on Ctrl-C
  --broker <url>          with --mqtt: the MQTT broker (default mqtt://127.0.0.1:MQTT_PORT, else 1883)
  --host-id <id>          with --mqtt: the primary host whose STATE to wait for (default MQTT_HOST_ID, else ims)
  --group <id>            with --mqtt: the Sparkplug group id (default Plant)
  -h, --help              this text`;

function parse() {
  return parseArgs({
    options: {
      pipeline: { type: "string" },
      key: { type: "string" },
      url: { type: "string", default: process.env.IMS_URL ?? "http://127.0.0.1:3000" },
      rate: { type: "string", default: "1" },
      "waveform-every": { type: "string", default: "30" },
      run: { type: "boolean", default: false },
      backfill: { type: "string" },
      step: { type: "string", default: "60s" },
      mqtt: { type: "boolean", default: false },
      broker: { type: "string", default: `mqtt://127.0.0.1:${process.env.MQTT_PORT ?? "1883"}` },
      "host-id": { type: "string", default: process.env.MQTT_HOST_ID ?? "ims" },
      group: { type: "string", default: "Plant" },
      help: { type: "boolean", short: "h", default: false },
    },
  });
}

const SPAN_UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `30d`, `12h`, `90m`, `60s` in ms; undefined when it is not a positive number with one of those units. */
function spanOf(text: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)([smhd])$/.exec(text.trim());
  const ms = m ? Math.round(Number(m[1]) * SPAN_UNITS[m[2]!]!) : 0;
  return ms > 0 ? ms : undefined;
}

/** A wrong option value: said with the usage, without a stack trace, as an unknown option is. */
function refuse(message: string): never {
  console.error(`${message}\n\n${USAGE}`);
  process.exit(2);
}

function args(): Args {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse();
  } catch (err) {
    // An unknown option or a missing value: say which, and how to call it, without a stack trace.
    console.error(`${(err as Error).message}\n\n${USAGE}`);
    process.exit(2);
  }
  const { values } = parsed;
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  if (!values.pipeline || !values.key) {
    console.error(USAGE);
    process.exit(2);
  }
  const url = URL.canParse(values.url) ? new URL(values.url) : null;
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) {
    // One line: the usage would bury it, and with --mqtt the broker is easily given here by mistake.
    console.error(`--url must be the service's HTTP API, as http://127.0.0.1:3000 (the MQTT broker is --broker); got "${values.url}"`);
    process.exit(2);
  }
  const rate = Number(values.rate);
  if (!(rate > 0)) refuse("--rate must be a positive number of batches a second");
  const step = spanOf(values.step);
  if (step === undefined || step < 1000) refuse("--step must be a time of 1s or more, as 60s, 5m or 1h");
  const backfill = values.backfill === undefined ? 0 : spanOf(values.backfill);
  if (backfill === undefined || (backfill > 0 && backfill < step)) refuse("--backfill must be a time of at least --step, as 30d, 12h or 90m");
  return {
    pipeline: values.pipeline,
    key: values.key,
    url: values.url.replace(/\/$/, ""),
    rate,
    waveformEvery: Number(values["waveform-every"]),
    run: values.run,
    backfill,
    step,
    mqtt: values.mqtt,
    broker: values.broker,
    hostId: values["host-id"],
    group: values.group,
  };
}

const a = args();
const base = `${a.url}/_ingest/pipelines/${a.pipeline}`;

/** An answer that is not 2xx; `status` undefined: none came (a lost connection, a timeout). */
class CallError extends Error {
  constructor(
    message: string,
    readonly status?: number,
    /** Why no answer came (ECONNREFUSED, "bad port"), when none did. */
    readonly reason?: string,
  ) {
    super(message);
  }
}

/** How long a request may go unanswered before it counts as lost (and is sent again, if it has a key). */
const REQUEST_TIMEOUT_MS = 30_000;

async function call<T>(method: string, path: string, body?: unknown, idempotencyKey?: string): Promise<T> {
  let res: Response;
  try {
    res = await fetch(base + path, {
      method,
      headers: {
        authorization: `Bearer ${a.key}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
        ...(idempotencyKey === undefined ? {} : { "idempotency-key": idempotencyKey }),
      },
      body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
  } catch (err) {
    // fetch's own error says only "fetch failed": the reason is its cause (ECONNREFUSED, "bad port").
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const reason = cause?.code ?? cause?.message ?? (err as Error).message;
    throw new CallError(`${method} ${path}: no answer (${reason})`, undefined, reason);
  }
  const text = await res.text().catch(() => "");
  if (!res.ok) throw new CallError(`${method} ${path}: ${res.status} ${text}`, res.status);
  return (text ? JSON.parse(text) : undefined) as T;
}

/** Sends after a failure, each after twice the wait before it (with jitter), up to BACKOFF_MAX_MS. */
const RETRIES = 6;
const BACKOFF_MS = 500;
const BACKOFF_MAX_MS = 10_000;

/** Worth sending again: no answer, in progress elsewhere (409), throttled, or the service's fault or absence. */
function retryable(err: unknown): boolean {
  if (!(err instanceof CallError)) return false;
  const { status } = err;
  return status === undefined || status === 409 || status === 429 || status >= 500;
}

/**
 * A batch or a capture, as a gateway must send it: one Idempotency-Key for it, and the same key
 * and bytes on every retry, so that a send whose answer was lost is not stored twice.
 */
async function send<T>(path: string, body: unknown): Promise<T> {
  const key = randomUUID();
  const text = JSON.stringify(body);
  for (let attempt = 1; ; attempt++) {
    try {
      return await call<T>("POST", path, text, key);
    } catch (err) {
      if (!retryable(err) || attempt > RETRIES) throw err;
      const wait = Math.round(Math.min(BACKOFF_MAX_MS, BACKOFF_MS * 2 ** (attempt - 1)) * (0.5 + Math.random() / 2));
      log(`${(err as Error).message}; sending again in ${wait} ms with the same key (${attempt}/${RETRIES})`);
      await new Promise((r) => setTimeout(r, wait));
    }
  }
}

const log = (msg: string) => console.log(`${new Date().toISOString()} ${msg}`);

/** Standard normal noise (Box-Muller). */
function gauss(): number {
  return Math.sqrt(-2 * Math.log(1 - Math.random())) * Math.cos(2 * Math.PI * Math.random());
}

/** A plausible level for a process value by its unit. */
function levelOf(unit: string): { level: number; spread: number } {
  const u = unit.toLowerCase();
  if (u === "bar") return { level: 4.5, spread: 0.4 };
  if (u === "c" || u === "°c" || u === "degc") return { level: 62, spread: 4 };
  if (u === "mm/s") return { level: 2.2, spread: 0.6 };
  if (u === "g") return { level: 0.4, spread: 0.1 };
  if (u.includes("m3/h") || u.includes("m³/h")) return { level: 120, spread: 10 };
  if (u === "rpm") return { level: 1480, spread: 5 };
  if (u === "%") return { level: 70, spread: 8 };
  return { level: 50, spread: 5 };
}

const started = Date.now();
/** A value's swing, -1 to 1: a 10-minute wander on the day's load cycle (UTC days), so a month's trend shows its days. */
const drift = (t: number, phase: number) =>
  0.6 * Math.sin((2 * Math.PI * (t - started)) / 600_000 + phase) + 0.4 * Math.sin((2 * Math.PI * t) / SPAN_UNITS.d! + phase);
const kwhCounters = new Map<string, number>();

/** One value of a tag at time t (ms). */
function valueOf(m: MonitorConfig, tag: MonitorConfig["tags"][number], t: number, dtS: number, phase: number): number {
  if (m.monitor_type === "energy-monitor") {
    const kw = 55 + 20 * drift(t, phase) + 2 * gauss();
    const v = 400 + 3 * drift(t, phase + 1) + 0.5 * gauss();
    switch (tag.tag_unit) {
      case "kWh": {
        const next = (kwhCounters.get(m.monitor_id) ?? 12000 + Math.random() * 1000) + (kw * dtS) / 3600;
        kwhCounters.set(m.monitor_id, next);
        return Math.round(next * 1000) / 1000;
      }
      case "kW":
        return round(kw);
      case "V":
        return round(v);
      case "A":
        return round((kw * 1000) / (Math.sqrt(3) * v * 0.9));
    }
  }
  const { level, spread } = levelOf(tag.tag_unit);
  return round(level + spread * drift(t, phase) + (spread / 4) * gauss());
}

const round = (x: number) => Math.round(x * 1000) / 1000;

const SAMPLE_RATE = 2560;
const SAMPLES = 4096;

/** A vibration capture: running speed with 2x and 3x harmonics, an inner race tone with its sidebands, noise; amplitudes differ by axis. */
function waveform(m: MonitorConfig, axis: "x" | "y" | "z"): number[] {
  const rpm = Number(m.asset_attributes?.rotating_speed) || 1480;
  const f0 = rpm / 60;
  const gain = { x: 1, y: 0.8, z: 0.5 }[axis];
  const out = new Array<number>(SAMPLES);
  for (let i = 0; i < SAMPLES; i++) {
    const t = i / SAMPLE_RATE;
    out[i] = round(
      gain *
        (2.0 * Math.sin(2 * Math.PI * f0 * t) +
          0.8 * Math.sin(2 * Math.PI * 2 * f0 * t + 0.3) +
          0.35 * Math.sin(2 * Math.PI * 3 * f0 * t + 1.1) +
          // An inner race defect as it shows: its tone (5.43x, BPFI) modulated by the running speed,
          // so with ±1x sidebands (the service calls a lone tone weak, docs/api-tour.md).
          0.15 * (1 + 0.8 * Math.cos(2 * Math.PI * f0 * t)) * Math.sin(2 * Math.PI * 5.43 * f0 * t) +
          0.05 * gauss()),
    );
  }
  return out;
}

interface Reading {
  monitor_id: string;
  tag_id: string;
  ts: number;
  value: number;
}

interface IngestAnswer {
  accepted: number;
  rejected: { index: number; reason: string }[];
}

/** One triaxial capture of a condition monitor: its three axes share one timestamp, as a triaxial sensor's do. */
async function capture(m: MonitorConfig, ts: number): Promise<void> {
  const tag = m.tags.find((t) => /mm\/s|g$/i.test(t.tag_unit))?.tag_name ?? m.tags[0]?.tag_name ?? "vibration";
  for (const axis of ["x", "y", "z"] as const) {
    await send("/waveforms", { monitor_id: m.monitor_id, tag, axis, ts, sample_rate_hz: SAMPLE_RATE, samples: waveform(m, axis) });
  }
}

/**
 * Readings a backfill request carries: the route takes up to 10,000, but each batch also travels
 * as one stream message, which has to stay well under NATS's 1 MB payload (about 100 bytes a reading).
 */
const BACKFILL_BATCH = 5000;
const BACKFILL_CAPTURE_EVERY_MS = SPAN_UNITS.h!;
const PROGRESS_EVERY_MS = 10_000;

/** Sends every tag's history from now - span to now at `step`, oldest first, and says how many readings went. */
async function backfill(config: GatewayConfig, phases: Map<string, number>, span: number, step: number): Promise<void> {
  const t0 = Date.now();
  const end = t0;
  const start = end - span;
  const tags = config.monitors.flatMap((m) => m.tags.map((tag) => ({ m, tag, phase: phases.get(`${m.monitor_id}/${tag.tag_id}`) ?? 0 })));
  const vibrating = a.waveformEvery > 0 ? config.monitors.filter((m) => m.monitor_type === "condition-monitor") : [];
  const instants = Math.floor(span / step) + 1;
  const iso = (ms: number) => new Date(ms).toISOString();
  log(
    `backfill: ${iso(start)} to ${iso(end)} every ${step / 1000} s: ${instants} instants x ${tags.length} tags` +
      (vibrating.length ? `, an hourly capture of ${vibrating.length} condition monitor(s)` : ""),
  );
  let batch: Reading[] = [];
  let accepted = 0;
  let rejected = 0;
  let captures = 0;
  let firstRejection = "";
  let reported = t0;
  const flush = async () => {
    if (batch.length === 0) return;
    const res = await send<IngestAnswer>("/readings", { readings: batch });
    accepted += res.accepted;
    rejected += res.rejected.length;
    if (res.rejected.length && !firstRejection) firstRejection = res.rejected[0]!.reason;
    batch = [];
  };
  let nextCapture = start;
  for (let ts = start; ts <= end; ts += step) {
    for (const x of tags) {
      batch.push({ monitor_id: x.m.monitor_id, tag_id: x.tag.tag_id, ts, value: valueOf(x.m, x.tag, ts, step / 1000, x.phase) });
      if (batch.length === BACKFILL_BATCH) await flush();
    }
    if (vibrating.length && ts >= nextCapture) {
      for (const m of vibrating) await capture(m, ts);
      captures += vibrating.length;
      while (nextCapture <= ts) nextCapture += BACKFILL_CAPTURE_EVERY_MS;
    }
    if (Date.now() - reported >= PROGRESS_EVERY_MS) {
      reported = Date.now();
      log(`backfill: up to ${iso(ts)}, ${accepted} readings accepted`);
    }
  }
  await flush();
  const seconds = ((Date.now() - t0) / 1000).toFixed(1);
  log(
    `backfill done: ${accepted + rejected} readings sent, ${accepted} accepted, ${rejected} rejected` +
      (firstRejection ? ` (${firstRejection})` : "") +
      `; ${captures} captures; ${seconds} s`,
  );
}

/** The gateway as a Sparkplug edge node: each registered monitor a device named by its slave id, each tag a metric named by its tag name. */
function sparkplugGateway(config: GatewayConfig, phases: Map<string, number>): SparkplugGateway {
  const slaves = new Map(config.registration.map((r) => [r.monitor_id, r.slave_id === undefined || r.slave_id === null ? null : String(r.slave_id)]));
  const devices = config.monitors.flatMap((m) => {
    const slave_id = slaves.get(m.monitor_id);
    if (!slave_id) return [];
    const tags = m.tags.map((tag) => ({ name: tag.tag_name, value: (t: number, dtS: number) => valueOf(m, tag, t, dtS, phases.get(`${m.monitor_id}/${tag.tag_id}`) ?? 0) }));
    return [{ slave_id, tags }];
  });
  if (!config.settings.mac_address) refuse("--mqtt needs the pipeline's settings.mac_address: it is the edge node id");
  return { pipeline_id: config.pipeline_id, key: a.key, broker: a.broker, hostId: a.hostId, group: a.group, rate: a.rate, mac: config.settings.mac_address, devices, log };
}

async function main(): Promise<void> {
  const config = await call<GatewayConfig>("GET", "").catch((err: unknown) => {
    if (err instanceof CallError && err.status === undefined) throw new Error(`--url ${a.url}: no answer from the service's API there (${err.reason})`);
    throw err;
  });
  let running = a.run || config.status === "running";
  log(`gateway "${config.pipeline_name}" (${config.pipeline_id}): ${config.monitors.length} monitors, status ${config.status}${a.mqtt ? ", as a Sparkplug edge node" : running ? ", streaming" : ", waiting for a start action"}`);
  for (const m of config.monitors) log(`  ${m.monitor_type} "${m.monitor_name}": ${m.tags.map((t) => `${t.tag_name} [${t.tag_unit}]`).join(", ") || "no tags"}`);
  const phases = new Map(config.monitors.flatMap((m) => m.tags.map((t) => [`${m.monitor_id}/${t.tag_id}`, Math.random() * 2 * Math.PI] as const)));
  // History first, then the live gateway: the kWh counters rise through both in time order.
  if (a.backfill > 0) await backfill(config, phases, a.backfill, a.step);
  // Loaded only as an edge node: the HTTP gateway starts without the MQTT client.
  if (a.mqtt) return (await import("./simulate-mqtt.js")).simulateSparkplug(sparkplugGateway(config, phases));

  let sent = 0;
  let stopping = false;
  const timers: NodeJS.Timeout[] = [];
  const every = (ms: number, work: () => Promise<void>) => {
    const tick = () => void work().catch((err: unknown) => log(`error: ${(err as Error).message}`));
    tick();
    timers.push(setInterval(tick, ms));
  };

  every(10_000, async () => {
    const ts = Date.now();
    for (const component of ["gateway", "producer", "log_parser", "stasher"]) await call("POST", "/heartbeat", { component, ts });
  });

  every(2_000, async () => {
    const actions = await call<{ action_id: string; action: "start" | "stop" }[]>("GET", "/actions");
    for (const action of actions) {
      running = action.action === "start";
      await call("POST", `/actions/${action.action_id}`, { status: "completed" });
      log(`action ${action.action} acknowledged: ${running ? "streaming" : "stopped"}`);
    }
  });

  let last = Date.now();
  every(1000 / a.rate, async () => {
    if (!running) return;
    const now = Date.now();
    const dtS = (now - last) / 1000;
    last = now;
    const readings = config.monitors.flatMap((m) =>
      m.tags.map((tag) => ({ monitor_id: m.monitor_id, tag_id: tag.tag_id, ts: now, value: valueOf(m, tag, now, dtS, phases.get(`${m.monitor_id}/${tag.tag_id}`) ?? 0) })),
    );
    if (readings.length === 0) return;
    const res = await send<IngestAnswer>("/readings", { readings });
    sent += res.accepted;
    if (res.rejected.length) log(`rejected: ${JSON.stringify(res.rejected.slice(0, 3))}`);
  });

  if (a.waveformEvery > 0) {
    every(a.waveformEvery * 1000, async () => {
      if (!running) return;
      // Each timestamp of /_cm/fft/_timestamps has a spectrum on every axis.
      for (const m of config.monitors.filter((x) => x.monitor_type === "condition-monitor")) await capture(m, Date.now());
    });
  }

  timers.push(setInterval(() => running && log(`${sent} readings accepted so far`), 30_000));

  const stop = () => {
    if (stopping) return;
    stopping = true;
    for (const t of timers) clearInterval(t);
    log(`stopped; ${sent} readings accepted`);
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}

main().catch((err: unknown) => {
  console.error((err as Error).message);
  process.exit(1);
});
