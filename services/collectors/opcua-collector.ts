/**
 * One OPC-UA pipeline's collection (docs/collectors.md#opc-ua): a session on its `server_url`
 * with a monitored item per tag `address` (lib/opcua-source.ts), the values as they change stored
 * in batches through the pipelines service, each batch with the collection's new position (the
 * timestamp of each node's last value stored) in one transaction. A value the server sends again
 * (after a reconnection, or to a collector started again) is no later than that position and is
 * not stored twice. A batch the pipelines service could not take is kept and sent with the next
 * one, so nothing the server sent is lost while the service is away.
 */
import { Pause } from "../../lib/wait";
import { openOpcuaSource, OpcuaSourceError, OPCUA_SECURITY_MODES, OPCUA_SECURITY_POLICIES, type OpcuaChange, type OpcuaSource, type OpcuaSourceSettings } from "../../lib/opcua-source";
import type { CollectedPipeline, CollectedTag, CollectionPosition, Reading } from "../pipelines/contract";
import type { RunningCollector } from "./collector";
import { MSG } from "./messages";
import { pageKey } from "./pages";
import type { CollectorsPort } from "./port";

/** `heart_beats.gateway` is written at most this often, and at least this often while the session is up. */
const HEARD_EVERY_MS = 5000;
/** Back-off between attempts to open the session: 1 s, 2 s, 4 s, ... up to this. */
const BACKOFF_MAX_MS = 60_000;
/** Values held while the pipelines service does not take them; past this the oldest go (said in the log). */
const HELD_MAX = 100_000;

class SettingsError extends Error {}

const text = (v: unknown): string | undefined => (typeof v === "string" && v.trim() !== "" ? v.trim() : undefined);

/** The session's settings from the pipeline's: `sampling_rate` is in Hz (op 50), the interval in ms. */
export function opcuaSettingsOf(settings: Record<string, unknown>): OpcuaSourceSettings {
  const server_url = text(settings.server_url);
  if (!server_url) throw new SettingsError("server_url");
  const mode = settings.security_mode ?? "None";
  if (!OPCUA_SECURITY_MODES.includes(mode as never)) throw new SettingsError("security_mode");
  const policy = settings.security_policy;
  if (policy !== undefined && !OPCUA_SECURITY_POLICIES.includes(policy as never)) throw new SettingsError("security_policy");
  const rate = typeof settings.sampling_rate === "number" && settings.sampling_rate > 0 ? settings.sampling_rate : null;
  return {
    server_url,
    user_name: text(settings.user_name) ?? null,
    user_password: typeof settings.user_password === "string" ? settings.user_password : null,
    security_mode: mode as OpcuaSourceSettings["security_mode"],
    ...(policy !== undefined ? { security_policy: policy as OpcuaSourceSettings["security_policy"] } : {}),
    interval_ms: rate ? Math.max(10, Math.round(1000 / rate)) : null,
  };
}

/** The readings of changes after the position, and the position they move it to. */
export function readingsOfChanges(
  changes: OpcuaChange[],
  addresses: string[],
  tagsOf: Map<string, CollectedTag[]>,
  from: CollectionPosition,
): { readings: Reading[]; to: CollectionPosition } {
  const seen = { ...from.seen };
  const readings: Reading[] = [];
  for (const c of changes) {
    const address = addresses[c.index]!;
    if (c.ts <= (seen[address] ?? -Infinity)) continue;
    seen[address] = c.ts;
    for (const t of tagsOf.get(address) ?? []) readings.push({ monitor_id: t.monitor_id, tag_id: t.tag_id, ts: c.ts, value: c.value });
  }
  return { readings, to: { last: null, seen } };
}

