import { sqlMigration } from "../../../mixins/db.mixin";

// The rollups are written with the readings, in their transaction (readings.repo.ts insertReadings), not
// folded from the stream: no batch claims to keep.
export const historyInline = sqlMigration("PipelinesHistoryInline1766000001000", [`DROP TABLE rolled_batches`]);
