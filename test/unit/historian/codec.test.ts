/**
 * The historian's chunk codec (lib/historian/codec.ts): whatever a series holds, its chunk reads
 * back as the same float64 bit patterns at the same milliseconds, in the order given; a chunk
 * cut short or changed throws instead of answering other readings. Property-style: thousands of
 * chunks from a seeded generator (test/helpers/random.ts), each failure naming its seed.
 */
import { CorruptChunkError, decodeChunk, encodeChunk, summarizeChunk } from "../../../lib/historian/codec";
import { seeded } from "../../helpers/random";

type Random = () => number;

const DATE_MAX_MS = 8.64e15;
const NOW = Date.UTC(2026, 10, 27);

/** Float64 values every chunk must keep bit for bit: the signs of zero, subnormals, the ends of the range. */
const EXTREMES = [
  0, -0, Number.MIN_VALUE, -Number.MIN_VALUE, 2.225073858507201e-308 /* largest subnormal */, -2.2250738585072014e-308 /* smallest normal */,
  Number.MAX_VALUE, -Number.MAX_VALUE, Infinity, -Infinity, Number.EPSILON, Number.MAX_SAFE_INTEGER, 2 ** 53, -(2 ** 60), 1e-300, 0.1 + 0.2, NaN,
];

/** A value's float64 bits as hex, so that -0 and +0 differ and a subnormal shows; NaN as one word (payloads are not kept). */
function bits(values: ArrayLike<number>): string[] {
  const view = new DataView(new ArrayBuffer(8));
  return Array.from(values, (v) => {
    if (Number.isNaN(v)) return "NaN";
    view.setFloat64(0, v);
    return view.getBigUint64(0).toString(16).padStart(16, "0");
  });
}

const int = (random: Random, below: number) => Math.floor(random() * below);
const pick = <T>(random: Random, list: readonly T[]): T => list[int(random, list.length)]!;

/** Any 64-bit pattern, NaNs included. */
function anyDouble(random: Random): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setUint32(0, random() * 2 ** 32);
  view.setUint32(4, random() * 2 ** 32);
  return view.getFloat64(0);
}

const VALUES: Record<string, (random: Random, n: number) => number[]> = {
  "random bit patterns": (r, n) => Array.from({ length: n }, () => anyDouble(r)),
  "decimal sensor values": (r, n) => {
    const decimals = int(r, 7);
    const scale = 10 ** decimals;
    let level = (r() - 0.5) * 10 ** int(r, 6);
    return Array.from({ length: n }, () => Math.round((level += (r() - 0.5) * 3) * scale) / scale);
  },
  "sums no decimal holds (0.1 + 0.2)": (r, n) => Array.from({ length: n }, () => int(r, 100) / 10 + int(r, 100) / 10),
  "computed in binary (°C·1.8 + 32)": (r, n) => Array.from({ length: n }, () => (Math.round(r() * 10_000) / 100) * 1.8 + 32),
  counters: (r, n) => {
    let count = int(r, 1e9);
    return Array.from({ length: n }, () => (count += int(r, 20)));
  },
  "decimal counters (kWh)": (r, n) => {
    let kwh = r() * 1e5;
    return Array.from({ length: n }, () => Math.round((kwh += r() / 50) * 1000) / 1000);
  },
  "booleans (0/1)": (r, n) => {
    let on = int(r, 2);
    return Array.from({ length: n }, () => (r() < 0.05 ? (on = 1 - on) : on));
  },
  constant: (r, n) => new Array<number>(n).fill(r() < 0.5 ? pick(r, EXTREMES) : Math.round(r() * 1e4) / 100),
  extremes: (r, n) => Array.from({ length: n }, () => pick(r, EXTREMES)),
  "decimals with a few extremes among them": (r, n) => Array.from({ length: n }, () => (r() < 0.1 ? pick(r, EXTREMES) : Math.round(r() * 1e5) / 100)),
  "tiny and huge magnitudes": (r, n) => Array.from({ length: n }, () => (r() - 0.5) * 10 ** (int(r, 600) - 300)),
};

const TIMESTAMPS: Record<string, (random: Random, n: number) => number[]> = {
  "1 Hz": (r, n) => {
    const start = NOW - int(r, 1e9);
    return Array.from({ length: n }, (_, i) => start + i * 1000);
  },
  "1 Hz from a jittery clock": (r, n) => {
    const start = NOW - int(r, 1e9);
    return Array.from({ length: n }, (_, i) => start + i * 1000 + int(r, 41) - 20);
  },
  "irregular, equal ones among them": (r, n) => {
    let t = NOW - int(r, 1e9);
    return Array.from({ length: n }, () => (t += r() < 0.2 ? 0 : int(r, 5000)));
  },
  "out of order": (r, n) => Array.from({ length: n }, () => NOW - int(r, 3_600_000)),
  "large gaps": (r, n) => {
    let t = -int(r, 2 ** 40);
    return Array.from({ length: n }, () => (t += int(r, 2 ** 40)));
  },
  "negative (before 1970)": (r, n) => {
    const start = -int(r, 1e12);
    return Array.from({ length: n }, (_, i) => start - i * int(r, 100));
  },
  "the ends of a JavaScript date": (r, n) => Array.from({ length: n }, () => pick(r, [-DATE_MAX_MS, DATE_MAX_MS, 0, -1, 1])),
  "any safe integer": (r, n) => Array.from({ length: n }, () => Math.round((r() * 2 - 1) * Number.MAX_SAFE_INTEGER)),
};

