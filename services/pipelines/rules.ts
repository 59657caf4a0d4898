/**
 * The pipelines service's rules as pure functions: statuses and their moves, the count filter,
 * ingest keys, which monitors and tags a pipeline maps, registration checks, reading checks and
 * the shapes the spec answers with. No database, no broker: test/unit reaches them.
 */
import { createHash, randomBytes } from "node:crypto";
import { isId } from "../../lib/ids";
import { maskSettings } from "../../lib/secrets";
import type { ResolvedMonitor } from "../config/contract";
import { PIPELINE_STATUSES, type PipelineStatus, type Reading } from "./contract";
import type { ActionName, ActionRow } from "./actions.repo";
import { MSG } from "./messages";
import type { Component, PipelineRow } from "./pipelines.repo";

export { PIPELINE_STATUSES, type PipelineStatus };
// ---------------------------------------------------------------- statuses and actions

/** Op 56: queuing an action moves the pipeline to the action's transitional status. */
export const statusWhileQueued = (action: ActionName): PipelineStatus => (action === "start" ? "starting" : "stopping");

/** A gateway's ack: completed ends in running/stopped, failed (or a timeout) in error. */
export function statusAfterAck(action: ActionName, ack: "completed" | "failed"): PipelineStatus {
  if (ack === "failed") return "error";
  return action === "start" ? "running" : "stopped";
}

/** Op 55's status filter (contract): `start` and `stop` name two statuses each, else one exact status. */
export function statusesFor(filter: string): PipelineStatus[] | null {
  if (filter === "start") return ["starting", "running"];
  if (filter === "stop") return ["stopping", "stopped"];
  return (PIPELINE_STATUSES as readonly string[]).includes(filter) ? [filter as PipelineStatus] : null;
}

// ---------------------------------------------------------------- ingest keys

/**
 * Ingest keys are 256 random bits. A fast hash suffices for a secret with that much entropy (no
 * guessing or dictionary attack reaches it; slow hashes exist for low-entropy passwords), and it
 * lets a gateway's request find its pipeline by an indexed lookup instead of a slow hash per call.
 */
export const newIngestKey = (): string => `pk_${randomBytes(32).toString("base64url")}`;
export const hashIngestKey = (key: string): Buffer => createHash("sha256").update(key, "utf8").digest();

// ---------------------------------------------------------------- monitors of a pipeline

const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

/** Every monitor a pipeline feeds: its registration items and the monitors its tags name. */
export function monitorIdsOf(tags: Record<string, unknown>[], registration: Record<string, unknown>[]): string[] {
  const ids = new Set<string>();
  for (const r of registration) {
    const id = str(r.monitor_id);
    if (id) ids.add(id);
  }
  for (const t of tags) {
    // `moniter_id`: the spec's spelling on File tags.
    const id = str(t.monitor_id) ?? str(t.moniter_id);
    if (id) ids.add(id);
  }
  return [...ids];
}

/** The slave id of each registered monitor (null for monitors mapped by tags only). */
export function slaveIds(registration: Record<string, unknown>[]): Map<string, string | null> {
  const out = new Map<string, string | null>();
  for (const r of registration) {
    const id = str(r.monitor_id);
    if (id) out.set(id, r.slave_id === undefined || r.slave_id === null ? null : String(r.slave_id));
  }
  return out;
}

export interface RegistrationTarget {
  plant_id: string;
  function_id: string | null;
  function_enabled_in_registration: boolean;
}

/**
 * Whether the registration items and tag monitors may be registered to this pipeline (false:
 * 404 `Invalid input registration`): every monitor exists in the pipeline's plant, in its function
 * unless `function_enabled_in_registration` lets slaves go to other functions, and what an item
 * says of the monitor's function and asset is true. A monitor listed twice is refused too.
 */
