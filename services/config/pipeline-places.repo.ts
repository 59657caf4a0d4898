/** The SQL of config's copy of the pipelines' places (table `pipeline_places`, migrations/0005-pipeline-places.ts). */
import { removeUnlisted, type CopyTable } from "../../lib/announcements";
import type { AnnouncedPipeline, PipelineEvent } from "../pipelines/contract";
import { first, inTransaction, rows, type Queryable } from "./sql";

const PLACES: CopyTable = { table: "pipeline_places", key: "pipeline_id", type: "uuid" };

/** A plant's pipelines, and how many of them received events. */
export interface PlantActivity {
  pipelines: number;
  events: number;
}

export interface PipelinePlace {
  site_id: string;
  plant_id: string;
}

/** The latest placement wins; a deleted pipeline stays deleted. */
export async function place(db: Queryable, e: PipelineEvent): Promise<void> {
  await db.query(
    `INSERT INTO pipeline_places AS pp (pipeline_id, site_id, plant_id, at) VALUES ($1, $2, $3, $4)
     ON CONFLICT (pipeline_id) DO UPDATE SET site_id = excluded.site_id, plant_id = excluded.plant_id, at = excluded.at
      WHERE NOT pp.deleted AND pp.at <= excluded.at`,
    [e.pipeline_id, e.site_id, e.plant_id, e.at],
  );
}

/** Marks it deleted, known or not, so that its placement arriving late is refused. */
export async function remove(db: Queryable, e: PipelineEvent): Promise<void> {
  await db.query(
    `INSERT INTO pipeline_places AS pp (pipeline_id, site_id, plant_id, at, deleted) VALUES ($1, $2, $3, $4, true)
     ON CONFLICT (pipeline_id) DO UPDATE SET deleted = true, at = greatest(pp.at, excluded.at)`,
    [e.pipeline_id, e.site_id, e.plant_id, e.at],
  );
}

export async function receivedEvents(db: Queryable, pipeline_id: string): Promise<void> {
  await db.query(`UPDATE pipeline_places SET has_events = true WHERE pipeline_id = $1 AND NOT deleted`, [pipeline_id]);
}

/**
 * One part of the pipelines service's list: its pipelines placed (unless a later placement or a
 * deletion is known), and those of its id range it does not list, placed before it by more than
 * the margin, gone (lib/announcements.ts, `removeUnlisted`).
 */
export function announced(db: Queryable, at: number, after: string | null, through: string | null, pipelines: AnnouncedPipeline[]): Promise<void> {
  const ids = pipelines.map((p) => p.pipeline_id);
  return inTransaction(db, async (tx) => {
    await tx.query(
      `INSERT INTO pipeline_places AS pp (pipeline_id, site_id, plant_id, has_events, at)
       SELECT u.pipeline_id, u.site_id, u.plant_id, u.has_events, $5::bigint
         FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::boolean[]) AS u(pipeline_id, site_id, plant_id, has_events)
       ON CONFLICT (pipeline_id) DO UPDATE SET
         site_id = CASE WHEN pp.at <= excluded.at THEN excluded.site_id ELSE pp.site_id END,
         plant_id = CASE WHEN pp.at <= excluded.at THEN excluded.plant_id ELSE pp.plant_id END,
         at = greatest(pp.at, excluded.at),
         has_events = pp.has_events OR excluded.has_events
        WHERE NOT pp.deleted`,
      [ids, pipelines.map((p) => p.site_id), pipelines.map((p) => p.plant_id), pipelines.map((p) => p.events), at],
    );
    await removeUnlisted(tx, PLACES, { at, after, through }, ids);
  });
}

/** The pipelines of these plants, by plant; a plant without any is not in it. */
export async function activityOfPlants(db: Queryable, plant_ids: string[]): Promise<Map<string, PlantActivity>> {
  const found = await rows<PlantActivity & { plant_id: string }>(
    db,
    `SELECT plant_id, count(*)::int AS pipelines, (count(*) FILTER (WHERE has_events))::int AS events
       FROM pipeline_places WHERE plant_id = ANY($1::uuid[]) AND NOT deleted GROUP BY plant_id`,
    [plant_ids],
  );
  return new Map(found.map((r) => [r.plant_id, { pipelines: r.pipelines, events: r.events }]));
}

export const placeOf = (db: Queryable, pipeline_id: string): Promise<PipelinePlace | null> =>
  first(db, `SELECT site_id, plant_id FROM pipeline_places WHERE pipeline_id = $1 AND NOT deleted`, [pipeline_id]);
