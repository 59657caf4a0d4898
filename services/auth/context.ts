/** What auth's action modules see as `this`. */
import type { KeyObject } from "node:crypto";
import type { ActionSchema, Service, ServiceSettingSchema } from "moleculer";
import type { DataSource } from "typeorm";
import type { AuditStreams } from "../../lib/audit";
import type { SharedCache } from "../../lib/cache";
import type { RequestLimit, ThrottleStore } from "../../lib/throttle";
import type { StreamClient } from "../../mixins/stream.mixin";

export interface AuthLocals {
  db: DataSource;
  /** The key of the fingerprints under which verified credentials are cached; new at each start. */
  credentialSecret: KeyObject;
  /** Verified credentials, in the broker's cacher (`credentialKey`). */
  cache: SharedCache;
  /** The stream mixin's client: audit entries are staged through auth's outbox, in the change's transaction. */
  streams: StreamClient<AuditStreams>;
  /** OTP requests per email (docs/security.md), counted where the gateway counts sign-ins: Redis in a cluster. */
  otpLimit: RequestLimit;
  throttleStore: ThrottleStore;
}

export interface AuthMethods {
  forgetCredentials(username: string): Promise<void>;
  bootstrapAdmin(): Promise<void>;
}

export type AuthThis = Service<ServiceSettingSchema> & AuthLocals & AuthMethods;

/** A module of auth's actions, spread into the service's `actions`. */
export type AuthActions = Record<string, ActionSchema<AuthThis>>;