export function registrationIsValid(
  target: RegistrationTarget,
  tags: Record<string, unknown>[],
  registration: Record<string, unknown>[],
  monitors: Map<string, ResolvedMonitor>,
): boolean {
  const seen = new Set<string>();
  for (const item of registration) {
    const id = String(item.monitor_id);
    if (seen.has(id)) return false;
    seen.add(id);
    const m = monitors.get(id);
    if (!m || !monitorFits(target, m)) return false;
    const fn = str(item.function_id);
    if (fn && fn !== m.function_id) return false;
    if (item.registered_by_asset === true && str(item.asset_id) && item.asset_id !== m.asset_id) return false;
  }
  for (const id of monitorIdsOf(tags, [])) {
    const m = monitors.get(id);
    if (!m || !monitorFits(target, m)) return false;
  }
  return true;
}

function monitorFits(target: RegistrationTarget, m: ResolvedMonitor): boolean {
  if (m.plant_id !== target.plant_id) return false;
  return target.function_enabled_in_registration || !target.function_id || m.function_id === target.function_id;
}

/** Which tags of which monitors a pipeline may send: its monitors' tags, and tag ids its own tag items map. */
export function mappingOf(
  tags: Record<string, unknown>[],
  registration: Record<string, unknown>[],
  monitors: ResolvedMonitor[],
): Map<string, Set<string>> {
  const ids = new Set(monitorIdsOf(tags, registration));
  const map = new Map<string, Set<string>>();
  for (const m of monitors) {
    if (ids.has(m.monitor_id)) map.set(m.monitor_id, new Set(m.tags.map((t) => t.tag_id)));
  }
  for (const t of tags) {
    const monitor = str(t.monitor_id) ?? str(t.moniter_id);
    const tag = str(t.tag_id);
    if (monitor && tag && map.has(monitor)) map.get(monitor)?.add(tag);
  }
  return map;
}

// ---------------------------------------------------------------- readings

export const MAX_READINGS = 10000;
/** Samples of one capture; bounded so that its stream message stays under NATS's 1 MB payload. */
export const MAX_SAMPLES = 32768;
/** A reading more than this ahead of the server's clock is refused: a gateway clock gone wrong. */
export const FUTURE_SLACK_MS = 24 * 3600 * 1000;

export interface Rejection {
  index: number;
  reason: string;
}

const READING_KEYS = new Set(["monitor_id", "tag_id", "ts", "value"]);

/**
 * The largest magnitude a reading's value may have. The history's rollups sum readings in
 * PostgreSQL, whose float8 addition fails on overflow instead of giving Infinity: a single 1e308
 * would stop the rollups' fold for every pipeline. Below 1e300, sums of 10^8 readings stay finite,
 * far beyond any sensor's range (docs/api-tour.md, "Connecting a gateway").
 */
export const MAX_VALUE_MAGNITUDE = 1e300;

/**
 * Splits a batch into the readings kept and the ones refused with their reason (a
 * reading for a monitor or tag the pipeline does not map is rejected, the rest are kept).
 */
export function checkReadings(
  items: unknown[],
  mapping: Map<string, Set<string>>,
  window: { oldest: number; newest: number },
): { accepted: Reading[]; rejected: Rejection[] } {
  const accepted: Reading[] = [];
  const rejected: Rejection[] = [];
  for (let index = 0; index < items.length; index++) {
    const reason = readingProblem(items[index], mapping, window);
    if (reason) rejected.push({ index, reason });
    else {
      const r = items[index] as Reading;
      accepted.push({ monitor_id: r.monitor_id.toLowerCase(), tag_id: r.tag_id, ts: r.ts, value: r.value });
    }
  }
  return { accepted, rejected };
}

function readingProblem(item: unknown, mapping: Map<string, Set<string>>, window: { oldest: number; newest: number }): string | null {
  if (item === null || typeof item !== "object" || Array.isArray(item)) return MSG.invalidInput("reading");
  const r = item as Record<string, unknown>;
  for (const key of Object.keys(r)) if (!READING_KEYS.has(key)) return MSG.invalidInputKey;
  for (const key of READING_KEYS) if (r[key] === undefined || r[key] === null) return MSG.insufficientInput(key);
  if (!isId(r.monitor_id)) return MSG.invalidInput("monitor_id");
  if (typeof r.tag_id !== "string" || r.tag_id === "" || r.tag_id.length > 255) return MSG.invalidInput("tag_id");
  if (typeof r.ts !== "number" || !Number.isSafeInteger(r.ts) || r.ts < 0) return MSG.invalidInput("ts");
  if (typeof r.value !== "number" || !Number.isFinite(r.value) || Math.abs(r.value) > MAX_VALUE_MAGNITUDE) return MSG.invalidInput("value");
  const tags = mapping.get(r.monitor_id.toLowerCase());
  if (!tags) return MSG.monitorNotMapped;
  if (!tags.has(r.tag_id)) return MSG.tagNotMapped;
  if (r.ts < window.oldest) return MSG.readingTooOld;
  if (r.ts > window.newest) return MSG.readingInFuture;
  return null;
}

