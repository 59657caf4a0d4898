/**
 * Users: create, delete, update, fetch and list, and the contact lookup other services use. Each
 * handler hands its params to users.ts; who may manage whom is decided there.
 */
import type { Context } from "moleculer";
import { MODULES, USER_TYPES } from "../../lib/access";
import type { ParamsOf, ReplyOf, RequestMeta } from "../../lib/contract";
import { PAGE_FIELDS, PAGE_PARAMS } from "../../lib/paging";
import { MAX_TEXT } from "../../lib/validation";
import type { AuthActions } from "./auth.types";
import type { AuthContract } from "./contract";
import { MSG } from "./messages";
import { passwordDoc, USER_EXAMPLE, USER_FETCH_EXAMPLE, USER_FIELDS } from "./openapi";
import * as users from "./users";
import type { CreateParams, ListParams, UpdateParams } from "./users";

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
    handler(ctx: Context<ParamsOf<AuthContract, "users.resolve">>): Promise<ReplyOf<AuthContract, "users.resolve">> {
      return users.resolveContact(this.system(ctx), ctx.params);
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
    handler(ctx: Context<CreateParams, RequestMeta>) {
      return users.createUser(this.use(ctx), ctx.params);
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
    handler(ctx: Context<{ username: string }, RequestMeta>) {
      return users.removeUser(this.use(ctx), ctx.params);
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
    handler(ctx: Context<UpdateParams, RequestMeta>) {
      return users.updateUser(this.use(ctx), ctx.params);
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
    handler(ctx: Context<{ username: string }, RequestMeta>) {
      return users.getUser(this.use(ctx), ctx.params);
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
    handler(ctx: Context<ListParams, RequestMeta>) {
      return users.listUsers(this.use(ctx), ctx.params);
    },
  },
};
