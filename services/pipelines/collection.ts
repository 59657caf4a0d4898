/**
 * Pipelines the service collects itself (docs/collectors.md): the collectors service asks which to
 * collect, stores each page of what it read through `ingestRequests` (exactly as `/_ingest`
 * stores a request) with the collection's new position in the same transaction, and reports a
 * good collection, a failure and a release, which move the pipeline's status as a gateway's
 * births, deaths and acknowledgements do (sparkplug.ts).
 */
import { createHash } from "node:crypto";
import { conflict } from "../../lib/errors";
import { openSettings } from "../../lib/secrets";
import type { Caller } from "../../lib/contract";
import { resolveMonitors, resolveSite } from "../config/contract";
import * as collectionRepo from "./collection.repo";
import type { StoredPosition } from "./collection.repo";
import type { CollectedAnswer, CollectedPage, CollectedPipeline, CollectedTag, CollectionPosition } from "./contract";
import { ingestRequests } from "./ingest";
import { MSG } from "./messages";
import { findPipeline, lockSettings } from "./pipelines.repo";
import type { PipelinesEnv, SystemPort } from "./port";
import { heard, release, resumed } from "./sparkplug";

const text = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);
const configOf = (settings: Record<string, unknown>): Record<string, unknown> =>
  typeof settings.config === "object" && settings.config !== null ? (settings.config as Record<string, unknown>) : {};

/** The subtypes the service collects itself, Cloud or Third-Party-Apps (services/collectors/kinds.ts runs a collector for each). */
export const COLLECTED_SUBTYPES = ["SQL", "OPC-UA"];

/** A pipeline the service collects itself (docs/collectors.md). */
export const isCollected = (row: { data_source: string; data_source_subtype: string }): boolean =>
  ["cloud", "third-party-apps"].includes(row.data_source.toLowerCase()) && COLLECTED_SUBTYPES.includes(row.data_source_subtype.toUpperCase());

/** What each collected pipeline among `rows` collected and rejected, by id: none yet before its first collection. */
export async function collectionCountsOf(db: PipelinesEnv["db"], rows: { pipeline_id: string; data_source: string; data_source_subtype: string }[]) {
  const collected = rows.filter(isCollected);
  const counts = await collectionRepo.collectionCounts(db, collected.map((r) => r.pipeline_id));
  return new Map(collected.map((r) => [r.pipeline_id, counts.get(r.pipeline_id) ?? { collected: 0, rejected: 0 }]));
}

/** `last_collected` as a user set it: a time value of the source, or null (`none`: from the oldest row). */
export function lastCollectedOf(settings: Record<string, unknown>): string | null {
  const v = configOf(settings).last_collected;
  const s = typeof v === "number" ? String(v) : text(v);
  return s === undefined || s.toLowerCase() === "none" ? null : s;
}

/**
 * Where the collection is: the stored position while `last_collected` still says what it wrote;
 * a user who set `last_collected` to something else starts it there, in a new epoch (its pages'
 * keys are new ones, so rows collected before are stored again).
 */
export function positionOf(settings: Record<string, unknown>, stored: StoredPosition | null): StoredPosition {
  const last = lastCollectedOf(settings);
  if (stored && stored.position.last === last) return stored;
  return { position: { last, seen: {} }, epoch: stored ? stored.epoch + 1 : 0 };
}

/** One text for one position, whatever order its fingerprints came in. */
export const positionText = (p: CollectionPosition): string =>
  JSON.stringify([p.last, Object.keys(p.seen).sort().map((k) => [k, p.seen[k]])]);

/**
 * A tag's source (a SQL tag's column, an OPC-UA tag's node address) and the monitor's tag it is a
 * reading of: its `tag_id`, else the monitor's tag of its `tag_name`.
 */
function tagsOf(subtype: string, tags: Record<string, unknown>[], monitors: Map<string, { tags: { tag_id: string; tag_name: string }[] }>): CollectedTag[] {
  const opcua = subtype.toUpperCase() === "OPC-UA";
  return tags.flatMap((t) => {
    const source = opcua ? text(t.address)?.trim() : text(t.column_name);
    const monitor_id = (text(t.monitor_id) ?? text(t.moniter_id))?.toLowerCase();
    const monitor = monitor_id ? monitors.get(monitor_id) : undefined;
    if (!source || !monitor_id || !monitor) return [];
    const tag = monitor.tags.find((x) => x.tag_id === text(t.tag_id)) ?? monitor.tags.find((x) => x.tag_name === text(t.tag_name));
    if (!tag) return [];
    return [{ column_name: opcua ? "" : source, address: opcua ? source : "", monitor_id, tag_id: tag.tag_id }];
  });
}

