import { sqlMigration } from "../../../mixins/db.mixin";

// When the pipeline's gateway last connected as a Sparkplug node (epoch ms; null: never). Only such
// a pipeline's stop completes at once when no node is connected: a gateway that polls its actions
// over HTTP has no connection to see and must still be told (docs/sparkplug.md#stopping).
export const sparkplugNodes = sqlMigration("PipelinesSparkplugNodes1767250000300", [`ALTER TABLE pipelines ADD COLUMN sparkplug_at bigint NULL`]);