// ---------------------------------------------------------------- what the spec answers with

export interface Names {
  plant_name: string | null;
  function_name: string | null;
}

export function heartBeatsView(hb: Partial<Record<Component, number>>): Record<Component, number | null> {
  return { log_parser: hb.log_parser ?? null, producer: hb.producer ?? null, gateway: hb.gateway ?? null, stasher: hb.stasher ?? null };
}

export function actionView(a: ActionRow) {
  return {
    action_id: a.action_id,
    action: a.action,
    status: a.status,
    issued_at: Number(a.issued_at),
    completed_at: a.completed_at === null ? null : Number(a.completed_at),
    // Only a collected pipeline's failed collection has one (docs/collectors.md).
    ...(a.error ? { error: a.error } : {}),
  };
}

export function firmwareView(p: PipelineRow, latest: string) {
  return {
    current_version: p.gateway_firmware.current_version ?? "",
    previous_version: p.gateway_firmware.previous_version ?? "",
    latest_version: latest,
  };
}

/** What names a pipeline and its source, first in the list item, `resolve`'s answer and the gateway's configuration. */
export const identityView = (p: PipelineRow) => ({
  pipeline_id: p.pipeline_id,
  pipeline_name: p.pipeline_name,
  data_type: p.data_type,
  data_source: p.data_source,
  data_source_subtype: p.data_source_subtype,
});

/** Op 54's list item. */
export function listItemView(p: PipelineRow, names: Names, lastActions: ActionRow[], latestFirmware: string) {
  return {
    ...identityView(p),
    created_at: Number(p.created_at),
    status: p.status,
    gateway_firmware: firmwareView(p, latestFirmware),
    total_events: Number(p.total_events),
    latest_event: p.latest_event,
    heart_beats: heartBeatsView(p.heart_beats),
    last_actions: lastActions.map(actionView),
    expired_license_caution: false,
    plant_id: p.plant_id,
    plant_name: names.plant_name,
    function_id: p.function_id,
    function_name: names.function_name,
  };
}

/** Op 49's fetch; the edge fetch (contract) adds what an edge pipeline has besides. */
export function fetchView(p: PipelineRow, latestFirmware: string) {
  const base = {
    function_id: p.function_id,
    plant_id: p.plant_id,
    site_id: p.site_id,
    pipeline_id: p.pipeline_id,
    created_at: Number(p.created_at),
    data_type: p.data_type,
    data_source: p.data_source,
    data_source_subtype: p.data_source_subtype,
    pipeline_name: p.pipeline_name,
    status: p.status,
    total_event_count: Number(p.total_events),
    firmware_update: p.firmware_update,
    data_directory: p.data_directory,
    // Secrets are never answered (docs/security.md#pipeline-secrets-encrypted-at-rest).
    settings: maskSettings(p.settings),
    tags: p.tags,
    registration: p.registration,
    function_enabled_in_registration: p.function_enabled_in_registration,
  };
  return p.kind === "edge" ? { ...base, gateway_firmware: firmwareView(p, latestFirmware) } : base;
}

/** `gateway_firmware` is declared as an array of objects and sent as one object: both are taken. */
export function firmwareOf(value: unknown): { current_version?: string; previous_version?: string } {
  const one = Array.isArray(value) ? value[0] : value;
  if (!one || typeof one !== "object") return {};
  const f = one as { current_version?: string; previous_version?: string };
  return { current_version: f.current_version, previous_version: f.previous_version };
}
