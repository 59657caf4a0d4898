/**
 * The historian's chunk codec: one series' readings (epoch-ms timestamps, float64 values) in a
 * few bytes each, read back exactly: every value the same float64 bit pattern (-0, subnormals and
 * ±Infinity included), every timestamp the same millisecond, in the order they were given
 * (equal and out-of-order timestamps too). Pure: arrays in, bytes out, and back.
 * docs/architecture.md ("The historian's chunk format") describes the format; in short:
 *
 *   chunk       version (1 byte) · count (varint) · the frame's length (varint) · a zstd frame
 *               (with its checksum) of the body
 *   body        the count again (under the checksum), the timestamps' section, the values' section
 *   timestamps  DELTAS: the first as a float64, then each delta-of-delta as a zig-zag varint
 *               FLOATS: each as a float64 (only for a chunk spanning 2^50 ms, 35,000 years, or more)
 *   values      DECIMAL: e, the exceptions, then each value·10^e (an integer) as the zig-zag varint
 *                        of its difference from the previous one; exceptions as float64s
 *               XOR: each value's bytes XOR the previous value's, as Gorilla does, byte-aligned
 *
 * Industrial values are decimals at a sensor's resolution (23.47 °C, 4.512 bar), which XOR
 * compresses poorly and decimal scaling (as ALP does) turns into small integers; zstd then takes
 * what repeats. A value no decimal holds exactly (0.1 + 0.2, -0, NaN) is an exception, or the
 * whole chunk goes XOR when most of it is such.
 */
import { constants, zstdCompressSync, zstdDecompressSync } from "node:zlib";

const VERSION = 1;

const TIMESTAMPS_DELTAS = 0;
const TIMESTAMPS_FLOATS = 1;
const VALUES_DECIMAL = 0;
const VALUES_XOR = 1;

/** Below this span, deltas (< 2^50) and deltas of deltas (< 2^51) zig-zag into safe integers (< 2^52). */
const DELTA_SPAN = 2 ** 50;
/** The largest |value·10^e| kept as an integer: differences of two stay safe after the zig-zag. */
const MAX_SCALED = 2 ** 50;
/** The most decimals tried: 10^15 is exact, and more would leave few values under MAX_SCALED. */
const MAX_EXPONENT = 15;
const POW10 = Array.from({ length: MAX_EXPONENT + 1 }, (_, e) => Number(`1e${e}`));
/** zstd's level 3 (its default): see docs/benchmarks.md ("Historian codec") for what others give. */
const ZSTD_LEVEL = 3;
/** The most body bytes a reading can take (8 for its timestamp, at most 8 + 8 for its value), for zstd's output bound. */
const MAX_BYTES_PER_READING = 24;

export interface SeriesChunk {
  timestamps: number[];
  values: number[];
}

/** What a chunk's row keeps beside its bytes, so that a zoomed-out read needs no decoding. */
export interface ChunkSummary {
  count: number;
  /** As Math.min and Math.max give them (-0 below +0); null for an empty chunk. */
  min: number | null;
  max: number | null;
  /** Added in the order given; null for an empty chunk, as SQL's sum of no rows. */
  sum: number | null;
  /** The value at the earliest timestamp (the first given among equal ones), and at the latest (the last given). */
  first: number | null;
  last: number | null;
  /** The earliest and the latest timestamp, epoch ms. */
  start: number | null;
  end: number | null;
}

/** A chunk that cannot be read back exactly: its bytes were cut short, changed or are not a chunk. */
export class CorruptChunkError extends Error {
  override readonly name = "CorruptChunkError";
  constructor(reason: string, options?: { cause?: unknown }) {
    super(`historian chunk is corrupt: ${reason}`, options);
  }
}

// ---------------------------------------------------------------------------------------------
// Encoding

/** One series' readings as a chunk. Throws a RangeError for a timestamp that is not a safe integer. */
export function encodeChunk(timestamps: ArrayLike<number>, values: ArrayLike<number>): Buffer {
  const n = timestamps.length;
  if (values.length !== n) throw new RangeError(`historian chunk: ${n} timestamps but ${values.length} values`);
  for (let i = 0; i < n; i++) {
    if (!Number.isSafeInteger(timestamps[i])) throw new RangeError(`historian chunk: timestamp ${i} (${timestamps[i]}) is not an integer number of ms`);
  }
  const body = new ByteWriter(n * 4 + 64);
  body.varint(n);
  if (n > 0) {
    writeTimestamps(body, timestamps);
    writeValues(body, values);
  }
  const frame = zstdCompressSync(body.bytes(), {
    params: { [constants.ZSTD_c_compressionLevel]: ZSTD_LEVEL, [constants.ZSTD_c_checksumFlag]: 1 },
  });
  const head = new ByteWriter(24);
  head.byte(VERSION);
  head.varint(n);
  head.varint(frame.length);
  return Buffer.concat([head.bytes(), frame]);
}