/** Lengths a chunk has: empty, one reading, two, three, short, and up to most of an hour at 1 Hz. */
const length = (r: Random) => pick(r, [0, 1, 2, 3, int(r, 50), int(r, 500), int(r, 500), int(r, 3600)]);

/** The same float64 values, bit for bit: Object.is tells -0 from +0 and one double from any other; NaN is NaN (payloads are not kept). */
const sameValue = (a: number, b: number) => Object.is(a, b) || (Number.isNaN(a) && Number.isNaN(b));

/** Encodes and decodes; the difference as a sentence, or undefined when every reading came back. */
function roundTrip(timestamps: number[], values: number[]): string | undefined {
  const back = decodeChunk(encodeChunk(timestamps, values));
  if (back.timestamps.length !== timestamps.length || back.values.length !== values.length) return `${back.values.length} readings back of ${values.length}`;
  const t = back.timestamps.findIndex((ts, i) => ts !== timestamps[i]);
  if (t >= 0) return `timestamp ${t}: ${back.timestamps[t]} for ${timestamps[t]}`;
  const v = back.values.findIndex((x, i) => !sameValue(x, values[i]!));
  if (v >= 0) return `value ${v}: ${bits([back.values[v]!])[0]} (${back.values[v]}) for ${bits([values[v]!])[0]} (${values[v]})`;
  return undefined;
}

describe("encodeChunk and decodeChunk", () => {
  it("read back every value's bits and every timestamp, in order, over thousands of random chunks of each kind", () => {
    const failures: string[] = [];
    let readings = 0;
    let seed = 0;
    for (const [valueKind, makeValues] of Object.entries(VALUES)) {
      for (const [timeKind, makeTimestamps] of Object.entries(TIMESTAMPS)) {
        for (let chunk = 0; chunk < 30; chunk++) {
          const r = seeded(++seed);
          const n = length(r);
          const timestamps = makeTimestamps(r, n);
          const values = makeValues(r, n);
          const wrong = roundTrip(timestamps, values);
          if (wrong) failures.push(`${valueKind} at ${timeKind}, n=${n}, seed ${seed}: ${wrong}`);
          readings += n;
        }
      }
    }
    expect(failures).toEqual([]);
    expect(seed).toBe(Object.keys(VALUES).length * Object.keys(TIMESTAMPS).length * 30);
    expect(readings).toBeGreaterThan(500_000);
  });

  it("keeps -0 apart from +0, and every extreme, alone and beside its neighbours", () => {
    for (const v of EXTREMES) {
      expect(roundTrip([NOW], [v])).toBeUndefined();
      expect(roundTrip([NOW, NOW + 1, NOW + 2], [1.5, v, 1.5])).toBeUndefined();
      expect(roundTrip([NOW, NOW + 1], [v, v])).toBeUndefined();
    }
    const back = decodeChunk(encodeChunk([1, 2, 3, 4], [-0, 0, -0, 23.47]));
    expect(back.values.map((v) => Object.is(v, -0))).toEqual([true, false, true, false]);
    expect(back.values[3]).toBe(23.47);
  });

  it("keeps an empty chunk empty and a single reading as it was", () => {
    expect(decodeChunk(encodeChunk([], []))).toEqual({ timestamps: [], values: [] });
    expect(decodeChunk(encodeChunk([-1], [Number.MIN_VALUE]))).toEqual({ timestamps: [-1], values: [Number.MIN_VALUE] });
  });

  it("takes a few bytes a reading of decimal sensor values at 1 Hz, and at most 9 of random bit patterns", () => {
    const r = seeded(29);
    const timestamps = Array.from({ length: 3600 }, (_, i) => NOW + i * 1000);
    let level = 62;
    const sensor = timestamps.map(() => Math.round((level += (r() - 0.5) * 0.2) * 1000) / 1000);
    expect(encodeChunk(timestamps, sensor).length / 3600).toBeLessThan(2.5);
    let on = 1;
    const runState = timestamps.map(() => (r() < 0.01 ? (on = 1 - on) : on));
    expect(encodeChunk(timestamps, runState).length / 3600).toBeLessThan(0.1);
    expect(encodeChunk(timestamps, timestamps.map(() => anyDouble(r))).length / 3600).toBeLessThan(9);
  });

  it("refuses readings it could not give back: unequal lengths, a timestamp that is not a safe integer", () => {
    expect(() => encodeChunk([1, 2], [1])).toThrow(RangeError);
    for (const ts of [1.5, NaN, Infinity, 2 ** 53, -(2 ** 53)]) expect(() => encodeChunk([0, ts], [1, 2])).toThrow(/timestamp 1 .* is not an integer number of ms/);
  });
});

