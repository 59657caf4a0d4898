/**
 * `npm run bench:storage-codec`: what the historian's chunk codec (lib/historian/codec.ts) makes
 * of a reading, and how fast, on one core. No server needed.
 *   1. Bytes per reading (encoded chunk bytes / readings), chunks of one series and one hour, on
 *      the signals scripts/simulate.ts sends, each as a 1 Hz series: process values by unit and an
 *      energy monitor's kWh counter, kW, V and A (decimals at the sensor's resolution, 0.001),
 *      and a pump's run state (a boolean, 0/1); then all of them with the timestamps a real
 *      gateway's clock gives (±BENCH_CODEC_JITTER_MS around each second); values computed in
 *      binary that no decimal holds (°C·1.8 + 32 unrounded); random doubles in [0, 1); random
 *      64-bit patterns. The script exports none of its generators, so they are made again here
 *      with a seeded generator: the same model, the same figures on every run.
 *   2. Encode and decode throughput, readings/s of one core, best of BENCH_CODEC_ROUNDS.
 * Targets: at most 4 B a reading all-in on ~1 Hz sensor data (the codec alone well under it),
 * at most 12 B on random doubles.
 *
 * Env: BENCH_CODEC_HOURS (24), BENCH_CODEC_ROUNDS (5), BENCH_CODEC_JITTER_MS (20).
 */
import { decodeChunk, encodeChunk, type SeriesChunk } from "../lib/historian/codec";
import { DAY_MS, HOUR_MS } from "../lib/time";
import { seeded } from "../test/helpers/random";

const HOURS = Number(process.env.BENCH_CODEC_HOURS ?? 24);
const ROUNDS = Number(process.env.BENCH_CODEC_ROUNDS ?? 5);
const JITTER_MS = Number(process.env.BENCH_CODEC_JITTER_MS ?? 20);
const START = Date.UTC(2026, 10, 2);
const PER_HOUR = 3600;

/** Seeded (test/helpers/random.ts): every run measures the same readings. */
const random = seeded(29);
/** A double in [0, 1) with all 53 bits random, as Math.random gives (the generator's own have 32). */
const random53 = () => (Math.floor(random() * 2 ** 26) * 2 ** 27 + Math.floor(random() * 2 ** 27)) / 2 ** 53;
/** Standard normal noise (Box-Muller), as the simulator's. */
const gauss = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
/** The simulator's sensor resolution: three decimals. */
const round = (x: number) => Math.round(x * 1000) / 1000;
/** The simulator's swing, -1 to 1: a 10-minute wander on the day's load cycle. */
const drift = (t: number, phase: number) => 0.6 * Math.sin((2 * Math.PI * t) / 600_000 + phase) + 0.4 * Math.sin((2 * Math.PI * t) / DAY_MS + phase);

type Signal = (t: number) => number;

/** A process value of the simulator's levelOf: level, spread by drift, a quarter of the spread as noise. */
const processValue = (level: number, spread: number, phase: number): Signal => (t) => round(level + spread * drift(t, phase) + (spread / 4) * gauss());

/**
 * An energy monitor's four tags, made together second by second as the simulator makes them (kW
 * and V drive the counter and the current): HOURS of them, looked up by time.
 */
function energyMonitor(): Record<string, Signal> {
  const seconds = HOURS * PER_HOUR;
  const kwh: number[] = [];
  const kw: number[] = [];
  const v: number[] = [];
  let counter = 12_000 + random() * 1000;
  for (let s = 0; s < seconds; s++) {
    const t = START + s * 1000;
    kw.push(55 + 20 * drift(t, 0.3) + 2 * gauss());
    v.push(400 + 3 * drift(t, 1.3) + 0.5 * gauss());
    counter += kw[s]! / 3600;
    kwh.push(counter);
  }
  const at = (t: number) => Math.round((t - START) / 1000);
  return {
    "energy kWh (counter)": (t) => round(kwh[at(t)]!),
    "energy kW": (t) => round(kw[at(t)]!),
    "energy V": (t) => round(v[at(t)]!),
    "energy A": (t) => round((kw[at(t)]! * 1000) / (Math.sqrt(3) * v[at(t)]! * 0.9)),
  };
}

/** A pump's run state: on and off for 5 to 60 minutes at a time. */
function runState(): Signal {
  let on = 1;
  let until = 0;
  return (t) => {
    if (t >= until) {
      on = 1 - on;
      until = t + (5 + 55 * random()) * 60_000;
    }
    return on;
  };
}

/** The simulator's signals, each new (the counter and the run state keep state from one second to the next). */
const simulator = (): Record<string, Signal> => ({
  "pressure bar": processValue(4.5, 0.4, 0.1),
  "temperature °C": processValue(62, 4, 0.7),
  "vibration mm/s": processValue(2.2, 0.6, 1.9),
  "vibration g": processValue(0.4, 0.1, 2.3),
  "flow m³/h": processValue(120, 10, 2.9),
  "speed rpm": processValue(1480, 5, 3.1),
  "valve %": processValue(70, 8, 4.2),
  ...energyMonitor(),
  "run state (0/1)": runState(),
});

