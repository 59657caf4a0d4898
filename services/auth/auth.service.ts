/**
 * auth: users, credentials, OTPs, API tokens, module grants. The gateway asks it who a caller is
 * (`authenticate`); users are managed by the users operations and passwords reset by the
 * password-reset ones. Who may manage whom is decided in users.ts, the OTP's rules in otp.ts.
 */
import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import { ANNOUNCE_EVERY_MS } from "../../lib/announcements";
import { AUDIT_STREAM } from "../../lib/audit";
import { SharedCache } from "../../lib/cache";
import { config } from "../../lib/config";
import { MAX_OTP_REQUESTS_PER_EMAIL, RequestLimit } from "../../lib/throttle";
import { openThrottleStore } from "../../lib/throttle-redis";
import { DbMixin } from "../../mixins/db.mixin";
import { PeriodicMixin, type PeriodicJobs } from "../../mixins/periodic.mixin";
import { StreamMixin } from "../../mixins/stream.mixin";
import { announceToNotifier } from "./announcements";
import type { AuthLocals, AuthMethods, AuthThis } from "./auth.types";
import type { CredentialsChanged } from "./contract";
import { credentialsChangedElsewhere } from "./credential-cache";
import { credentialsActions } from "./credentials.actions";
import { lockoutActions } from "./lockout.actions";
import { migrations } from "./migrations";
import { AUTH_SCHEMAS } from "./openapi";
import { passwordActions } from "./password.actions";
import { newCredentialSecret } from "./passwords";
import { requestPort, systemPort } from "./port";
import { runTokensActions } from "./run-tokens.actions";
import { tokensActions } from "./tokens.actions";
import { bootstrapAdmin } from "./users";
import { usersActions } from "./users.actions";

const jobs: PeriodicJobs<AuthThis> = {
  // The notifier's copy of the contacts is made whole again, whatever event it missed (announcements.ts).
  announceContacts: {
    everyMs: ANNOUNCE_EVERY_MS,
    run() {
      return announceToNotifier(systemPort(this, this.broker), this.broker, true);
    },
  },
};

const AuthService: ServiceSchema<ServiceSettingSchema, AuthMethods, AuthLocals> & { jobs: PeriodicJobs<AuthThis> } = {
  name: "auth",
  // The stream mixin first (the database opens before it): its outbox stages the audit entries of auth's changes (lib/audit.ts).
  mixins: [PeriodicMixin(), StreamMixin({ outbox: true, batched: [AUDIT_STREAM] }), DbMixin({ schema: "auth", migrations })],
  settings: { openapi: { schemas: AUTH_SCHEMAS } },
  jobs,

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
    /** Another auth replica changed a user's credentials: this replica's cached verifications of that user go too. */
    "auth.credentials.changed"(ctx: Context<CredentialsChanged>) {
      return credentialsChangedElsewhere(this.system(ctx), ctx.params);
    },
    /** A notifier node joined: it is told every contact (announcements.ts); before `started` has run, nothing (it announces then). */
    "$services.changed"() {
      return this.announcing ? announceToNotifier(systemPort(this, this.broker), this.broker) : undefined;
    },
    /** Events sent while this node was cut off are lost: every notifier node is told every contact again. */
    "$transporter.connected"() {
      return this.announcing ? announceToNotifier(systemPort(this, this.broker), this.broker, true) : undefined;
    },
  },

  methods: {
    use(ctx) {
      return requestPort(this, ctx);
    },
    system(ctx) {
      return systemPort(this, ctx);
    },
  },

  created() {
    this.announcing = false;
    this.credentialSecret = newCredentialSecret();
    this.cache = new SharedCache(this.broker);
    this.throttleStore = openThrottleStore(config());
    this.otpLimit = new RequestLimit(this.throttleStore, "otp", MAX_OTP_REQUESTS_PER_EMAIL, { windowMs: config().throttleWindowS * 1000 });
  },

  async started() {
    const cfg = config();
    await bootstrapAdmin(systemPort(this, this.broker), { username: cfg.adminUsername, password: cfg.adminPassword });
    this.announcing = true;
    await announceToNotifier(systemPort(this, this.broker), this.broker);
  },

  async stopped() {
    await this.throttleStore.close();
  },
};

export default AuthService;
