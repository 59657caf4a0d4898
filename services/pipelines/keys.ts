/** A pipeline's ingest key and its rotation (docs/security.md, "Ingest key rotation"). */
import { requireWrite } from "../../lib/access";
import { diff, REDACTED, type AuditChange } from "../../lib/audit";
import { config } from "../../lib/config";
import { badRequest } from "../../lib/errors";
import { MSG } from "./messages";
import { changed, guarded, pipelineChange, visiblePipeline } from "./pipelines";
import * as pipelinesRepo from "./pipelines.repo";
import type { PipelinesPort } from "./port";
import { hashIngestKey, newIngestKey } from "./rules";
import { settingsAfterRotation } from "./settings";

/**
 * `POST /_config/pipelines/<pipeline_id>/_rotate_key`, for either kind, by whoever may update the
 * pipeline: a new ingest key, shown once; the one it replaces keeps working for
 * INGEST_KEY_GRACE_S, so the gateway can be given the new one without losing readings. Only one
 * replaced key is kept: a second rotation within the grace ends the first one's at once.
 *
 * The new key reads the gateway's configuration, secrets opened: a plant-admin's rotation clears
 * the secrets, which it may not read, except those its body enters anew (`{"settings":
 * {"user_password": "..."}}`); the site's administrators' keeps them (settingsAfterRotation).
 */
export async function rotateIngestKey(port: PipelinesPort, params: { pipeline_id: string; settings?: Record<string, unknown> }): Promise<{ ingest_key: string }> {
  requireWrite(port.user, "pipeline", MSG.unauthorizedOperation);
  const current = await visiblePipeline(port, undefined, params.pipeline_id, MSG.invalidPipelineId);
  // Checked before the write too, so that a wrong name answers 400 whatever happens meanwhile.
  const keep = port.user.user_type === "saas-admin" || port.user.user_type === "site-admin";
  settingsAfterRotation(port, current.settings, params.settings, keep);
  return guarded(port, { status: 500, message: MSG.internalError }, async () => {
    const ingest_key = newIngestKey();
    const until = Date.now() + config().ingestKeyGraceS * 1000;
    const rotated = await port.db.transaction(async (tx) => {
      const stored = await pipelinesRepo.lockSettings(tx, current.pipeline_id);
      if (!stored) return false;
      const settings = settingsAfterRotation(port, stored, params.settings, keep);
      if (!(await pipelinesRepo.rotateKey(tx, current.pipeline_id, hashIngestKey(ingest_key), until, settings))) return false;
      const changes: AuditChange["changes"] = {
        ingest_key: [REDACTED, REDACTED],
        previous_key_until: [null, new Date(until).toISOString()],
        ...diff({ settings: stored }, { settings }),
      };
      await port.audit(tx, pipelineChange("rotate_key", current, changes));
      return true;
    });
    if (!rotated) throw badRequest(MSG.invalidPipelineId(params.pipeline_id));
    // Every replica drops the keys it cached of the pipeline: the old one is read again, with its end.
    await changed(port, current.pipeline_id);
    return { ingest_key };
  });
}
