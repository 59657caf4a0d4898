/** What auth's action modules see as `this`. */
import type { KeyObject } from "node:crypto";
import type { ActionSchema, Service, ServiceSettingSchema } from "moleculer";
import type { DataSource } from "typeorm";
import type { SharedCache } from "../../lib/cache";

export interface AuthLocals {
  db: DataSource;
  /** The key of the fingerprints under which verified credentials are cached; new at each start. */
  credentialSecret: KeyObject;
  /** Verified credentials, in the broker's cacher (`credentialKey`). */
  cache: SharedCache;
}

export interface AuthMethods {
  forgetCredentials(username: string): Promise<void>;
  bootstrapAdmin(): Promise<void>;
}

export type AuthThis = Service<ServiceSettingSchema> & AuthLocals & AuthMethods;

/** A module of auth's actions, spread into the service's `actions`. */
export type AuthActions = Record<string, ActionSchema<AuthThis>>;
