/** The SQL of vibration captures: stored as sent, deleted with their site's retention. */
import type { EntityManager } from "typeorm";
import { type Queryable } from "./sql";
import type { WaveformMessage } from "./contract";


export async function insertWaveform(tx: EntityManager, w: WaveformMessage, now: number): Promise<void> {
  await tx.query(
    `INSERT INTO waveforms (waveform_id, pipeline_id, site_id, monitor_id, tag, axis, ts, sample_rate_hz, samples, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [w.waveform_id, w.pipeline_id, w.site_id, w.monitor_id, w.tag, w.axis, w.ts, w.sample_rate_hz, w.samples, now],
  );
}

export async function deleteWaveformsBefore(db: Queryable, site_id: string, before: number): Promise<void> {
  await db.query(`DELETE FROM waveforms WHERE site_id = $1 AND ts < $2`, [site_id, before]);
}

