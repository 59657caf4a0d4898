import { JOBS_TABLE_DDL } from "../../../lib/daily-job";
import { sqlMigration } from "../../../mixins/db.mixin";

// The daily retention run's claim (lib/daily-job).
export const jobs = sqlMigration("CmJobs1764000000000", [JOBS_TABLE_DDL]);
