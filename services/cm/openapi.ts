/** The resources cm answers with, and the docs of its fields (the resources are announced in the service's `openapi` setting). */
import { arr, int, measured, nullable, obj, str, type JsonSchema } from "../../lib/openapi-schema";
import type { FieldDoc } from "../../lib/operations";

const COLORS = ["green", "yellow", "orange", "red", "grey"];
const ZONE = { type: ["string", "null"], enum: ["A", "B", "C", "D", null] } as const;
const AMPLITUDE = "the tag's unit (velocity mm/s, acceleration g)";

const text = (description: string, example?: unknown): JsonSchema => ({
  ...str,
  description,
  ...(example !== undefined ? { examples: [example] } : {}),
});

export const CM_SCHEMAS: Record<string, JsonSchema> = {
  FftPeak: obj({
    freq: measured("number", "Hz", "the peak's frequency"),
    tag_value: measured("number", AMPLITUDE, "the peak's amplitude (single-sided, Hann window)"),
    fundamental_freq: measured(
      "number",
      "Hz",
      "running speed: the asset's rotating_speed (RPM) / 60 when set, else the largest peak below 100 Hz; 0 when neither",
    ),
    bearing: {
      ...obj({
        defect: { ...str, enum: ["BPFO", "BPFI", "BSF", "FTF"], description: "the bearing defect frequency the peak matches (from the monitor's specs.bearing)" },
        order: measured("number", "orders", "the peak's frequency / running speed"),
        harmonic: { ...int, description: "1: the defect frequency itself; k: its k-th harmonic" },
        sidebands: { ...arr(measured("number", "Hz", "a sideband's frequency")), description: "the peaks beside it at ± 1x (BPFI) or ± FTF (BSF)" },
      }),
      description: "only on a peak that matches a bearing defect (or a harmonic of it); absent otherwise",
    },
  }),
  SpectrumPoint: obj({
    freq: measured("number", "Hz", "the bin's frequency, from 0 to half the sample rate"),
    tag_value: measured("number", AMPLITUDE, "the bin's amplitude (single-sided, Hann window)"),
    peak: { type: "boolean", description: "whether the bin is one of the capture's peaks" },
  }),
  FaultSummary: obj({
    monitor_name: text("the monitor the spectra are of", "Pump 1 DE bearing"),
    summary: text(
      "one line per fault found in the latest spectrum of each tag and axis (prefixed `[tag axis]` when the monitor has several), or why none was",
      "Unbalance: 1x running speed dominant at 24.8 Hz (order 1.00), amplitude 2.013",
    ),
    Timestamp: { ...str, format: "date-time", description: "time of the newest of those spectra, ISO 8601 in UTC" },
    zone: { ...ZONE, description: "the worst ISO 20816-3 zone of the monitor's velocity tags (the severity read); null without one" },
    evidence: {
      ...obj({
        peak_hz: measured("number", "Hz", "the peak that matches the defect frequency"),
        harmonics: { ...arr(measured("number", "Hz", "a harmonic's frequency")), description: "its harmonics found (2x to 5x)" },
        sidebands: { ...arr(measured("number", "Hz", "a sideband's frequency")), description: "sidebands found beside it and its harmonics: ± 1x (BPFI), ± FTF (BSF)" },
        strength: { ...str, enum: ["strong", "weak"], description: "weak: one matching peak without harmonic or sideband, not named as a fault" },
      }),
      type: ["object", "null"],
      description: "the evidence of the leading bearing finding of the latest spectra (strong before weak, then the larger peak); null without one",
    },
  }),
  MonitorValues: {
    ...obj({ timestamp: { ...measured("integer", "epoch ms", "time of the newest value; null without one"), type: ["integer", "null"] } }),
    additionalProperties: { ...nullable("number"), description: "per tag name of the monitor: its latest value in the tag's unit, null without one" },
  },
  MonitorColors: {
    ...obj({
      monitor_id: { ...str, format: "uuid" },
      monitor_name: str,
      timestamp: { ...measured("integer", "epoch ms", "time of the newest value shown; null without one"), type: ["integer", "null"] },
    }),
    additionalProperties: {
      ...obj({
        value: { ...nullable("number"), description: "the tag's latest value in its unit; null without one in the range" },
        color: {
          ...str,
          enum: COLORS,
          description: "from the tag's thresholds: below operational green, below caution yellow, below warning orange, else red; grey without thresholds or value",
        },
      }),
      description: "per tag name of the monitor",
    },
  },
  CmAsset: obj({
    asset_id: { ...str, format: "uuid" },
    asset_name: text("the asset's name", "Pump 1"),
    asset_status: {
      ...str,
      enum: ["normal", "warning", "critical", ""],
      description: "from the latest values against their thresholds (orange a warning, red critical); empty without an open event",
    },
    asset_faults: { ...arr(str), description: "faults found in the latest spectra of the asset's monitors", examples: [["Unbalance"]] },
    event_id: text("the open event's id; empty without one"),
    event_start: { type: ["integer", "string"], "x-unit": "epoch s", description: "when the open event started, epoch seconds; empty string without an event" },
    event_severity: { type: ["integer", "string"], description: "1 high (critical), 2 medium (warning); empty string without an event" },
    event_status: text("the open event's status; empty without one", "Under Investigation"),
    event_label: text("what opened the event; empty without one", "Pump 1 DE bearing velocity_rms above warning threshold"),
    event_assignee: text("who handles the event; empty when nobody does"),
    zone: { ...ZONE, description: "the worst ISO 20816-3 zone of the asset's velocity tags (the severity read); null without one" },
  }),
  CmSeverity: obj({
    standard: text("the standard the zones are of", "ISO 20816-3"),
    machine_group: { type: "integer", enum: [1, 2], description: "1 large (300 kW to 50 MW), 2 medium (15 kW to 300 kW): the asset's machine_group, else 1 from kw 300 up, else 2" },
    foundation: { ...str, enum: ["rigid", "flexible"], description: "the asset's foundation, else rigid" },
    boundaries: {
      ...obj({
        ab: measured("number", "mm/s", "upper limit of zone A"),
        bc: measured("number", "mm/s", "upper limit of zone B"),
        cd: measured("number", "mm/s", "upper limit of zone C"),
      }),
      description: "the standard's zone boundaries for that group and foundation",
    },
    tags: {
      ...arr(
        obj({
          monitor_id: { ...str, format: "uuid" },
          tag: text("the velocity tag's name", "velocity_rms"),
          value: { ...nullable("number"), "x-unit": "mm/s", description: "the tag's latest value (RMS); null without one" },
          zone: { ...ZONE, description: "the value's zone; a value on a boundary is in the upper zone; null without a value" },
          timestamp: { ...measured("integer", "epoch ms", "time of the value; null without one"), type: ["integer", "null"] },
        }),
      ),
      description: "each velocity tag (tag_unit mm/s) of the asset's condition monitors",
    },
    zone: { ...ZONE, description: "the worst of the tags' zones; null without one" },
  }),
};

