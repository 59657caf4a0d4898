/**
 * auth: users, credentials, OTPs, API tokens, module grants. The gateway asks it who a caller is
 * (`authenticate`); users are managed by the users operations and passwords reset by the
 * password-reset ones. Who may manage whom is decided in users.ts; the OTP's rules are in
 * otp.ts; every query is in repo.ts.
 */
import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import { MODULES } from "../../lib/access";
import { AUDIT_STREAM } from "../../lib/audit";
import { SharedCache } from "../../lib/cache";
import { config } from "../../lib/config";
import { MAX_OTP_REQUESTS_PER_EMAIL, RequestLimit } from "../../lib/throttle";
import { openThrottleStore } from "../../lib/throttle-redis";
import { DbMixin } from "../../mixins/db.mixin";
import { StreamMixin } from "../../mixins/stream.mixin";
import type { AuthLocals, AuthMethods } from "./context";
import { authEvents, type CredentialsChanged } from "./contract";
import { credentialKey, credentialsActions } from "./credentials.actions";
import { lockoutActions } from "./lockout.actions";
import { migrations } from "./migrations";
import { runTokensActions } from "./run-tokens.actions";
import { tokensActions } from "./tokens.actions";
import { AUTH_SCHEMAS } from "./openapi";
import { passwordActions } from "./password.actions";
import { generatePassword, hashPassword, newCredentialSecret } from "./passwords";
import * as repo from "./repo";
import { usersActions } from "./users.actions";

export { principalOf } from "./users";

const AuthService: ServiceSchema<ServiceSettingSchema, AuthMethods, AuthLocals> = {
  name: "auth",
  // The stream mixin first (the database opens before it): its outbox stages the audit entries of auth's changes (lib/audit.ts).
  mixins: [StreamMixin({ outbox: true, batched: [AUDIT_STREAM] }), DbMixin({ schema: "auth", migrations })],
  settings: { openapi: { schemas: AUTH_SCHEMAS } },

  actions: {
    // authenticate (internal, for the gateway)
    ...credentialsActions,
    // users.create, users.remove, users.update, users.get, users.list; users.resolve (internal)
    ...usersActions,
    // password.generateOtp, password.validateOtp, password.update
    ...passwordActions,
    // tokens.issue, tokens.list, tokens.revoke; tokens.authenticate (internal, for the gateway)
    ...tokensActions,
    // tokens.issueForRun, tokens.revokeForRun (internal, for notebook runs' API door)
    ...runTokensActions,
    // lockout.notify (internal, for the gateway's sign-in throttle)
    ...lockoutActions,
  },

  events: {
    /**
     * Another auth replica changed a user's credentials: with a memory cacher (no REDIS_URL) each
     * replica holds verifications of its own, which must go too. With Redis this cleans what the
     * sender already cleaned.
     */
    async "auth.credentials.changed"(ctx: Context<CredentialsChanged>) {
      // A revoked token: auth caches no token verification, and the user's password stands.
      if (ctx.params.token_id !== undefined) return;
      await this.cache.clean(credentialKey(ctx.params.username, "*"));
    },
  },

  methods: {
    /**
     * Drops every cached credential of a user: called whenever password, type, scope or modules
     * change, and on delete. A broadcast, not an emit: every api replica caches principals of its
     * own and must drop them all. It is sent before the operation answers, so the caller's next
     * request finds no replica still holding the old credential.
     */
    async forgetCredentials(username: string) {
      const name = username.toLowerCase();
      await this.cache.clean(credentialKey(name, "*"));
      await authEvents.broadcast(this.broker, "auth.credentials.changed", { username: name });
    },

    /** First start with no users: the SaaS admin from ADMIN_USERNAME / ADMIN_PASSWORD (or a generated one, printed once). */
    async bootstrapAdmin() {
      const cfg = config();
      await this.db.transaction(async (tx) => {
        // Replicas starting together take turns, so exactly one creates the admin.
        await repo.lockBootstrap(tx);
        if ((await repo.countUsers(tx)) > 0) return;
        const password = cfg.adminPassword ?? generatePassword();
        await repo.insertReservedAdmin(tx, cfg.adminUsername, await hashPassword(password), [...MODULES], Date.now());
        if (cfg.adminPassword) {
          this.logger.info(`Bootstrap SaaS admin created: ${cfg.adminUsername} (password from ADMIN_PASSWORD)`);
        } else {
          this.logger.warn(
            `Bootstrap SaaS admin created. Username: ${cfg.adminUsername}  Password: ${password}  (shown once; set ADMIN_PASSWORD to choose it)`,
          );
        }
      });
    },
  },

  created() {
    this.credentialSecret = newCredentialSecret();
    this.cache = new SharedCache(this.broker);
    this.throttleStore = openThrottleStore(config());
    this.otpLimit = new RequestLimit(this.throttleStore, "otp", MAX_OTP_REQUESTS_PER_EMAIL, { windowMs: config().throttleWindowS * 1000 });
  },

  async started() {
    await this.bootstrapAdmin();
  },

  async stopped() {
    await this.throttleStore.close();
  },
};

export default AuthService;
