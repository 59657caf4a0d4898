/** The pipelines service's migrations, in order: one file each (a migration's name is what the database recorded). */
import { initial } from "./0001-initial";
import { outboxKey } from "./0002-outbox-key";
import { historyRollups } from "./0003-history-rollups";
import { historyInline } from "./0004-history-inline";
import { idempotencyKeys } from "./0005-idempotency-keys";
import { rollupPending } from "./0006-rollup-pending";
import { eventStripes } from "./0007-event-stripes";
import { PipelinesSealSecrets1767250000000 } from "./0008-seal-secrets";
import { keyRotation } from "./0009-key-rotation";
import { PipelinesEdgeMacNormalised1767250000200 } from "./0010-edge-mac-normalised";
import { sparkplugNodes } from "./0011-sparkplug-nodes";
import { collections } from "./0012-collections";
import { historian } from "./0013-historian";

export const migrations = [
  initial,
  outboxKey,
  historyRollups,
  historyInline,
  idempotencyKeys,
  rollupPending,
  eventStripes,
  PipelinesSealSecrets1767250000000,
  keyRotation,
  PipelinesEdgeMacNormalised1767250000200,
  sparkplugNodes,
  collections,
  historian,
];
