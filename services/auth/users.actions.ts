/**
 * Users: create, delete, update, fetch and list, and the contact lookup other services use.
 * Who may manage whom is decided in users.ts; sites and plants are checked in places.ts.
 */
import type { Context } from "moleculer";
import { MODULES, scopeOf, USER_TYPES, type UserType } from "../../lib/access";
import { auditedWrite, diff, stageAudit, type AuditChange } from "../../lib/audit";
import type { ParamsOf, ReplyOf, RequestMeta } from "../../lib/contract";
import { DomainError, badRequest, conflict, isDatabaseUnavailable, notFound } from "../../lib/errors";
import { PAGE_FIELDS, PAGE_PARAMS, setTotal } from "../../lib/paging";
import { MAX_TEXT } from "../../lib/validation";
import { notifierClient } from "../notifier/contract";
import type { AuthActions } from "./context";
import { authEvents, type AuthContract } from "./contract";
import { EMAIL, MSG } from "./messages";
import { passwordDoc, USER_EXAMPLE, USER_FETCH_EXAMPLE, USER_FIELDS } from "./openapi";
import { generatePassword, hashPassword, isStrongPassword } from "./passwords";
import { given, namesFor, placeFor } from "./places";
import * as repo from "./repo";
import {
  defaultModules,
  fetchView,
  listItem,
  modulesFrom,
  typeRefusal,
  updateRefusal,
  userEvent,
  userVisibleTo,
  type ModulesInput,
  type UserRow,
} from "./users";

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
/** `user`: whom the path names. */
type UpdateParams = UserFields & { password: string | null; user?: string };
interface ListParams {
  site_id?: string;
  plant_id?: string;
  limit?: number;
  offset?: number;
}

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

/** What the audit trail records of a user: its grants and contact details, its password only as set ("***"). */
const audited = (u: Pick<UserRow, "user_type" | "site_id" | "plant_id" | "mobile_number" | "country_code" | "modules" | "password_hash">) => ({
  user_type: u.user_type,
  site_id: u.site_id,
  plant_id: u.plant_id,
  mobile_number: u.mobile_number,
  country_code: u.country_code,
  modules: u.modules,
  password_hash: u.password_hash,
});

/** Where a user's audit entries belong: its site, and its plant (a site admin's `*`, every plant, is none in particular). */
export const userPlace = (u: Pick<UserRow, "site_id" | "plant_id">): Pick<AuditChange, "site_id" | "plant_id"> => ({
  site_id: u.site_id,
  plant_id: u.plant_id === "*" ? null : u.plant_id,
});

const userChange = (action: AuditChange["action"], u: Pick<UserRow, "username" | "site_id" | "plant_id">, changes: AuditChange["changes"]): AuditChange => ({
  action,
  entity_type: "user",
  entity_id: u.username,
  ...userPlace(u),
  changes,
});

const PLACE_ERRORS: [number, string][] = [
  [400, MSG.insufficientInputs],
  [400, MSG.invalidSiteId("<site_id>")],
  [400, MSG.invalidPlantId("<plant_id>")],
];
const pathUser = { description: "the user's username (email address)", example: USER_EXAMPLE.username };