export function startOpcuaCollector(port: CollectorsPort, pipeline: CollectedPipeline): RunningCollector {
  const id = pipeline.pipeline_id;
  const tagsOf = new Map<string, CollectedTag[]>();
  for (const t of pipeline.tags) if (t.address) tagsOf.set(t.address, [...(tagsOf.get(t.address) ?? []), t]);
  const addresses = [...tagsOf.keys()];
  let position = pipeline.position;
  let held: OpcuaChange[] = [];
  let stopping = false;
  let ended = false;
  let state: "new" | "running" | "error" = "new";
  let lastCause = "";
  let heardAt = 0;
  const pause = new Pause();
  /** Ends an opening that waits for an unreachable server when the collector stops. */
  const stopped = new AbortController();
  /** Read through a function: the state moves in callbacks, which the compiler's narrowing does not see. */
  const isRunning = () => state === "running";

  const fail = async (cause: string) => {
    if (state === "error" && cause === lastCause) return;
    state = "error";
    lastCause = cause;
    await port.failed(id, cause).catch(() => undefined);
  };
  const run = async () => {
    const now = Date.now();
    if (state !== "running") {
      state = "running";
      heardAt = now;
      await port.running(id, now).catch((err: unknown) => port.log.warn(MSG.notStored(id, String(err))));
    } else if (now - heardAt >= HEARD_EVERY_MS) {
      heardAt = now;
      await port.heard(id, now).catch(() => undefined);
    }
  };

  /** Stores what is held; on a failure keeps it for the next batch. */
  const store = async (changes: OpcuaChange[]) => {
    held = held.concat(changes);
    if (held.length > HELD_MAX) {
      port.log.warn(MSG.heldDropped(id, held.length - HELD_MAX));
      held = held.slice(held.length - HELD_MAX);
    }
    const { readings, to } = readingsOfChanges(held, addresses, tagsOf, position);
    if (readings.length === 0) {
      held = [];
      return;
    }
    try {
      const { epoch } = pipeline;
      await port.page({ pipeline_id: id, from: position, to, epoch, key: pageKey(id, epoch, position, to), readings, unreadable: 0 });
      position = to;
      held = [];
      if (isRunning()) await run();
    } catch (err) {
      if ((err as { code?: unknown }).code === 409) {
        // Moved by a user or another collector: this one ends, the runner starts what the list says now.
        ended = true;
        stopping = true;
        pause.wake();
        return;
      }
      port.log.warn(MSG.notStored(id, String(err)));
    }
  };

  const loop = (async () => {
    let settings: OpcuaSourceSettings;
    try {
      settings = opcuaSettingsOf(pipeline.settings);
      if (addresses.length === 0) throw new SettingsError("tags");
    } catch (err) {
      if (!(err instanceof SettingsError)) throw err;
      // Nothing to try again until the settings change (a new version starts a new collector).
      await port.failed(id, MSG.invalidSetting(err.message)).catch(() => undefined);
      return;
    }
    let failures = 0;
    while (!stopping) {
      let source: OpcuaSource | null = null;
      try {
        source = await openOpcuaSource(
          settings,
          addresses,
          {
            onChanges: store,
            onState: (s) => void (s.ok ? run() : fail(s.cause)),
          },
          // The gap since the last values stored is read from the server's history first, where it keeps one.
          { check: (host, p) => port.checkSource(host, p), pkiDir: port.opcuaPkiDir, since: position.seen, signal: stopped.signal, log: (m) => port.log.warn(`Pipeline ${id}: ${m}`) },
        );
      } catch (err) {
        if (stopping) break;
        failures++;
        if (err instanceof OpcuaSourceError) port.log.warn(MSG.sourceFailed(id, settings.server_url, err.detail));
        await fail(err instanceof Error ? err.message : String(err));
        await pause.wait(Math.min(BACKOFF_MAX_MS, 1000 * 2 ** Math.min(failures - 1, 16)));
        continue;
      }
      failures = 0;
      // Open: the session reconnects by itself; heartbeats while it is up, until the collector stops.
      while (!stopping) {
        await pause.wait(HEARD_EVERY_MS);
        if (isRunning()) await run();
      }
      await source.close();
    }
  })().catch((err: unknown) => port.log.warn(MSG.notStored(id, String(err))));

  return {
    get ended() {
      return ended;
    },
    async stop() {
      stopping = true;
      stopped.abort();
      pause.wake();
      await loop;
    },
  };
}