const MONITOR_ID = "6f1d2c3b-4a5e-4f60-8a71-92b3c4d5e6f7";
const ASSET_ID = "3f1c2a9e-8a61-4a4e-9d0b-2b7f6c1d5e42";
export const FUNCTION_ID = "2b7f6c1d-5e42-4a4e-9d0b-3f1c2a9e8a61";
/** 2026-01-01T00:00:00Z. */
const CAPTURE_MS = 1767225600000;

export const MONITOR_ID_FIELD: FieldDoc = { description: "the monitor's id", example: MONITOR_ID };
export const ASSET_ID_FIELD: FieldDoc = { description: "the asset's id", example: ASSET_ID };

/** The query that names one capture: its monitor, tag, axis and time (exact, or the nearest one). */
export const CAPTURE_FIELDS: Record<"monitor_id" | "tag" | "axis" | "timestamp" | "nearest" | "envelope" | "band", FieldDoc> = {
  monitor_id: MONITOR_ID_FIELD,
  tag: { description: "the capture's tag, as the gateway sent it with the waveform", example: "velocity" },
  axis: { description: "the sensor axis of the capture", example: "x" },
  timestamp: {
    description: "the capture's time, one that the timestamps operation lists; with nearest=true any time",
    unit: "epoch ms",
    example: CAPTURE_MS,
  },
  nearest: {
    description:
      "true: the capture of this tag and axis nearest to timestamp, before or after it (of two equally near, the earlier); " +
      "false or absent: only a capture at exactly timestamp. The time of the capture answered is in the X-Capture-Timestamp header (epoch ms)",
    example: "true",
  },
  envelope: {
    description:
      "true: the envelope spectrum instead (band-pass, Hilbert envelope, its spectrum), with the same peaks and bearing matching; " +
      "[] for a capture stored before its samples were kept. The band used is in the X-Envelope-Band header (`<low>-<high>` Hz)",
    example: "true",
  },
  band: {
    description:
      "with envelope=true: the band to demodulate, `<low>-<high>` in Hz up to half the sample rate; " +
      "absent: one octave around the strongest resonance above 10x running speed",
    example: "2400-4800",
  },
};

