/**
 * auth: users, credentials, OTPs, module grants. The gateway asks it who a caller is
 * (`authenticate`); users are managed by operations 38-42 and passwords reset by 43-45.
 * Who may manage whom is decided in users.ts; the OTP's rules are in otp.ts.
 */
import { randomBytes, type KeyObject } from "node:crypto";
import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import type { DataSource, EntityManager } from "typeorm";
import { inScope, MODULES, scopeOf, USER_TYPES, type Principal, type UserType } from "../../lib/access";
import { config } from "../../lib/config";
import { DomainError, badRequest, conflict, internal, notFound } from "../../lib/errors";
import { isId } from "../../lib/ids";
import { MAX_TEXT, type InputMessages } from "../../lib/validation";
import { DbMixin } from "../../mixins/db.mixin";
import { EMAIL, MSG } from "./messages";
import { migrations } from "./migrations";
import { OTP_TTL_MS, looksLikeOtp, otpState, wrongTry, type OtpRow } from "./otp";
import {
  credentialFingerprint,
  generateOtp,
  generatePassword,
  hashOtp,
  hashPassword,
  isStrongPassword,
  newCredentialSecret,
  verifyPassword,
} from "./passwords";
import {
  defaultModules,
  fetchView,
  listItem,
  modulesFrom,
  placeKindOf,
  placeOf,
  principalOf,
  typeRefusal,
  updateRefusal,
  userEvent,
  userVisibleTo,
  type ModulesInput,
  type Place,
  type PlaceNames,
  type CredentialsChanged,
  type UserContact,
  type UserRow,
} from "./users";
import { PAGE_PARAMS, setTotal } from "../../lib/paging";

export { principalOf } from "./users";
export type { CredentialsChanged, UserContact, UserEvent } from "./users";

type Meta = { user: Principal; $responseHeaders?: Record<string, string> };

interface SiteRef {
  site_id: string;
  site_name: string;
}
interface PlantRef {
  plant_id: string;
  plant_name: string;
  site_id: string;
  site_name: string;
}

interface UserFields {
  username: string;
  mobile_number: string;
  country_code: string;
  user_type: UserType;
  site_id?: string;
  plant_id?: string;
  modules?: ModulesInput;
}
type CreateParams = UserFields & { password?: string | null };
type UpdateParams = UserFields & { password: string | null };
interface ListParams {
  site_id?: string;
  plant_id?: string;
  limit?: number;
  offset?: number;
}

type OtpTry = "none" | "expired" | "wrong" | "match";

interface AuthLocals {
  db: DataSource;
  credentialSecret: KeyObject;
}

interface AuthMethods {
  findUser(username: string): Promise<UserRow | undefined>;
  placeFor(ctx: Context, caller: Principal, type: UserType, given: Partial<Place>, current?: UserRow): Promise<Place>;
  namesFor(ctx: Context, rows: UserRow[]): Promise<(row: UserRow) => PlaceNames>;
  tryOtp(username: string, otp: string, onMatch: (tx: EntityManager) => Promise<void>): Promise<OtpTry>;
  forgetCredentials(username: string): Promise<void>;
  bootstrapAdmin(): Promise<void>;
}

/** The longest username and password `authenticate` will look at (a stored username is at most MAX_TEXT). */
const MAX_USERNAME = 320;
const MAX_PASSWORD = 1024;

const credentialKey = (username: string, fingerprint: string): string => `auth.credential:${username}:${fingerprint}`;

/** Whether a user row still grants what an earlier read of it granted: same password hash, same principal. */
const sameGrant = (before: UserRow, after: UserRow): boolean =>
  before.password_hash === after.password_hash && JSON.stringify(principalOf(before)) === JSON.stringify(principalOf(after));

