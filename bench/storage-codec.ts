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
import { signals } from "./signals";

const HOURS = Number(process.env.BENCH_CODEC_HOURS ?? 24);
const ROUNDS = Number(process.env.BENCH_CODEC_ROUNDS ?? 5);
const JITTER_MS = Number(process.env.BENCH_CODEC_JITTER_MS ?? 20);
const START = Date.UTC(2026, 10, 2);

const { random53, processValue, simulator, hourly, bitPatterns } = signals(29, START, HOURS, JITTER_MS);

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
