/**
 * One SQL pipeline's collection (docs/collectors.md): every `frequency` `frequency_unit`, the
 * rows after its position, a page at a time, each page stored with its new position by the
 * pipelines service in one transaction. A source that fails puts the pipeline in error with the
 * cause and is tried again with back-off; the first good collection after makes it run again.
 */
import { Pause } from "../../lib/wait";
import { openSession, type SqlSession } from "../../lib/sql-source";
import type { CollectedPipeline, CollectionPosition } from "../pipelines/contract";
import type { RunningCollector } from "./collector";
import { MSG } from "./messages";
import { fingerprintOf, pageKey, pageOf, readingsOf, seenCount, type SourceRow } from "./pages";
import type { CollectorsPort } from "./port";
import { columnsOf, pageQuery, SettingsError, sqlSourceOf, type SqlSource } from "./sql-source";

/** A page carries at most this many readings: a call well under NATS's 1 MB message (about 100 bytes a reading). */
export const READINGS_PER_PAGE = 5000;
/** `heart_beats.gateway` is written at most this often. */
const HEARD_EVERY_MS = 5000;
/** Back-off after failures: 1 s, 2 s, 4 s, ... up to this, never longer than the frequency. */
const BACKOFF_MAX_MS = 60_000;

/** The source failed: its cause is what the pipeline shows. */
class SourceError extends Error {}

const isMoved = (err: unknown): boolean => (err as { code?: unknown }).code === 409;

export function startSqlCollector(port: CollectorsPort, pipeline: CollectedPipeline): RunningCollector {
  const id = pipeline.pipeline_id;
  let stopping = false;
  let ended = false;
  const pause = new Pause();
  const loop = (async () => {
    let source: SqlSource;
    try {
      source = sqlSourceOf(pipeline.settings);
    } catch (err) {
      if (!(err instanceof SettingsError)) throw err;
      // Nothing to try again until the settings change (a new version starts a new collector).
      await port.failed(id, MSG.invalidSetting(err.message)).catch(() => undefined);
      return;
    }
    let position = pipeline.position;
    let failures = 0;
    let state: "new" | "running" | "error" = "new";
    let lastCause = "";
    let heardAt = 0;
    /** The source answered (a page stored, or nothing newer): running from the first, heard now and then after. */
    const good = async () => {
      const now = Date.now();
      if (state !== "running") {
        await port.running(id, now);
        state = "running";
        heardAt = now;
      } else if (now - heardAt >= HEARD_EVERY_MS) {
        heardAt = now;
        await port.heard(id, now);
      }
    };
    while (!stopping) {
      try {
        // A table's first collection may take many pages: the pipeline runs from the first one stored.
        position = await collect(port, pipeline, source, position, () => stopping, good);
        failures = 0;
        await good();
      } catch (err) {
        if (isMoved(err)) {
          ended = true;
          return;
        }
        failures++;
        if (err instanceof SourceError) {
          if (state !== "error" || err.message !== lastCause) {
            await port.failed(id, err.message).catch(() => undefined);
            state = "error";
            lastCause = err.message;
          }
        } else {
          port.log.warn(MSG.notStored(id, String(err)));
        }
      }
      if (stopping) break;
      await pause.wait(failures > 0 ? Math.min(source.everyMs, BACKOFF_MAX_MS, 1000 * 2 ** Math.min(failures - 1, 16)) : source.everyMs);
    }
  })().catch((err: unknown) => port.log.warn(MSG.notStored(id, String(err))));

  return {
    get ended() {
      return ended;
    },
    async stop() {
      stopping = true;
      pause.wake();
      await loop;
    },
  };
}

/** One collection: pages until the source has nothing newer (or the collector stops); the position it reached. */
async function collect(
  port: CollectorsPort,
  pipeline: CollectedPipeline,
  source: SqlSource,
  from: CollectionPosition,
  stopping: () => boolean,
  good: () => Promise<void>,
): Promise<CollectionPosition> {
  const where = `${source.target.dialect} ${source.target.host}:${source.target.port}`;
  const verdict = await port.checkSource(source.target.host, source.target.port);
  if (!verdict.allowed) {
    port.log.warn(MSG.sourceRefused(pipeline.pipeline_id, where, verdict.reason));
    throw new SourceError(MSG.failedToConnect);
  }
  let session: SqlSession;
  try {
    session = await openSession({ ...source.target, host: verdict.address }, source.database, "ims-collector");
  } catch (err) {
    port.log.warn(MSG.sourceFailed(pipeline.pipeline_id, where, codeOf(err)));
    throw new SourceError(MSG.failedToConnect);
  }
  try {
    const byColumn = columnsOf(source, pipeline.tags);
    const columns = [...byColumn.keys()];
    const tags = [...byColumn.values()];
    const pageRows = Math.max(1, Math.min(port.pageRows, Math.floor(READINGS_PER_PAGE / Math.max(1, pipeline.tags.length))));
    let position = from;
    while (!stopping()) {
      const limit = pageRows + seenCount(position);
      const query = pageQuery(source, columns, position, limit);
      let result;
      try {
        result = await session.query(query.sql, query.params);
      } catch (err) {
        port.log.warn(MSG.sourceFailed(pipeline.pipeline_id, where, codeOf(err)));
        throw new SourceError(MSG.failedToRead(messageOf(err)));
      }
      const rows: SourceRow[] = result.rows.map((r) => {
        const time = String(r.c0);
        const values = columns.map((_, i) => r[`c${i + 1}`]);
        return { time, values, fingerprint: fingerprintOf(time, values) };
      });
      const { fresh, to } = pageOf(rows, position);
      if (fresh.length === 0) break;
      const utc = result.fields.find((f) => f.name === "c0")?.utc ?? false;
      const { readings, unreadable } = readingsOf(fresh, tags, { format: source.timeFormat, timeZone: pipeline.time_zone, utc });
      const { pipeline_id, epoch } = pipeline;
      await port.page({ pipeline_id, from: position, to, epoch, key: pageKey(pipeline_id, epoch, position, to), readings, unreadable });
      position = to;
      // Said again after the next page if the pipelines service did not take it: the page is stored either way.
      await good().catch((err: unknown) => port.log.warn(MSG.notStored(pipeline.pipeline_id, String(err))));
      if (rows.length < limit) break;
    }
    return position;
  } finally {
    await session.close();
  }
}

const codeOf = (err: unknown): string => String((err as { code?: unknown }).code ?? (err as Error).name ?? "error");
/** A driver's message says what is wrong with a table or column; never a credential (those fail the connection, said as such). */
const messageOf = (err: unknown): string => String((err as Error).message ?? err).slice(0, 200);