function writeTimestamps(out: ByteWriter, ts: ArrayLike<number>): void {
  let lo = ts[0]!;
  let hi = lo;
  for (let i = 1; i < ts.length; i++) {
    lo = Math.min(lo, ts[i]!);
    hi = Math.max(hi, ts[i]!);
  }
  if (hi - lo >= DELTA_SPAN) {
    out.byte(TIMESTAMPS_FLOATS);
    for (let i = 0; i < ts.length; i++) out.float64(ts[i]!);
    return;
  }
  // Readings at a steady rate have equal deltas: their deltas of deltas are 0, a byte each, and zstd folds the run.
  out.byte(TIMESTAMPS_DELTAS);
  out.float64(ts[0]!);
  let delta = 0;
  for (let i = 1; i < ts.length; i++) {
    const next = ts[i]! - ts[i - 1]!;
    out.varint(zigzag(next - delta));
    delta = next;
  }
}

function writeValues(out: ByteWriter, values: ArrayLike<number>): void {
  const e = decimalExponent(values);
  if (e === undefined) return writeXor(out, values);
  const scaledValues: number[] = [];
  const exceptions: number[] = [];
  for (let i = 0; i < values.length; i++) {
    const m = scaled(values[i]!, e);
    if (m === undefined) exceptions.push(i);
    else scaledValues.push(m);
  }
  out.byte(VALUES_DECIMAL);
  out.byte(e);
  out.varint(exceptions.length);
  let at = -1;
  for (const i of exceptions) {
    out.varint(i - at - 1);
    at = i;
  }
  let previous = 0;
  for (const m of scaledValues) {
    out.varint(zigzag(m - previous));
    previous = m;
  }
  for (const i of exceptions) out.float64(values[i]!);
}

/**
 * The integer that v·10^e is, or undefined when v does not read back from it exactly: decoding
 * computes m / 10^e, one correctly rounded division, and this checks that very expression.
 * `+ 0` turns Math.round's -0 into 0, as the varint carries it, so -0 itself is an exception.
 */
function scaled(v: number, e: number): number | undefined {
  const m = Math.round(v * POW10[e]!) + 0;
  return Math.abs(m) <= MAX_SCALED && Object.is(m / POW10[e]!, v) ? m : undefined;
}

/** The fewest decimals (0 to MAX_EXPONENT) that hold v exactly, or -1. */
function decimalsOf(v: number): number {
  for (let e = 0; e <= MAX_EXPONENT; e++) {
    // Past MAX_SCALED (or NaN, ±Infinity) more decimals only make it larger.
    if (!(Math.abs(v * POW10[e]!) <= MAX_SCALED)) return -1;
    if (scaled(v, e) !== undefined) return e;
  }
  return -1;
}

/**
 * The decimal exponent for the chunk, or undefined for XOR. Each decimal costs every value about
 * log2(10) bits, and a value left out costs its 8 bytes and its index: the cheapest e by that
 * estimate, as long as it holds at least half the values.
 */
function decimalExponent(values: ArrayLike<number>): number | undefined {
  const needing = new Array<number>(MAX_EXPONENT + 1).fill(0);
  for (let i = 0; i < values.length; i++) {
    const e = decimalsOf(values[i]!);
    if (e >= 0) needing[e]!++;
  }
  let best: number | undefined;
  let bestCost = Infinity;
  let held = 0;
  let heldAtBest = 0;
  for (let e = 0; e <= MAX_EXPONENT; e++) {
    held += needing[e]!;
    const cost = held * e * (Math.log2(10) / 8) + (values.length - held) * 9;
    if (cost < bestCost) {
      best = e;
      bestCost = cost;
      heldAtBest = held;
    }
  }
  return heldAtBest * 2 >= values.length ? best : undefined;
}

/**
 * Each value's 8 bytes (most significant first) XOR the previous value's: a repeated value is 0,
 * a close one shares sign, exponent and high mantissa bytes. A header byte per value says how many
 * zero bytes lead and trail (4 bits each), and only the bytes between are written; headers come
 * first, all together, so that zstd sees their runs.
 */
