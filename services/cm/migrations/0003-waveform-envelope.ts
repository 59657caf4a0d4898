import { sqlMigration } from "../../../mixins/db.mixin";

export const waveformEnvelope = sqlMigration("CmWaveformEnvelope1764900000000", [
  // The capture itself (float32 bytes), for envelope spectra of any band; null for captures stored before.
  `ALTER TABLE spectra ADD COLUMN waveform bytea NULL`,
  // The envelope spectrum's band and peaks in the default band, found at ingestion for the fault
  // summary when the monitor has a bearing geometry; else null.
  `ALTER TABLE spectra ADD COLUMN envelope jsonb NULL`,
]);
