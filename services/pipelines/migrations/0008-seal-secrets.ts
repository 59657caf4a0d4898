import type { MigrationInterface, QueryRunner } from "typeorm";
import { config } from "../../../lib/config";
import { hasPlainSecret, secretsKey } from "../../../lib/secrets";
import { sealPlain, type Settings } from "../settings";

/** Secrets in settings sealed (settings.ts): those of pipelines created before, with SECRETS_KEY (or the key kept under DATA_DIR). */
export class PipelinesSealSecrets1767250000000 implements MigrationInterface {
  name = "PipelinesSealSecrets1767250000000";

  async up(qr: QueryRunner): Promise<void> {
    const rows = (await qr.query(`SELECT pipeline_id, settings FROM pipelines`)) as { pipeline_id: string; settings: Settings }[];
    const plain = rows.filter((r) => hasPlainSecret(r.settings));
    if (plain.length === 0) return;
    const key = secretsKey(config());
    for (const r of plain) await qr.query(`UPDATE pipelines SET settings = $2 WHERE pipeline_id = $1`, [r.pipeline_id, JSON.stringify(sealPlain(key, r.settings))]);
  }

  async down(): Promise<void> {
    // Secrets are not written back in plain text.
  }
}