/** HOURS of one reading a second, cut into hour chunks; `jitter` moves each timestamp by up to ±JITTER_MS. */
function hourly(signal: Signal, jitter = false): SeriesChunk[] {
  return Array.from({ length: HOURS }, (_, h) => {
    const timestamps: number[] = [];
    const values: number[] = [];
    for (let s = 0; s < PER_HOUR; s++) {
      const t = START + h * HOUR_MS + s * 1000;
      timestamps.push(jitter ? t + Math.round((random() * 2 - 1) * JITTER_MS) : t);
      values.push(signal(t));
    }
    return { timestamps, values };
  });
}

const bitPatterns = (): Signal => {
  const view = new DataView(new ArrayBuffer(8));
  return () => {
    view.setUint32(0, random() * 2 ** 32);
    view.setUint32(4, random() * 2 ** 32);
    return view.getFloat64(0);
  };
};

interface Case {
  name: string;
  chunks: SeriesChunk[];
}

const simulatorCases: Case[] = Object.entries(simulator()).map(([name, signal]) => ({ name, chunks: hourly(signal) }));
const allSimulator = simulatorCases.flatMap((c) => c.chunks);
const temperature = processValue(62, 4, 0.7);
const cases: Case[] = [
  ...simulatorCases.map((c) => ({ name: `  ${c.name}`, chunks: c.chunks })),
  { name: "simulator, all signals", chunks: allSimulator },
  { name: `simulator, all, timestamps ±${JITTER_MS} ms`, chunks: Object.values(simulator()).flatMap((signal) => hourly(signal, true)) },
  { name: "computed (°C·1.8 + 32, unrounded)", chunks: hourly((t) => temperature(t) * 1.8 + 32) },
  { name: "random doubles in [0, 1)", chunks: hourly(random53) },
  { name: "random 64-bit patterns", chunks: hourly(bitPatterns()) },
];

function bytesPerReading(chunks: SeriesChunk[]): { all: number; timestamps: number } {
  let bytes = 0;
  let timestampBytes = 0;
  let readings = 0;
  for (const c of chunks) {
    const encoded = encodeChunk(c.timestamps, c.values);
    const back = decodeChunk(encoded);
    if (!back.values.every((v, i) => Object.is(v, c.values[i]) || (Number.isNaN(v) && Number.isNaN(c.values[i]))) || !back.timestamps.every((t, i) => t === c.timestamps[i])) {
      throw new Error("a chunk did not read back exactly");
    }
    bytes += encoded.length;
    // What the timestamps alone take: the same chunk with a constant value (which costs next to nothing).
    timestampBytes += encodeChunk(c.timestamps, new Array<number>(c.values.length).fill(0)).length;
    readings += c.values.length;
  }
  return { all: bytes / readings, timestamps: timestampBytes / readings };
}

/** Readings per second of one core: the best of ROUNDS passes over every chunk. */
function throughput(chunks: SeriesChunk[]): { encode: number; decode: number } {
  const readings = chunks.reduce((n, c) => n + c.values.length, 0);
  const encoded = chunks.map((c) => encodeChunk(c.timestamps, c.values));
  let encodeMs = Infinity;
  let decodeMs = Infinity;
  for (let r = 0; r < ROUNDS; r++) {
    let t0 = performance.now();
    for (const c of chunks) encodeChunk(c.timestamps, c.values);
    encodeMs = Math.min(encodeMs, performance.now() - t0);
    t0 = performance.now();
    for (const e of encoded) decodeChunk(e);
    decodeMs = Math.min(decodeMs, performance.now() - t0);
  }
  return { encode: (readings / encodeMs) * 1000, decode: (readings / decodeMs) * 1000 };
}

const pad = (text: string, width: number) => text.padEnd(width);
const num = (x: number, digits = 2) => x.toFixed(digits).padStart(8);
const rate = (x: number) => `${(x / 1e6).toFixed(2)} M/s`.padStart(11);

function main(): void {
  console.log(`Historian codec: chunks of one series and one hour at 1 Hz, ${HOURS} h a series; Node ${process.version}`);
  console.log(`${pad("series", 40)}  B/reading  timestamps`);
  for (const c of cases) {
    const b = bytesPerReading(c.chunks);
    console.log(`${pad(c.name, 40)}  ${num(b.all)}   ${num(b.timestamps)}`);
  }
  console.log(`\nThroughput, one core, best of ${ROUNDS}`);
  console.log(`${pad("series", 40)}     encode      decode`);
  for (const c of cases.filter((x) => !x.name.startsWith("  "))) {
    const t = throughput(c.chunks);
    console.log(`${pad(c.name, 40)}  ${rate(t.encode)} ${rate(t.decode)}`);
  }
}

main();