/** Most capture times one timestamps read answers. */
export const MAX_TIMESTAMPS = 10_000;

/** The optional bounds of the timestamps read. */
export const TIMESTAMPS_FIELDS: Record<"from" | "to" | "limit", FieldDoc> = {
  from: {
    description: "earliest capture time answered (inclusive): ISO 8601 (UTC without an offset), or epoch ms written as digits only; default: the first capture",
    example: "2026-01-01T00:00:00+05:30",
  },
  to: {
    description: "latest capture time answered (inclusive): ISO 8601 (UTC without an offset), or epoch ms written as digits only; default: the last capture",
    example: "2026-01-02T00:00:00+05:30",
  },
  limit: {
    description: `only the newest captures of the range, at most this many (1 to ${MAX_TIMESTAMPS}), still answered ascending; default: all`,
    example: 100,
  },
};

/** Answer examples. */
export const EXAMPLES = {
  peaks: [
    { freq: 24.8, tag_value: 2.013, fundamental_freq: 24.8 },
    { freq: 49.6, tag_value: 0.402, fundamental_freq: 24.8 },
  ],
  spectrum: [
    { freq: 0, tag_value: 0.0012, peak: false },
    { freq: 0.5, tag_value: 0.0031, peak: false },
    { freq: 24.8, tag_value: 2.013, peak: true },
  ],
  summary: [
    {
      monitor_name: "Pump 1 DE bearing",
      summary: "Unbalance: 1x running speed dominant at 24.8 Hz (order 1.00), amplitude 2.013",
      Timestamp: "2026-01-01T00:00:00.000Z",
      zone: "C",
      evidence: null,
    },
  ],
  timestamps: [CAPTURE_MS, CAPTURE_MS + 3_600_000],
  values: { timestamp: CAPTURE_MS, velocity_rms: 4.2, temperature: 61.5 },
  colors: [
    {
      monitor_id: MONITOR_ID,
      monitor_name: "Pump 1 DE bearing",
      timestamp: CAPTURE_MS,
      velocity_rms: { value: 4.2, color: "yellow" },
      temperature: { value: 61.5, color: "grey" },
    },
  ],
  asset: {
    asset_id: ASSET_ID,
    asset_name: "Pump 1",
    asset_status: "warning",
    asset_faults: ["Unbalance"],
    event_id: "9d0b2b7f-6c1d-4e42-8a61-3f1c2a9e4a4e",
    event_start: 1767225600,
    event_severity: 2,
    event_status: "Under Investigation",
    event_label: "Pump 1 DE bearing velocity_rms above caution threshold",
    event_assignee: "",
    zone: "C",
  },
  severity: {
    standard: "ISO 20816-3",
    machine_group: 2,
    foundation: "rigid",
    boundaries: { ab: 1.4, bc: 2.8, cd: 4.5 },
    tags: [{ monitor_id: MONITOR_ID, tag: "velocity_rms", value: 4.2, zone: "C", timestamp: CAPTURE_MS }],
    zone: "C",
  },
};
