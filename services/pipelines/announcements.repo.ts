/** The SQL of `pipelines.pipelines.announced` (announcements.ts): every pipeline's place, and whether it received events. */
import type { DataSource } from "typeorm";
import type { AnnouncedPipeline } from "./contract";

/** Up to `limit` pipelines in id order after `after` (null: from the first). */
export const pipelinesAfter = async (db: DataSource, after: string | null, limit: number): Promise<AnnouncedPipeline[]> =>
  (await db.query(
    `SELECT p.pipeline_id, p.site_id, p.plant_id,
            EXISTS (SELECT 1 FROM pipeline_events e WHERE e.pipeline_id = p.pipeline_id AND e.total_events > 0) AS events
       FROM pipelines p WHERE ($1::uuid IS NULL OR p.pipeline_id > $1::uuid) ORDER BY p.pipeline_id LIMIT $2`,
    [after, limit],
  )) as AnnouncedPipeline[];
