/**
 * A pipeline's settings and their secrets (docs/security.md): stored sealed (lib/secrets.ts), shown
 * "***" by the fetch, opened only where the service itself needs them (a gateway reading its own
 * configuration with its ingest key; the SQL and OPC-UA collectors, through `pipelineSettings`).
 *
 * Rows written before secrets were sealed are sealed by a migration (migrations/0008-seal-secrets.ts);
 * a row that still holds a plain secret (written by an older replica during a rolling upgrade) is
 * read as it is and sealed at its next update.
 */
import { badRequest } from "../../lib/errors";
import {
  destinationChanged,
  isSealed,
  isSecretSetting,
  MASK,
  mapSecretsOf,
  maskedSecrets,
  openSettings,
  seal,
  sealSettings,
} from "../../lib/secrets";
import type { PipelinesEnv } from "./port";
import { MSG } from "./messages";
import * as pipelinesRepo from "./pipelines.repo";

export type Settings = Record<string, unknown>;

/** Settings as a create stores them. */
export const settingsToStore = (env: PipelinesEnv, settings: Settings, stored?: Settings): Settings => sealSettings(env.secretsKey, settings, stored);

/**
 * Settings as an update stores them over `stored` (the row as it is now, locked). A secret sent
 * as "***" keeps the stored one, but only where the connection still goes where it went, as whom
 * it went: when a destination or identity setting changes (`server_address`, `server_url`,
 * `port`, `username`, `user_name`, `database`, ..., lib/secrets.ts), a kept secret would be sent
 * to a host the caller chose, so "***" answers 400 `Invalid input: <the secret's name>` and the
 * caller types the secret again. So does "***" where nothing is stored to keep (a rotation
 * cleared it, or there never was one). The text names the field as the settings' other input
 * errors do (`Invalid input: settings.user_password`).
 */
export function settingsToUpdate(env: PipelinesEnv, settings: Settings, stored: Settings): Settings {
  const masked = maskedSecrets(settings, stored);
  const moved = masked.length > 0 && destinationChanged(stored, settings);
  const refused = masked.find((m) => moved || !m.stored);
  if (refused) throw badRequest(MSG.invalidInput(`settings.${refused.path}`), `settings.${refused.path}`);
  return sealSettings(env.secretsKey, settings, stored);
}

const isObject = (v: unknown): v is Settings => typeof v === "object" && v !== null && !Array.isArray(v) && !isSealed(v);

/**
 * The settings a key rotation leaves (docs/security.md, "Ingest key rotation"). Whoever rotates
 * the key reads the gateway's configuration with the new one, secrets opened. The site's
 * administrators (`keep`: saas-admin, site-admin) may re-point any gateway of the site anyway, so
 * their rotation keeps the secrets; a plant-admin's clears them (null), since it may not read them.
 * Either may enter secrets anew (`entered`: by name at their place in the settings, e.g.
 * `{"user_password": "..."}`). An entered name that is not a secret the settings have, or "***",
 * answers 400 `Invalid input: settings.<name>`.
 */
export function settingsAfterRotation(env: PipelinesEnv, stored: Settings, entered: Settings | undefined, keep: boolean): Settings {
  const base = keep ? stored : mapSecretsOf(stored, () => null);
  return entered ? enter(env.secretsKey, base, stored, entered) : base;
}

function enter(key: Buffer, cleared: Settings, stored: Settings, entered: Settings, at = "settings"): Settings {
  const out = { ...cleared };
  for (const [name, value] of Object.entries(entered)) {
    const field = `${at}.${name}`;
    if (!Object.hasOwn(stored, name)) throw badRequest(MSG.invalidInput(field), field);
    const before = stored[name];
    if (isSecretSetting(name)) {
      const given = (typeof value === "string" && value !== MASK && value.length <= 4096) || (typeof value === "number" && Number.isFinite(value));
      if (!given) throw badRequest(MSG.invalidInput(field), field);
      out[name] = seal(key, value);
    } else if (isObject(value) && isObject(before)) {
      out[name] = enter(key, cleared[name] as Settings, before, value, field);
    } else {
      throw badRequest(MSG.invalidInput(field), field);
    }
  }
  return out;
}

/** A pipeline's settings with its secrets opened, for the service's own use (never an answer to a user); null when there is no such pipeline. */
export async function pipelineSettings(env: PipelinesEnv, pipeline_id: string): Promise<Settings | null> {
  const row = await pipelinesRepo.findPipeline(env.db, pipeline_id);
  return row ? openSettings(env.secretsKey, row.settings) : null;
}

/** Seals the secrets still stored in plain text, leaving sealed ones as they are. */
export const sealPlain = (key: Buffer, settings: Settings): Settings => mapSecretsOf(settings, (v) => (isSealed(v) ? v : seal(key, v)));
