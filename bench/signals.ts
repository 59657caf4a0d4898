/**
 * The signals of scripts/simulate.ts, made again with a seeded generator so that every run measures
 * the same readings (the script exports none of its generators): for the historian's benchmarks
 * (bench:storage-codec, bench:storage).
 */
import type { SeriesChunk } from "../lib/historian/codec";
import { DAY_MS, HOUR_MS } from "../lib/time";
import { seeded } from "../test/helpers/random";

export const PER_HOUR = 3600;

export type Signal = (t: number) => number;

/** The generators of one run: `hours` of 1 Hz signals from `start`. */
export function signals(seed: number, start: number, hours: number, jitterMs = 20) {
  const HOURS = hours;
  const START = start;
  const JITTER_MS = jitterMs;
  const random = seeded(seed);
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

  return { random, random53, processValue, simulator, hourly, bitPatterns };
}