export const usersActions: AuthActions = {
  /** Internal: a user's contact details for notifications (alerting), or null. */
  "users.resolve": {
    visibility: "public",
    readOnly: true,
    params: { username: text },
    async handler(ctx: Context<ParamsOf<AuthContract, "users.resolve">>): Promise<ReplyOf<AuthContract, "users.resolve">> {
      const row = await repo.findUser(this.db, ctx.params.username.toLowerCase());
      if (!row) return null;
      return { ...userEvent(row), mobile_number: row.mobile_number, country_code: row.country_code, created_at: Number(row.created_at) };
    },
  },

  "users.create": {
    http: {
      op: 38,
      routes: ["POST /_config/users"],
      group: "users",
      summary: "Create a user",
      description:
        "Without a password, one is generated and emailed to the user; the user is not created if that email cannot be sent. " +
        "An API token may not create users (403 `Unauthorized operation`), with a password or without one.",
      refusesTokens: true,
      fields: {
        ...USER_FIELDS,
        password: passwordDoc("the user's password; without one, a generated password is emailed to the user", "Pune2026Works"),
      },
      answer: { status: "CREATED", message: MSG.userCreated },
      errors: [
        [403, MSG.createForbidden],
        [403, MSG.supportAnalystCantCreate],
        [409, MSG.userExists],
        [409, MSG.roleMappingFailed],
        [409, MSG.roleCreateFailed],
        [400, MSG.weakPassword],
        [403, MSG.unauthorizedOperation],
        [401, MSG.plantAdminCantCreate],
        [401, MSG.siteAdminCantCreate],
        ...PLACE_ERRORS,
      ],
    },
    params: { ...userFields, password: { ...text, optional: true, nullable: true } },
    async handler(ctx: Context<CreateParams, RequestMeta>) {
      const caller = ctx.meta.user;
      const p = ctx.params;
      // A user made by an integration's token holds a credential that outlives the token's expiry and revocation: a password
      // the token's holder chose, or the generated one emailed to a username the holder may control (docs/security.md). The
      // gateway refuses a Bearer request already (refusesTokens); a call from another service carrying the meta is refused alike.
      if (ctx.meta.token) throw new DomainError(403, MSG.unauthorizedOperation);
      const refusal = typeRefusal("create", caller.user_type, p.user_type);
      if (refusal) throw refusal;
      const place = await placeFor(ctx, caller, p.user_type, { site_id: given(p.site_id), plant_id: given(p.plant_id) });
      if (p.password != null && !isStrongPassword(p.password)) throw badRequest(MSG.weakPassword);
      const username = p.username.toLowerCase();
      if (await repo.findUser(this.db, username)) throw conflict(MSG.userExists);

      const password = p.password ?? generatePassword();
      const created_at = Date.now();
      const user = {
        username,
        password_hash: await hashPassword(password),
        user_type: p.user_type,
        ...place,
        mobile_number: p.mobile_number,
        country_code: p.country_code,
        modules: p.modules ? modulesFrom(p.modules) : defaultModules(p.user_type),
        created_at,
      };
      await this.db.transaction(async (tx) => {
        if (!(await repo.insertUser(tx, user))) throw conflict(MSG.userExists);
        await stageAudit(this.streams, tx, ctx, userChange("create", user, diff(null, audited(user))));
        // Inside the transaction: a user whose generated password cannot be sent is not created.
        if (p.password == null) {
          await notifierClient.call(ctx, "email.send", {
            to: username,
            subject: EMAIL.accountSubject,
            text: EMAIL.accountText(username, password),
            idempotency_key: `auth:account:${username}:${created_at}`,
            sensitive: true,
          });
        }
      });
      void authEvents.emit(ctx, "auth.user.created", userEvent({ username, user_type: p.user_type, ...place }));
      return { status: "CREATED", message: MSG.userCreated };
    },
  },

  "users.remove": {
    http: {
      op: 39,
      routes: ["DELETE /_config/users/:username"],
      group: "users",
      summary: "Delete a user",
      description: "Deletes the account; the bootstrap SaaS admin and the caller's own account cannot be deleted.",
      fields: { username: pathUser },
      answer: { status: "OK", message: MSG.userDeleted },
      errors: [[404, MSG.userNotFound], [400, MSG.cantDelete], [400, MSG.deleteFailed], [403, MSG.deleteForbidden]],
    },
    params: { username: text },
    async handler(ctx: Context<{ username: string }, RequestMeta>) {
      const caller = ctx.meta.user;
      const target = await repo.findUser(this.db, ctx.params.username.toLowerCase());
      if (!target || !userVisibleTo(caller, target)) throw notFound(MSG.userNotFound);
      if (target.reserved || target.username === caller.username) throw badRequest(MSG.cantDelete);
      const refusal = typeRefusal("delete", caller.user_type, target.user_type);
      if (refusal) throw refusal;
      try {
        await auditedWrite(this.db, this.streams, ctx, userChange("delete", target, diff(audited(target), null)), (db) => repo.deleteUser(db, target.username));
      } catch (err) {
        // The database away: 503 (lib/errors.ts), which the caller may retry; not a refused delete.
        if (isDatabaseUnavailable(err)) throw err;
        this.logger.error("user delete failed", err);
        throw badRequest(MSG.deleteFailed);
      }
      await this.forgetCredentials(target.username);
      void authEvents.emit(ctx, "auth.user.removed", { ...userEvent(target), created_at: Number(target.created_at) });
      return { status: "OK", message: MSG.userDeleted };
    },
  },

  /** The path names the user (the gateway lets it win over the body's `username`); a null password keeps the old one. */
  "users.update": {
    http: {
      op: 40,
      // `:user`, not `:username`: the body's username is required too (spec op 40), and a path
      // parameter of the same name would overwrite it before it could be checked.
      routes: ["PUT /_config/users/:user"],
      group: "users",
      summary: "Update a user",
      description:
        "modules left out keep the user's modules; site_id and plant_id left out keep the user's place where the new type has one of the same kind. " +
        "A new password revokes the user's API tokens; an API token may not set one (403 `Unauthorized operation`).",
      fields: {
        // Documented as `{username}`, as the user's other routes at this path are.
        user: { ...pathUser, name: "username" },
        ...USER_FIELDS,
        username: { description: "the user's username, as in the path (it does not rename the user)", example: USER_EXAMPLE.username },
        password: { ...passwordDoc("the new password, or null to keep the current one", "Pune2026Works"), example: null },
      },
      answer: { status: "OK", message: MSG.userUpdated },
      errors: [
        [403, MSG.updateForbidden],
        [403, MSG.supportAnalystCantUpdate],
        [404, MSG.updateUserNotFound],
        [401, MSG.plantAdminCantUpdate],
        [401, MSG.siteAdminCantUpdate],
        [400, MSG.weakPassword],
        ...PLACE_ERRORS,
      ],
    },
    // The REPL names the user by `username` alone, so `user` is optional. The body's username is
    // required by the spec; it does not rename the user.
    params: { ...userFields, password: { ...text, nullable: true }, user: optionalText },
    async handler(ctx: Context<UpdateParams, RequestMeta>) {
      const caller = ctx.meta.user;
      const p = ctx.params;
      if (caller.user_type === "support-analyst") throw new DomainError(403, MSG.supportAnalystCantUpdate);
      // Contract: a general-user writes alert notes and notebooks only, its own record included.
      if (caller.user_type === "general-user") throw new DomainError(403, MSG.updateForbidden);
      // A token is an integration's, not a person's: it may not set a password, and so outlive its own revocation.
      if (ctx.meta.token && p.password != null) throw new DomainError(403, MSG.unauthorizedOperation);
      const existing = await repo.findUser(this.db, (p.user ?? p.username).toLowerCase());
      if (!existing || !userVisibleTo(caller, existing)) throw notFound(MSG.updateUserNotFound);
      // Type refusals come before places, so an escalation is refused as such and not as a bad place.
      if (existing.username !== caller.username) {
        const refusal =
          typeRefusal("update", caller.user_type, existing.user_type) ?? typeRefusal("update", caller.user_type, p.user_type);
        if (refusal) throw refusal;
      }
      const place = await placeFor(ctx, caller, p.user_type, { site_id: given(p.site_id), plant_id: given(p.plant_id) }, existing);
      const modules = p.modules ? modulesFrom(p.modules) : existing.modules;
      const refusal = updateRefusal(caller, existing, { user_type: p.user_type, ...place, modules });
      if (refusal) throw refusal;
      if (p.password !== null && !isStrongPassword(p.password)) throw badRequest(MSG.weakPassword);
      const password_hash = p.password === null ? null : await hashPassword(p.password);

      const change = {
        mobile_number: p.mobile_number,
        country_code: p.country_code,
        user_type: p.user_type,
        ...place,
        modules,
        password_hash,
      };
      const after = { ...change, password_hash: password_hash ?? existing.password_hash };
      await auditedWrite(this.db, this.streams, ctx, userChange("update", existing, diff(audited(existing), audited(after))), (db) =>
        repo.updateUser(db, existing.username, change),
      );
      await this.forgetCredentials(existing.username);
      void authEvents.emit(ctx, "auth.user.updated", userEvent({ username: existing.username, user_type: p.user_type, ...place }));
      return { status: "OK", message: MSG.userUpdated };
    },
  },

  "users.get": {
    http: {
      op: 41,
      routes: ["GET /_config/users/:username"],
      group: "users",
      summary: "Fetch a user",
      fields: { username: pathUser },
      answer: { schema: "$UserFetch", example: USER_FETCH_EXAMPLE },
      errors: [[404, MSG.userNotFound]],
    },
    params: { username: text },
    async handler(ctx: Context<{ username: string }, RequestMeta>) {
      const row = await repo.findUser(this.db, ctx.params.username.toLowerCase());
      if (!row || !userVisibleTo(ctx.meta.user, row)) throw notFound(MSG.userNotFound);
      const names = await namesFor(ctx, [row]);
      return fetchView(row, names(row));
    },
  },

  /** `plant_id` `*` (or none, for a SaaS admin) means every plant of the site. */
  "users.list": {
    http: {
      op: 42,
      routes: ["GET /_config/users/_list"],
      group: "users",
      summary: "List users",
      description: "The users the caller may see, oldest first. Every type but a SaaS admin names a site and a plant (* for every one).",
      fields: {
        site_id: { description: "the site whose users to list, or * for every site; required except for a SaaS admin", example: USER_EXAMPLE.site_id },
        plant_id: { description: "the plant whose users to list, or * for every plant; required except for a SaaS admin", example: "*" },
        ...PAGE_FIELDS,
      },
      answer: { schema: "$User[]", example: [USER_EXAMPLE] },
      errors: [[400, MSG.insufficientInputs], [400, MSG.excessInputs]],
    },
    params: {
      site_id: optionalText,
      plant_id: optionalText,
      ...PAGE_PARAMS,
      $$messages: { unknown: MSG.excessInputs },
    },
    async handler(ctx: Context<ListParams, RequestMeta>) {
      const caller = ctx.meta.user;
      const siteId = given(ctx.params.site_id);
      const plantId = given(ctx.params.plant_id);
      if (caller.user_type !== "saas-admin" && (siteId === undefined || plantId === undefined)) {
        throw badRequest(MSG.insufficientInputs);
      }
      // `*` names every site or plant, as list items show it for users not tied to one.
      const only = (id: string | undefined) => (id === undefined || id === "*" ? undefined : id.toLowerCase());
      const { total, rows } = await repo.listUsers(
        this.db,
        { site_id: only(siteId), plant_id: only(plantId), scope: scopeOf(caller) },
        ctx.params,
      );
      const names = await namesFor(ctx, rows);
      setTotal(ctx, total);
      return rows.map((row) => listItem(row, names(row)));
    },
  },
};