/** Usernames are email addresses; `admin@localhost` is one too, so no dot is required after the @. */
const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+$/;
const text = { type: "string", max: MAX_TEXT } as const;
const optionalText = { ...text, optional: true } as const;
const userFields = {
  username: { ...text, pattern: EMAIL_PATTERN },
  mobile_number: text,
  country_code: text,
  user_type: { type: "enum", values: [...USER_TYPES] },
  site_id: optionalText,
  plant_id: optionalText,
  modules: {
    type: "multi",
    optional: true,
    rules: [
      { type: "array", max: MODULES.length, items: { type: "enum", values: [...MODULES] } },
      { type: "record", key: { type: "enum", values: [...MODULES] }, value: { type: "any" } },
    ],
  },
} as const;
/** Password-reset bodies answer every input fault with the spec's one text. */
const resetMessages: InputMessages = {
  insufficient: MSG.invalidRequestBody,
  unknown: MSG.invalidRequestBody,
  invalid: MSG.invalidRequestBody,
};

/** An empty string for a site or plant is as good as none: forms send "" for a field left blank. */
const given = (value: string | undefined): string | undefined => (value === undefined || value === "" ? undefined : value);

const AuthService: ServiceSchema<ServiceSettingSchema, AuthMethods, AuthLocals> = {
  name: "auth",
  mixins: [DbMixin({ schema: "auth", migrations })],

  actions: {
    /** Who the caller of an HTTP request is; 401 `Invalid credentials` otherwise. */
    authenticate: {
      visibility: "public",
      params: { username: "string", password: "string" },
      async handler(ctx: Context<{ username: string; password: string }>) {
        // Too long to be anyone's: wrong credentials (contract), refused before any hash is paid for.
        if (ctx.params.username.length > MAX_USERNAME || ctx.params.password.length > MAX_PASSWORD) {
          throw new DomainError(401, MSG.invalidCredentials);
        }
        const username = ctx.params.username.toLowerCase();
        const cacher = ctx.broker.cacher;
        const key = credentialKey(username, credentialFingerprint(this.credentialSecret, username, ctx.params.password));
        const cached = cacher ? ((await cacher.get(key)) as Principal | null) : null;
        if (cached) return cached;
        const row = await this.findUser(username);
        if (!row || !(await verifyPassword(row.password_hash, ctx.params.password))) {
          throw new DomainError(401, MSG.invalidCredentials);
        }
        await this.db.query(`UPDATE users SET last_login_time = $2 WHERE username = $1`, [username, Date.now()]);
        const principal = principalOf(row);
        if (!cacher || config().authCacheTtlS <= 0) return principal;
        await cacher.set(key, principal, config().authCacheTtlS);
        // A change committed while this request checked the old row has cleaned the cache before the set above:
        // read the row again, so that the old credential or grant is not cached past the change.
        const now = await this.findUser(username);
        if (now && sameGrant(row, now)) return principal;
        await cacher.del(key);
        if (!now || (now.password_hash !== row.password_hash && !(await verifyPassword(now.password_hash, ctx.params.password)))) {
          throw new DomainError(401, MSG.invalidCredentials);
        }
        return principalOf(now);
      },
    },

    /** Internal: a user's contact details for notifications (alerting), or null. */
    "users.resolve": {
      visibility: "public",
      params: { username: text },
      async handler(ctx: Context<{ username: string }>): Promise<UserContact | null> {
        const row = await this.findUser(ctx.params.username.toLowerCase());
        if (!row) return null;
        return { ...userEvent(row), mobile_number: row.mobile_number, country_code: row.country_code };
      },
    },

    /** Op 38. */
    "users.create": {
      params: { ...userFields, password: { ...text, optional: true, nullable: true } },
      async handler(ctx: Context<CreateParams, Meta>) {
        const caller = ctx.meta.user;
        const p = ctx.params;
        const refusal = typeRefusal("create", caller.user_type, p.user_type);
        if (refusal) throw refusal;
        const place = await this.placeFor(ctx, caller, p.user_type, { site_id: given(p.site_id), plant_id: given(p.plant_id) });
        if (p.password != null && !isStrongPassword(p.password)) throw badRequest(MSG.weakPassword);
        const username = p.username.toLowerCase();
        if (await this.findUser(username)) throw conflict(MSG.userExists);

        const password = p.password ?? generatePassword();
        const modules = p.modules ? modulesFrom(p.modules) : defaultModules(p.user_type);
        const createdAt = Date.now();
        const passwordHash = await hashPassword(password);
        await this.db.transaction(async (tx) => {
          const inserted: unknown[] = await tx.query(
            `INSERT INTO users (username, password_hash, user_type, site_id, plant_id, mobile_number, country_code, modules, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
             ON CONFLICT (username) DO NOTHING RETURNING username`,
            [username, passwordHash, p.user_type, place.site_id, place.plant_id, p.mobile_number, p.country_code, modules, createdAt],
          );
          if (inserted.length === 0) throw conflict(MSG.userExists);
          // Inside the transaction: a user whose generated password cannot be sent is not created.
          if (p.password == null) {
            await ctx.call("notifier.email.send", {
              to: username,
              subject: EMAIL.accountSubject,
              text: EMAIL.accountText(username, password),
              idempotency_key: `auth:account:${username}:${createdAt}`,
              sensitive: true,
            });
          }
        });
        ctx.emit("auth.user.created", userEvent({ username, user_type: p.user_type, ...place }));
        return { status: "CREATED", message: MSG.userCreated };
      },
    },

    /** Op 39. */
    "users.remove": {
      params: { username: text },
      async handler(ctx: Context<{ username: string }, Meta>) {
        const caller = ctx.meta.user;
        const target = await this.findUser(ctx.params.username.toLowerCase());
        if (!target || !userVisibleTo(caller, target)) throw notFound(MSG.userNotFound);
        if (target.reserved || target.username === caller.username) throw badRequest(MSG.cantDelete);
        const refusal = typeRefusal("delete", caller.user_type, target.user_type);
        if (refusal) throw refusal;
        try {
          await this.db.query(`DELETE FROM users WHERE username = $1`, [target.username]);
        } catch (err) {
          this.logger.error("user delete failed", err);
          throw badRequest(MSG.deleteFailed);
        }
        await this.forgetCredentials(target.username);
        ctx.emit("auth.user.removed", userEvent(target));
        return { status: "OK", message: MSG.userDeleted };
      },
    },

    /** Op 40. The path names the user (the gateway lets it win over the body's `username`); a null password keeps the old one. */
    "users.update": {
      // `user`: whom the path names (the REPL names them by `username` alone). The body's
      // username is required by the spec; it does not rename the user.
      params: { ...userFields, password: { ...text, nullable: true }, user: { ...text, optional: true } },
      async handler(ctx: Context<UpdateParams & { user?: string }, Meta>) {
        const caller = ctx.meta.user;
        const p = ctx.params;
        if (caller.user_type === "support-analyst") throw new DomainError(403, MSG.supportAnalystCantUpdate);
        // Contract: a general-user writes alert notes and notebooks only, its own record included.
        if (caller.user_type === "general-user") throw new DomainError(403, MSG.updateForbidden);
        const existing = await this.findUser((p.user ?? p.username).toLowerCase());
        if (!existing || !userVisibleTo(caller, existing)) throw notFound(MSG.updateUserNotFound);
        // Type refusals come before places, so an escalation is refused as such and not as a bad place.
        if (existing.username !== caller.username) {
          const refusal =
            typeRefusal("update", caller.user_type, existing.user_type) ?? typeRefusal("update", caller.user_type, p.user_type);
          if (refusal) throw refusal;
        }
        const place = await this.placeFor(ctx, caller, p.user_type, { site_id: given(p.site_id), plant_id: given(p.plant_id) }, existing);
        const modules = p.modules ? modulesFrom(p.modules) : existing.modules;
        const refusal = updateRefusal(caller, existing, { user_type: p.user_type, ...place, modules });
        if (refusal) throw refusal;
        if (p.password !== null && !isStrongPassword(p.password)) throw badRequest(MSG.weakPassword);
        const passwordHash = p.password === null ? null : await hashPassword(p.password);

        await this.db.query(
          `UPDATE users SET mobile_number = $2, country_code = $3, user_type = $4, site_id = $5, plant_id = $6,
                            modules = $7, password_hash = COALESCE($8, password_hash)
            WHERE username = $1`,
          [existing.username, p.mobile_number, p.country_code, p.user_type, place.site_id, place.plant_id, modules, passwordHash],
        );
        await this.forgetCredentials(existing.username);
        ctx.emit("auth.user.updated", userEvent({ username: existing.username, user_type: p.user_type, ...place }));
        return { status: "OK", message: MSG.userUpdated };
      },
    },

    /** Op 41. */
    "users.get": {
      params: { username: text },
      async handler(ctx: Context<{ username: string }, Meta>) {
        const row = await this.findUser(ctx.params.username.toLowerCase());
        if (!row || !userVisibleTo(ctx.meta.user, row)) throw notFound(MSG.userNotFound);
        const names = await this.namesFor(ctx, [row]);
        return fetchView(row, names(row));
      },
    },

    /** Op 42. `plant_id` `*` (or none, for a SaaS admin) means every plant of the site. */
    "users.list": {
      params: {
        site_id: optionalText,
        plant_id: optionalText,
        ...PAGE_PARAMS,
        $$messages: { unknown: MSG.excessInputs },
      },
      async handler(ctx: Context<ListParams, Meta>) {
        const caller = ctx.meta.user;
        const siteId = given(ctx.params.site_id);
        const plantId = given(ctx.params.plant_id);
        if (caller.user_type !== "saas-admin" && (siteId === undefined || plantId === undefined)) {
          throw badRequest(MSG.insufficientInputs);
        }
        const where = ["NOT hidden"];
        const args: unknown[] = [];
        const filter = (sql: string, value: unknown) => {
          args.push(value);
          where.push(sql.replace("?", `$${args.length}`));
        };
        // `*` names every site or plant, as list items show it for users not tied to one.
        if (siteId !== undefined && siteId !== "*") filter("site_id = ?", siteId.toLowerCase());
        if (plantId !== undefined && plantId !== "*") filter("plant_id = ?", plantId.toLowerCase());
        // The caller's own scope always applies, whatever the filter asks for.
        const scope = scopeOf(caller);
        if (scope.kind !== "all") filter("site_id = ?", scope.site_id);
        if (scope.kind === "plant") filter("(plant_id = ? AND user_type IN ('plant-admin', 'general-user'))", scope.plant_id);

        const clause = where.join(" AND ");
        const [{ total }] = (await this.db.query(`SELECT count(*)::int AS total FROM users WHERE ${clause}`, args)) as { total: number }[];
        const page = [ctx.params.limit ?? null, ctx.params.offset ?? 0];
        const rows: UserRow[] = await this.db.query(
          `SELECT * FROM users WHERE ${clause} ORDER BY created_at, username LIMIT $${args.length + 1} OFFSET $${args.length + 2}`,
          [...args, ...page],
        );
        const names = await this.namesFor(ctx, rows);
        setTotal(ctx, total);
        return rows.map((row) => listItem(row, names(row)));
      },
    },

    /** Op 43. */
    "password.generateOtp": {
      params: { email: text },
      async handler(ctx: Context<{ email: string }>) {
        const username = ctx.params.email.toLowerCase();
        if (!(await this.findUser(username))) throw conflict(MSG.userDoesNotExist);
        const otp = generateOtp();
        const now = Date.now();
        try {
          const otpHash = await hashOtp(otp);
          // A new OTP replaces the previous one and its count of wrong tries; the email is sent before the commit, so an OTP that could not be sent never becomes live.
          await this.db.transaction(async (tx) => {
            await tx.query(
              `INSERT INTO otps (username, otp_hash, expires_at, attempts, verified) VALUES ($1, $2, $3, 0, false)
               ON CONFLICT (username) DO UPDATE SET otp_hash = EXCLUDED.otp_hash, expires_at = EXCLUDED.expires_at, attempts = 0, verified = false`,
              [username, otpHash, now + OTP_TTL_MS],
            );
            await ctx.call("notifier.email.send", {
              to: username,
              subject: EMAIL.otpSubject,
              text: EMAIL.otpText(otp, OTP_TTL_MS / 60_000),
              idempotency_key: `auth:otp:${username}:${now}:${randomBytes(4).toString("hex")}`,
              sensitive: true,
            });
          });
        } catch (err) {
          this.logger.error("OTP generation failed", err);
          throw internal(MSG.otpGenerateFailed);
        }
        return MSG.otpSent;
      },
    },

    /** Op 44. 401 `Invalid OTP`: a live OTP that the code does not match; 404 `Invalid OTP`: no live OTP at all. */
    "password.validateOtp": {
      params: { email: text, otp: text, $$messages: resetMessages },
      async handler(ctx: Context<{ email: string; otp: string }>) {
        const username = ctx.params.email.toLowerCase();
        if (!(await this.findUser(username))) throw conflict(MSG.userDoesNotExist);
        const outcome = await this.tryOtp(username, ctx.params.otp, async (tx) => {
          await tx.query(`UPDATE otps SET verified = true WHERE username = $1`, [username]);
        });
        if (outcome === "none") throw notFound(MSG.invalidOtp);
        if (outcome === "expired") throw conflict(MSG.otpExpired);
        if (outcome === "wrong") throw new DomainError(401, MSG.invalidOtp);
        return MSG.otpVerified;
      },
    },

    /** Op 45. The OTP is used up by the change; a wrong code counts as a wrong try and, as the spec lists no 401 here, answers 404. */
    "password.update": {
      params: { email: text, otp: text, new_password: text, $$messages: resetMessages },
      async handler(ctx: Context<{ email: string; otp: string; new_password: string }>) {
        const username = ctx.params.email.toLowerCase();
        if (!isStrongPassword(ctx.params.new_password)) throw badRequest(MSG.weakPassword);
        if (!(await this.findUser(username))) throw conflict(MSG.userDoesNotExist);
        const passwordHash = await hashPassword(ctx.params.new_password);
        let outcome: OtpTry;
        try {
          outcome = await this.tryOtp(username, ctx.params.otp, async (tx) => {
            await tx.query(`UPDATE users SET password_hash = $2 WHERE username = $1`, [username, passwordHash]);
            await tx.query(`DELETE FROM otps WHERE username = $1`, [username]);
          });
        } catch (err) {
          this.logger.error("password update failed", err);
          throw internal(MSG.passwordUpdateFailed);
        }
        if (outcome === "none" || outcome === "wrong") throw notFound(MSG.requestNewOtp);
        if (outcome === "expired") throw conflict(MSG.otpExpired);
        await this.forgetCredentials(username);
        return MSG.passwordUpdated;
      },
    },
  },

  events: {
    /**
     * Another auth replica changed a user's credentials: with a memory cacher (no REDIS_URL) each
     * replica holds verifications of its own, which must go too. With Redis this cleans what the
     * sender already cleaned.
     */
    async "auth.credentials.changed"(ctx: Context<CredentialsChanged>) {
      await this.broker.cacher?.clean(credentialKey(ctx.params.username, "*"));
    },
  },

  methods: {
    async findUser(username: string) {
      const rows: UserRow[] = await this.db.query(`SELECT * FROM users WHERE username = $1`, [username]);
      return rows[0];
    },

    /**
     * Where a user of `type` belongs, from the request (or, on update, the user's current place
     * when the request leaves it out). A site or plant outside the caller's scope answers as
     * one that does not exist.
     */
    async placeFor(ctx: Context, caller: Principal, type: UserType, request: Partial<Place>, current?: UserRow) {
      const kind = placeKindOf(type);
      if (kind === "all") return { site_id: null, plant_id: null };
      const scope = scopeOf(caller);
      const kept = current && placeKindOf(current.user_type) === kind ? placeOf(current) : undefined;
      if (kind === "site") {
        const siteId = request.site_id ?? kept?.site_id;
        if (!siteId) throw badRequest(MSG.insufficientInputs);
        const site = isId(siteId) ? await ctx.call<SiteRef | null, { site_id: string }>("config.sites.resolve", { site_id: siteId }) : null;
        if (!site || !inScope(scope, { site_id: site.site_id })) throw badRequest(MSG.invalidSiteId(siteId));
        return { site_id: site.site_id, plant_id: null };
      }
      const plantId = request.plant_id ?? kept?.plant_id;
      if (!plantId) throw badRequest(MSG.insufficientInputs);
      const plant = isId(plantId)
        ? await ctx.call<PlantRef | null, { plant_id: string }>("config.plants.resolve", { plant_id: plantId })
        : null;
      if (!plant || !inScope(scope, { site_id: plant.site_id, plant_id: plant.plant_id })) {
        throw badRequest(MSG.invalidPlantId(plantId));
      }
      // A user's site follows from its plant; a site that says otherwise is a mistake of the caller.
      if (request.site_id && request.site_id.toLowerCase() !== plant.site_id) throw badRequest(MSG.invalidSiteId(request.site_id));
      return { site_id: plant.site_id, plant_id: plant.plant_id };
    },

    /** Site and plant names of users, from the config service (its resolve actions are cached). */
    async namesFor(ctx: Context, rows: UserRow[]) {
      const siteIds = new Set<string>();
      const plantIds = new Set<string>();
      for (const row of rows) {
        const kind = placeKindOf(row.user_type);
        if (kind === "site" && row.site_id) siteIds.add(row.site_id);
        if (kind === "plant" && row.plant_id) plantIds.add(row.plant_id);
      }
      const [sites, plants] = await Promise.all([
        Promise.all([...siteIds].map((site_id) => ctx.call<SiteRef | null, { site_id: string }>("config.sites.resolve", { site_id }))),
        Promise.all([...plantIds].map((plant_id) => ctx.call<PlantRef | null, { plant_id: string }>("config.plants.resolve", { plant_id }))),
      ]);
      const siteNames = new Map(sites.filter((s): s is SiteRef => !!s).map((s) => [s.site_id, s.site_name]));
      const plantRefs = new Map(plants.filter((p): p is PlantRef => !!p).map((p) => [p.plant_id, p]));
      return (row: UserRow): PlaceNames => {
        const kind = placeKindOf(row.user_type);
        if (kind === "site") return { site_name: siteNames.get(row.site_id ?? "") ?? null, plant_name: null };
        if (kind === "plant") {
          const plant = plantRefs.get(row.plant_id ?? "");
          return { site_name: plant?.site_name ?? null, plant_name: plant?.plant_name ?? null };
        }
        return { site_name: null, plant_name: null };
      };
    },

    /**
     * One try of a code against the user's OTP, under a row lock so parallel guesses are all
     * counted. The try is committed before the caller answers, whatever the answer is.
     */
    async tryOtp(username: string, otp: string, onMatch: (tx: EntityManager) => Promise<void>) {
      return this.db.transaction(async (tx): Promise<OtpTry> => {
        const rows: OtpRow[] = await tx.query(`SELECT * FROM otps WHERE username = $1 FOR UPDATE`, [username]);
        const row = rows[0];
        const state = otpState(row, Date.now());
        if (!row || state !== "live") return state === "live" ? "none" : state;
        if (looksLikeOtp(otp) && (await verifyPassword(row.otp_hash, otp))) {
          await onMatch(tx);
          return "match";
        }
        const next = wrongTry(row);
        if (next.void) await tx.query(`DELETE FROM otps WHERE username = $1`, [username]);
        else await tx.query(`UPDATE otps SET attempts = $2 WHERE username = $1`, [username, next.attempts]);
        return "wrong";
      });
    },

    /**
     * Drops every cached credential of a user: called whenever password, type, scope or modules
     * change, and on delete. A broadcast, not an emit: every api replica caches principals of its
     * own and must drop them all. It is sent before the operation answers, so the caller's next
     * request finds no replica still holding the old credential.
     */
    async forgetCredentials(username: string) {
      const name = username.toLowerCase();
      await this.broker.cacher?.clean(credentialKey(name, "*"));
      await this.broker.broadcast("auth.credentials.changed", { username: name } satisfies CredentialsChanged);
    },

    /** First start with no users: the SaaS admin from ADMIN_USERNAME / ADMIN_PASSWORD (or a generated one, printed once). */
    async bootstrapAdmin() {
      const cfg = config();
      await this.db.transaction(async (tx) => {
        await tx.query(`SELECT pg_advisory_xact_lock(hashtext('ims:auth:bootstrap'))`);
        const [{ n }] = (await tx.query(`SELECT count(*)::int AS n FROM users`)) as { n: number }[];
        if (n > 0) return;
        const password = cfg.adminPassword ?? generatePassword();
        await tx.query(
          `INSERT INTO users (username, password_hash, user_type, site_id, plant_id, modules, created_at, reserved)
           VALUES ($1, $2, 'saas-admin', NULL, NULL, $3, $4, true)`,
          [cfg.adminUsername, await hashPassword(password), [...MODULES], Date.now()],
        );
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
  },

  async started() {
    await this.bootstrapAdmin();
  },
};

export default AuthService;