function writeXor(out: ByteWriter, values: ArrayLike<number>): void {
  out.byte(VALUES_XOR);
  const headers = new Uint8Array(values.length);
  const middles = new ByteWriter(values.length * 8);
  const previous = new Uint8Array(8);
  const current = new Uint8Array(8);
  const currentView = new DataView(current.buffer);
  for (let i = 0; i < values.length; i++) {
    currentView.setFloat64(0, values[i]!);
    for (let b = 0; b < 8; b++) {
      const x = current[b]! ^ previous[b]!;
      previous[b] = current[b]!;
      current[b] = x;
    }
    let lead = 0;
    while (lead < 8 && current[lead] === 0) lead++;
    let trail = 0;
    while (lead + trail < 8 && current[7 - trail] === 0) trail++;
    headers[i] = (lead << 4) | trail;
    for (let b = lead; b < 8 - trail; b++) middles.byte(current[b]!);
  }
  out.raw(headers);
  out.raw(middles.bytes());
}

// ---------------------------------------------------------------------------------------------
// Decoding

/** A chunk's readings, exactly as they were encoded. Throws CorruptChunkError for anything else. */
export function decodeChunk(chunk: Uint8Array): SeriesChunk {
  const head = new ByteReader(chunk);
  const version = head.byte();
  if (version !== VERSION) throw new CorruptChunkError(`unknown version ${version}`);
  const n = head.varint();
  // zstd reads one frame and ignores what follows it: the length makes bytes added after it an error.
  const frameLength = head.varint();
  if (head.offset + frameLength !== chunk.length) throw new CorruptChunkError(`its frame is ${frameLength} bytes, but ${chunk.length - head.offset} follow its head`);
  let body: Uint8Array;
  try {
    // The bound stops a forged count or frame from inflating into memory it has no right to.
    body = zstdDecompressSync(chunk.subarray(head.offset), { maxOutputLength: n * MAX_BYTES_PER_READING + 64 });
  } catch (err) {
    throw new CorruptChunkError(`its compressed body does not decompress (${(err as Error).message})`, { cause: err });
  }
  const reader = new ByteReader(body);
  const counted = reader.varint();
  // The head's count is outside the checksum: the body's own says it was not changed.
  if (counted !== n) throw new CorruptChunkError(`its head counts ${n} readings, its body ${counted}`);
  // Every reading takes at least a byte of the body: a count past that is not a chunk's.
  if (n > body.length) throw new CorruptChunkError(`it counts ${n} readings in ${body.length} bytes`);
  const timestamps = new Array<number>(n);
  const values = new Array<number>(n);
  if (n > 0) {
    readTimestamps(reader, timestamps);
    readValues(reader, values);
  }
  if (reader.offset !== body.length) throw new CorruptChunkError(`${body.length - reader.offset} bytes are left over`);
  return { timestamps, values };
}

function readTimestamps(from: ByteReader, ts: number[]): void {
  const mode = from.byte();
  if (mode === TIMESTAMPS_FLOATS) {
    for (let i = 0; i < ts.length; i++) ts[i] = from.float64();
  } else if (mode === TIMESTAMPS_DELTAS) {
    ts[0] = from.float64();
    let delta = 0;
    for (let i = 1; i < ts.length; i++) {
      delta += unzigzag(from.varint());
      ts[i] = ts[i - 1]! + delta;
    }
  } else {
    throw new CorruptChunkError(`unknown timestamp encoding ${mode}`);
  }
  for (let i = 0; i < ts.length; i++) {
    if (!Number.isSafeInteger(ts[i])) throw new CorruptChunkError(`timestamp ${i} is not an integer number of ms`);
  }
}

function readValues(from: ByteReader, values: number[]): void {
  const mode = from.byte();
  if (mode === VALUES_XOR) return readXor(from, values);
  if (mode !== VALUES_DECIMAL) throw new CorruptChunkError(`unknown value encoding ${mode}`);
  const e = from.byte();
  if (e > MAX_EXPONENT) throw new CorruptChunkError(`decimal exponent ${e} is past ${MAX_EXPONENT}`);
  const exceptionCount = from.varint();
  if (exceptionCount > values.length) throw new CorruptChunkError(`${exceptionCount} exceptions in ${values.length} values`);
  const isException = new Uint8Array(values.length);
  const exceptions: number[] = [];
  let at = -1;
  for (let k = 0; k < exceptionCount; k++) {
    at += from.varint() + 1;
    if (at >= values.length) throw new CorruptChunkError(`exception at ${at} past the last value`);
    isException[at] = 1;
    exceptions.push(at);
  }
  let m = 0;
  for (let i = 0; i < values.length; i++) {
    if (isException[i]) continue;
    m += unzigzag(from.varint());
    if (!(Math.abs(m) <= MAX_SCALED)) throw new CorruptChunkError(`value ${i} is out of the decimal range`);
    values[i] = m / POW10[e]!;
  }
  for (const i of exceptions) values[i] = from.float64();
}