describe("a damaged chunk", () => {
  const r = seeded(7);
  const chunks: Record<string, { timestamps: number[]; values: number[] }> = {
    "decimal values": { timestamps: Array.from({ length: 120 }, (_, i) => NOW + i * 1000), values: Array.from({ length: 120 }, () => Math.round(r() * 1e5) / 1000) },
    "random bit patterns": { timestamps: Array.from({ length: 40 }, () => NOW + int(r, 1e6)), values: Array.from({ length: 40 }, () => anyDouble(r)) },
    "timestamps at the ends of a date": { timestamps: [-DATE_MAX_MS, DATE_MAX_MS, 0], values: [1, -0, Infinity] },
    empty: { timestamps: [], values: [] },
  };

  /** What decoding gives: the error's message, "the same readings", or a sentence saying it answered others. */
  function outcome(bytes: Uint8Array, original?: { timestamps: number[]; values: number[] }): string {
    try {
      const back = decodeChunk(bytes);
      const same =
        original &&
        back.values.length === original.values.length &&
        back.values.every((v, i) => sameValue(v, original.values[i]!)) &&
        back.timestamps.every((t, i) => t === original.timestamps[i]);
      return same ? "the same readings" : `answered ${back.values.length} other readings`;
    } catch (err) {
      return err instanceof CorruptChunkError ? err.message : `threw ${String(err)}`;
    }
  }
  const CLEAR = /^historian chunk is corrupt: \S/;

  // A few bits zstd never reads (its frame header's unused bit) change nothing: those give back the
  // very readings encoded; every other change throws.
  it.each(Object.keys(chunks))("throws a clear error for a changed byte, never answers other readings (%s)", (kind) => {
    const original = chunks[kind]!;
    const chunk = encodeChunk(original.timestamps, original.values);
    const wrong: string[] = [];
    let thrown = 0;
    for (let i = 0; i < chunk.length; i++) {
      for (const flip of [0x01, 0x10, 0x80, 0xff]) {
        const damaged = Buffer.from(chunk);
        damaged[i] ^= flip;
        const said = outcome(damaged, original);
        if (CLEAR.test(said)) thrown++;
        else if (said !== "the same readings") wrong.push(`byte ${i} ^ ${flip}: ${said}`);
      }
    }
    expect(wrong).toEqual([]);
    expect(thrown).toBeGreaterThan(chunk.length * 4 * 0.95);
  });

  it.each(Object.keys(chunks))("throws a clear error when cut short or followed by more bytes (%s)", (kind) => {
    const chunk = encodeChunk(chunks[kind]!.timestamps, chunks[kind]!.values);
    for (let cut = 0; cut < chunk.length; cut++) expect(outcome(chunk.subarray(0, cut))).toMatch(CLEAR);
    expect(outcome(Buffer.concat([chunk, Buffer.from([0])]))).toMatch(CLEAR);
    expect(outcome(Buffer.concat([chunk, chunk]))).toMatch(CLEAR);
  });

  it("names what is wrong: another version, bytes that are not a chunk", () => {
    const chunk = encodeChunk([1], [1]);
    expect(outcome(Buffer.concat([Buffer.from([2]), chunk.subarray(1)]))).toBe("historian chunk is corrupt: unknown version 2");
    expect(outcome(Buffer.from("not a chunk at all"))).toMatch(CLEAR);
    expect(outcome(new Uint8Array(0))).toBe("historian chunk is corrupt: it ends early");
  });
});

describe("summarizeChunk", () => {
  it("counts, bounds and sums the values; first and last follow the timestamps, not the order given", () => {
    // Out of order, with two readings at the earliest and two at the latest millisecond.
    const summary = summarizeChunk([3000, 1000, 5000, 1000, 5000, 2000], [7.5, 20.25, -1, 30, 40, 0.5]);
    expect(summary).toEqual({ count: 6, min: -1, max: 40, sum: 97.25, first: 20.25, last: 40, start: 1000, end: 5000 });
  });

  it("is all null for an empty chunk, and the reading itself for one", () => {
    expect(summarizeChunk([], [])).toEqual({ count: 0, min: null, max: null, sum: null, first: null, last: null, start: null, end: null });
    expect(summarizeChunk([-5], [-0])).toEqual({ count: 1, min: -0, max: -0, sum: -0, first: -0, last: -0, start: -5, end: -5 });
  });

  it("gives the same figures for a chunk's readings before and after the codec", () => {
    const r = seeded(11);
    const timestamps = Array.from({ length: 500 }, () => NOW + int(r, 3_600_000));
    const values = timestamps.map(() => Math.round(r() * 1e6) / 1e3);
    const back = decodeChunk(encodeChunk(timestamps, values));
    expect(summarizeChunk(back.timestamps, back.values)).toEqual(summarizeChunk(timestamps, values));
  });
});
