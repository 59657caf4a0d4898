/**
 * A pipeline's settings and their secrets (EXTENSIONS §8): stored sealed (lib/secrets.ts), shown
 * "***" by the fetch, opened only where the service itself needs them (a gateway reading its own
 * configuration with its ingest key; the SQL and OPC-UA collectors, through `pipelineSettings`).
 *
 * Rows written before secrets were sealed are sealed by a migration (PipelinesSealSecrets, below);
 * a row that still holds a plain secret (written by an older replica during a rolling upgrade) is
 * read as it is and sealed at its next update.
 */
import type { MigrationInterface, QueryRunner } from "typeorm";
import { config } from "../../lib/config";
import { hasPlainSecret, isSealed, mapSecretsOf, openSettings, seal, sealSettings, secretsKey } from "../../lib/secrets";
import type { PipelinesEnv } from "./context";
import * as repo from "./repo";

export type Settings = Record<string, unknown>;

/** Settings as a create stores them. */
export const settingsToStore = (env: PipelinesEnv, settings: Settings, stored?: Settings): Settings => sealSettings(env.secretsKey, settings, stored);

/** A pipeline's settings with its secrets opened, for the service's own use (never an answer to a user); null when there is no such pipeline. */
export async function pipelineSettings(env: PipelinesEnv, pipeline_id: string): Promise<Settings | null> {
  const row = await repo.findPipeline(env.db, pipeline_id);
  return row ? openSettings(env.secretsKey, row.settings) : null;
}

/** Seals the secrets still stored in plain text, leaving sealed ones as they are. */
export const sealPlain = (key: Buffer, settings: Settings): Settings => mapSecretsOf(settings, (v) => (isSealed(v) ? v : seal(key, v)));

/** Issue 25: the secrets of pipelines created before are sealed with SECRETS_KEY (or the key kept under DATA_DIR). */
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