/** The pipelines of these subtypes to collect now, their secrets opened (for the collectors only, never an answer to a user). */
export async function collectedPipelines(env: PipelinesEnv, caller: Caller, p: { subtypes: string[] }): Promise<CollectedPipeline[]> {
  const rows = await collectionRepo.collectedPipelines(env.db, p.subtypes);
  const monitorIds = [...new Set(rows.flatMap((r) => r.tags.flatMap((t) => text(t.monitor_id) ?? text(t.moniter_id) ?? []).map((id) => id.toLowerCase())))];
  const monitors = monitorIds.length > 0 ? await resolveMonitors(caller, monitorIds) : new Map();
  const zones = new Map<string, string>();
  for (const site_id of new Set(rows.map((r) => r.site_id))) {
    zones.set(site_id, (await resolveSite(caller, site_id).catch(() => null))?.timezone ?? "UTC");
  }
  return rows.map((row) => {
    const settings = openSettings(env.secretsKey, row.settings);
    const tags = tagsOf(row.data_source_subtype, row.tags, monitors);
    const time_zone = zones.get(row.site_id) ?? "UTC";
    const at = positionOf(row.settings, row.position && { position: row.position, epoch: row.epoch ?? 0 });
    // Not `last_collected`, which every page moves: a user who sets it starts a new epoch instead.
    const { last_collected: _moved, ...config } = configOf(settings);
    const version = createHash("sha256")
      .update(JSON.stringify([{ ...settings, config }, tags, time_zone, at.epoch]))
      .digest("hex")
      .slice(0, 32);
    return { pipeline_id: row.pipeline_id, subtype: row.data_source_subtype, action: row.action, settings, tags, time_zone, ...at, version };
  });
}

/**
 * A page: its readings stored through the ingestion (once per `key`), and the position moved from
 * `from` to `to` in the same transaction, so a collector that dies at any moment neither skips
 * nor repeats a row. 409 when the position is no longer `from`: nothing is stored.
 */
export async function storePage(env: PipelinesEnv, caller: Caller, page: CollectedPage): Promise<CollectedAnswer> {
  const pipeline_id = page.pipeline_id.toLowerCase();
  const row = await findPipeline(env.db, pipeline_id);
  if (!row) throw conflict(MSG.collectionMoved);
  const fingerprint = createHash("sha256").update(`collection\n${JSON.stringify(page.readings)}`).digest();
  let counted: CollectedAnswer = { accepted: 0, rejected: 0, replayed: false };
  await ingestRequests(
    env,
    caller,
    { pipeline_id, site_id: row.site_id, plant_id: row.plant_id, until: null },
    [{ readings: page.readings, keyed: { key: page.key, fingerprint } }],
    async (tx, [stored]) => {
      const settings = await lockSettings(tx, pipeline_id);
      const now = positionOf(settings ?? {}, await collectionRepo.lockedPosition(tx, pipeline_id));
      if (!settings || now.epoch !== page.epoch || positionText(now.position) !== positionText(page.from)) throw conflict(MSG.collectionMoved);
      const replayed = stored?.replayed ?? false;
      const accepted = replayed || !stored ? 0 : stored.answer.accepted;
      const rejected = (replayed || !stored ? 0 : stored.answer.rejected.length) + page.unreadable;
      await collectionRepo.advance(tx, pipeline_id, { position: page.to, epoch: page.epoch }, accepted, rejected, Date.now());
      counted = { accepted, rejected, replayed };
    },
  );
  return counted;
}

/** A good collection: the pending start completes, an errored pipeline runs again; the cause of its failure is gone. */
export async function running(env: SystemPort, p: { pipeline_id: string; ts: number }): Promise<null> {
  await collectionRepo.clearCause(env.db, p.pipeline_id);
  return resumed(env, p);
}

/** The source failed: the pipeline is in error, and its latest action (a start) says why. */
export async function failed(env: SystemPort, p: { pipeline_id: string; cause: string }): Promise<null> {
  if (await env.db.transaction((tx) => collectionRepo.failCollection(tx, p.pipeline_id, p.cause.slice(0, 500), Date.now()))) await env.resolveStale();
  return null;
}

/** A collection ran (rows or none): `heart_beats.gateway`, as a gateway's heartbeat. */
export const collectionHeard = heard;

/** The collector let go of the pipeline: its pending stop completes, as a gateway's acknowledgement would. */
export const stopped = release;