function readXor(from: ByteReader, values: number[]): void {
  const headers = from.take(values.length);
  const bits = new Uint8Array(8);
  const view = new DataView(bits.buffer);
  for (let i = 0; i < values.length; i++) {
    const lead = headers[i]! >> 4;
    const trail = headers[i]! & 15;
    if (lead + trail > 8) throw new CorruptChunkError(`value ${i} has a header of ${lead} + ${trail} zero bytes`);
    for (let b = lead; b < 8 - trail; b++) bits[b]! ^= from.byte();
    values[i] = view.getFloat64(0);
  }
}

// ---------------------------------------------------------------------------------------------
// Summary

/** The figures a chunk's row keeps (ChunkSummary), from the readings as encodeChunk takes them. */
export function summarizeChunk(timestamps: ArrayLike<number>, values: ArrayLike<number>): ChunkSummary {
  const count = values.length;
  if (count === 0) return { count, min: null, max: null, sum: null, first: null, last: null, start: null, end: null };
  let min = values[0]!;
  let max = values[0]!;
  let sum = -0; // not 0: -0 + -0 is -0, and 0 + -0 would make the sum of a lone -0 read +0
  let first = 0;
  let last = 0;
  for (let i = 0; i < count; i++) {
    const v = values[i]!;
    min = Math.min(min, v);
    max = Math.max(max, v);
    sum += v;
    if (timestamps[i]! < timestamps[first]!) first = i;
    if (timestamps[i]! >= timestamps[last]!) last = i;
  }
  return { count, min, max, sum, first: values[first]!, last: values[last]!, start: timestamps[first]!, end: timestamps[last]! };
}

// ---------------------------------------------------------------------------------------------
// Bytes

/** Signed to unsigned, small magnitudes to small numbers: 0, -1, 1, -2 … → 0, 1, 2, 3 … (safe below 2^52). */
const zigzag = (n: number): number => (n < 0 ? -2 * n - 1 : 2 * n);
const unzigzag = (z: number): number => (z % 2 === 0 ? z / 2 : -(z + 1) / 2);

class ByteWriter {
  private buffer: Uint8Array;
  private view: DataView;
  private length = 0;

  constructor(capacity: number) {
    this.buffer = new Uint8Array(Math.max(16, capacity));
    this.view = new DataView(this.buffer.buffer);
  }

  private room(bytes: number): void {
    if (this.length + bytes <= this.buffer.length) return;
    const grown = new Uint8Array(Math.max(this.buffer.length * 2, this.length + bytes));
    grown.set(this.buffer.subarray(0, this.length));
    this.buffer = grown;
    this.view = new DataView(grown.buffer);
  }

  byte(b: number): void {
    this.room(1);
    this.buffer[this.length++] = b;
  }

  /** A non-negative safe integer, 7 bits a byte, low first; the high bit says more follow. */
  varint(n: number): void {
    this.room(8);
    while (n >= 128) {
      this.buffer[this.length++] = (n % 128) | 128;
      n = Math.floor(n / 128);
    }
    this.buffer[this.length++] = n;
  }

  /** Little-endian, every bit kept (-0, subnormals, ±Infinity). */
  float64(v: number): void {
    this.room(8);
    this.view.setFloat64(this.length, v, true);
    this.length += 8;
  }

  raw(bytes: Uint8Array): void {
    this.room(bytes.length);
    this.buffer.set(bytes, this.length);
    this.length += bytes.length;
  }

  bytes(): Uint8Array {
    return this.buffer.subarray(0, this.length);
  }
}

class ByteReader {
  offset = 0;
  private readonly view: DataView;

  constructor(private readonly buffer: Uint8Array) {
    this.view = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  }

  private need(bytes: number): void {
    if (this.offset + bytes > this.buffer.length) throw new CorruptChunkError("it ends early");
  }

  byte(): number {
    this.need(1);
    return this.buffer[this.offset++]!;
  }

  varint(): number {
    let n = 0;
    let scale = 1;
    // 8 bytes carry 56 bits, more than any number written here.
    for (let i = 0; i < 8; i++) {
      const b = this.byte();
      n += (b & 127) * scale;
      if (b < 128) {
        if (n > Number.MAX_SAFE_INTEGER) break;
        return n;
      }
      scale *= 128;
    }
    throw new CorruptChunkError(`a number at byte ${this.offset} is too long`);
  }

  float64(): number {
    this.need(8);
    const v = this.view.getFloat64(this.offset, true);
    this.offset += 8;
    return v;
  }

  take(bytes: number): Uint8Array {
    this.need(bytes);
    this.offset += bytes;
    return this.buffer.subarray(this.offset - bytes, this.offset);
  }
}
