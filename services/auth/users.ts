/**
 * Users: the rules of who may see and manage whom, the spec's
 * shapes, and the operations over the port (create, delete, update, fetch, list, the contact
 * lookup other services use, the first start's admin). Sites and plants are checked in places.ts.
 */
import { MODULES, scopeOf, type ModuleName, type Principal, type UserType } from "../../lib/access";
import { diff, type AuditChange } from "../../lib/audit";
import type { ParamsOf, ReplyOf } from "../../lib/contract";
import { DomainError, badRequest, conflict, isDatabaseUnavailable, notFound } from "../../lib/errors";
import type { AuthContract, UserContact, UserEvent } from "./contract";
import { forgetCredentials } from "./credential-cache";
import { EMAIL, MSG } from "./messages";
import { generatePassword, hashPassword, isStrongPassword } from "./passwords";
import { given, namesFor, placeFor, placeKindOf, placeOf, type PlaceNames } from "./places";
import type { AuthPort, AuthRequestPort } from "./port";
import * as repo from "./users.repo";
import type { UserRow } from "./users.repo";

const isModule = (name: string): name is ModuleName => (MODULES as readonly string[]).includes(name);

export function principalOf(row: Pick<UserRow, "username" | "user_type" | "site_id" | "plant_id" | "modules">): Principal {
  return {
    username: row.username,
    user_type: row.user_type,
    ...placeOf(row),
    modules: row.modules.filter(isModule),
  };
}

/**
 * `modules` on write: an array of names, or an object whose keys with truthy values are the names.
 * Kept in the order the caller wrote them (each once), so a user reads back the list it was given.
 */
export type ModulesInput = string[] | Record<string, unknown>;

export function modulesFrom(input: ModulesInput): ModuleName[] {
  const named = Array.isArray(input) ? input : Object.keys(input).filter((k) => Boolean(input[k]));
  return [...new Set(named.filter(isModule))];
}

/** Modules of a user created without `modules`: a general-user gets none (least privilege), the other types reach every module anyway. */
export function defaultModules(type: UserType): ModuleName[] {
  return type === "general-user" ? [] : [...MODULES];
}

/**
 * Whether a user is visible to the caller. The all-sites types see everyone; a site-admin the
 * users of its site; a plant-admin and a general-user the users of their plant (not the
 * site-admin above them). Everybody sees themselves.
 */
export function userVisibleTo(caller: Principal, user: Pick<UserRow, "username" | "user_type" | "site_id" | "plant_id">): boolean {
  if (user.username === caller.username) return true;
  const scope = scopeOf(caller);
  if (scope.kind === "all") return true;
  if (placeKindOf(user.user_type) === "all" || user.site_id !== scope.site_id) return false;
  if (scope.kind === "site") return true;
  return placeKindOf(user.user_type) === "plant" && user.plant_id === scope.plant_id;
}

export type UserWrite = "create" | "update" | "delete";

const FORBIDDEN: Record<UserWrite, string> = {
  create: MSG.createForbidden,
  update: MSG.updateForbidden,
  delete: MSG.deleteForbidden,
};

export const forbiddenFor = (op: UserWrite): DomainError => new DomainError(403, FORBIDDEN[op]);

/**
 * Whether the caller's type may write a user of the target's type at all; scope is checked
 * apart (a place outside the caller's scope answers as one that does not exist). The spec's
 * 401 texts are for create and update only; every other refusal is 403.
 */
export function typeRefusal(op: UserWrite, caller: UserType, target: UserType): DomainError | null {
  switch (caller) {
    case "saas-admin":
      return null;
    case "support-analyst":
      if (op === "create") return new DomainError(403, MSG.supportAnalystCantCreate);
      if (op === "update") return new DomainError(403, MSG.supportAnalystCantUpdate);
      return forbiddenFor(op);
    case "site-admin":
      if (target === "plant-admin" || target === "general-user") return null;
      if (target === "site-admin" && op !== "delete") {
        return new DomainError(401, op === "create" ? MSG.siteAdminCantCreate : MSG.siteAdminCantUpdate);
      }
      return forbiddenFor(op);
    case "plant-admin":
      if (target === "general-user") return null;
      if (target === "plant-admin" && op !== "delete") {
        return new DomainError(401, op === "create" ? MSG.plantAdminCantCreate : MSG.plantAdminCantUpdate);
      }
      return forbiddenFor(op);
    default:
      return forbiddenFor(op);
  }
}

export interface Privileges {
  user_type: UserType;
  site_id: string | null;
  plant_id: string | null;
  modules: readonly string[];
}

export function privilegesChange(before: Privileges, after: Privileges): boolean {
  return (
    before.user_type !== after.user_type ||
    before.site_id !== after.site_id ||
    before.plant_id !== after.plant_id ||
    before.modules.length !== after.modules.length ||
    before.modules.some((m) => !after.modules.includes(m))
  );
}

/**
 * Who may update whom. An admin may change their own contact details and password (the spec's
 * refusals name "another" admin); only a SaaS admin may change their own type, place or modules.
 * A general-user is refused before this (it writes alert notes and notebooks only). The reserved
 * (bootstrap) admin keeps its type and scope, so the service always has a SaaS admin.
 */
export function updateRefusal(caller: Principal, existing: UserRow, next: Privileges): DomainError | null {
  if (caller.user_type === "support-analyst") return typeRefusal("update", caller.user_type, existing.user_type);
  const changes = privilegesChange({ ...existing, ...placeOf(existing) }, next);
  if (existing.reserved && existing.user_type !== next.user_type) return forbiddenFor("update");
  if (existing.username === caller.username) {
    return changes && caller.user_type !== "saas-admin" ? forbiddenFor("update") : null;
  }
  return typeRefusal("update", caller.user_type, existing.user_type) ?? typeRefusal("update", caller.user_type, next.user_type);
}

/** The spec's place fields: `*` stands for "every plant" (site-admin) and "every site" (the all-sites types). */
function placeView(row: Pick<UserRow, "user_type" | "site_id" | "plant_id">): { site_id: string; plant_id: string } {
  const kind = placeKindOf(row.user_type);
  if (kind === "all") return { site_id: "*", plant_id: "*" };
  if (kind === "site") return { site_id: row.site_id ?? "", plant_id: "*" };
  return { site_id: row.site_id ?? "", plant_id: row.plant_id ?? "" };
}

export interface UserListItem {
  username: string;
  mobile_number: string;
  country_code: string;
  user_type: UserType;
  site_id: string;
  plant_id: string;
  site_name: string | null;
  plant_name: string | null;
  created_at: string;
  last_login_time: string | null;
  permissions: null;
  modules: ModuleName[];
}

export function listItem(row: UserRow, names: PlaceNames): UserListItem {
  return {
    username: row.username,
    mobile_number: row.mobile_number,
    country_code: row.country_code,
    user_type: row.user_type,
    ...placeView(row),
    site_name: names.site_name,
    plant_name: placeKindOf(row.user_type) === "plant" ? names.plant_name : null,
    created_at: String(row.created_at),
    last_login_time: row.last_login_time === null ? null : String(row.last_login_time),
    permissions: null,
    modules: principalOf(row).modules,
  };
}

/**
 * Op 41's shape (the spec's, after an OpenSearch internal user). `hash` is never the password
 * hash: it is always the empty string, so nothing an attacker could crack leaves the service.
 */
export interface UserFetchView {
  hash: string;
  reserved: boolean;
  hidden: boolean;
  backend_roles: string[];
  attributes: {
    site_id: string;
    plant_id: string;
    user_type: UserType;
    created_at: string;
    country_code: string;
    mobile_number: string;
    last_login_time: string | null;
    site_name: string | null;
    plant_name: string | null;
  };
  platform_security_roles: string[];
  static: boolean;
}

export function fetchView(row: UserRow, names: PlaceNames): UserFetchView {
  const item = listItem(row, names);
  return {
    hash: "",
    reserved: row.reserved,
    hidden: row.hidden,
    backend_roles: [row.user_type],
    attributes: {
      site_id: item.site_id,
      plant_id: item.plant_id,
      user_type: item.user_type,
      created_at: item.created_at,
      country_code: item.country_code,
      mobile_number: item.mobile_number,
      last_login_time: item.last_login_time,
      site_name: item.site_name,
      plant_name: item.plant_name,
    },
    platform_security_roles: [],
    static: false,
  };
}

export function userEvent(row: Pick<UserRow, "username" | "user_type" | "site_id" | "plant_id">): UserEvent {
  return { username: row.username, user_type: row.user_type, site_id: row.site_id, plant_id: row.plant_id };
}

type ContactFields = Omit<repo.ContactRow, "created_at"> & { created_at: string | number };

/** What another service may know of a user (`users.resolve`, the events, the announcements). */
export function userContact(row: ContactFields): UserContact {
  return { ...userEvent(row), mobile_number: row.mobile_number, country_code: row.country_code, created_at: Number(row.created_at) };
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
export type CreateParams = UserFields & { password?: string | null };
/** `user`: whom the path names. */
export type UpdateParams = UserFields & { password: string | null; user?: string };
export interface ListParams {
  site_id?: string;
  plant_id?: string;
  limit?: number;
  offset?: number;
}

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

/** A user's contact details for notifications, or null for an unknown user. */
export async function resolveContact(port: AuthPort, p: ParamsOf<AuthContract, "users.resolve">): Promise<ReplyOf<AuthContract, "users.resolve">> {
  const row = await repo.findUser(port.db, p.username.toLowerCase());
  return row ? userContact(row) : null;
}

export async function createUser(port: AuthRequestPort, p: CreateParams): Promise<{ status: "CREATED"; message: string }> {
  const { caller } = port;
  // A user made by an integration's token holds a credential that outlives the token's expiry and revocation: a password
  // the token's holder chose, or the generated one emailed to a username the holder may control (docs/security.md). The
  // gateway refuses a Bearer request already (refusesTokens); a call from another service carrying the meta is refused alike.
  if (port.token) throw new DomainError(403, MSG.unauthorizedOperation);
  const refusal = typeRefusal("create", caller.user_type, p.user_type);
  if (refusal) throw refusal;
  const place = await placeFor(port, caller, p.user_type, { site_id: given(p.site_id), plant_id: given(p.plant_id) });
  if (p.password != null && !isStrongPassword(p.password)) throw badRequest(MSG.weakPassword);
  const username = p.username.toLowerCase();
  if (await repo.findUser(port.db, username)) throw conflict(MSG.userExists);

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
  await port.db.transaction(async (tx) => {
    if (!(await repo.insertUser(tx, user))) throw conflict(MSG.userExists);
    await port.stageAudit(tx, userChange("create", user, diff(null, audited(user))));
    // Inside the transaction: a user whose generated password cannot be sent is not created.
    if (p.password == null) {
      await port.sendEmail({
        to: username,
        subject: EMAIL.accountSubject,
        text: EMAIL.accountText(username, password),
        idempotency_key: `auth:account:${username}:${created_at}`,
        sensitive: true,
      });
    }
  });
  await port.userChanged("auth.user.created", { ...userContact(user), at: Date.now() });
  return { status: "CREATED", message: MSG.userCreated };
}

export async function removeUser(port: AuthRequestPort, p: { username: string }): Promise<{ status: "OK"; message: string }> {
  const { caller } = port;
  const target = await repo.findUser(port.db, p.username.toLowerCase());
  if (!target || !userVisibleTo(caller, target)) throw notFound(MSG.userNotFound);
  if (target.reserved || target.username === caller.username) throw badRequest(MSG.cantDelete);
  const refusal = typeRefusal("delete", caller.user_type, target.user_type);
  if (refusal) throw refusal;
  try {
    await port.auditedWrite(userChange("delete", target, diff(audited(target), null)), (db) => repo.deleteUser(db, target.username));
  } catch (err) {
    // The database away: 503 (lib/errors.ts), which the caller may retry; not a refused delete.
    if (isDatabaseUnavailable(err)) throw err;
    port.logger.error("user delete failed", err);
    throw badRequest(MSG.deleteFailed);
  }
  await forgetCredentials(port, target.username);
  await port.userChanged("auth.user.removed", { ...userEvent(target), created_at: Number(target.created_at), at: Date.now() });
  return { status: "OK", message: MSG.userDeleted };
}

/** The path names the user (the gateway lets it win over the body's `username`); a null password keeps the old one. */
export async function updateUser(port: AuthRequestPort, p: UpdateParams): Promise<{ status: "OK"; message: string }> {
  const { caller } = port;
  if (caller.user_type === "support-analyst") throw new DomainError(403, MSG.supportAnalystCantUpdate);
  // Contract: a general-user writes alert notes and notebooks only, its own record included.
  if (caller.user_type === "general-user") throw new DomainError(403, MSG.updateForbidden);
  // A token is an integration's, not a person's: it may not set a password, and so outlive its own revocation.
  if (port.token && p.password != null) throw new DomainError(403, MSG.unauthorizedOperation);
  const existing = await repo.findUser(port.db, (p.user ?? p.username).toLowerCase());
  if (!existing || !userVisibleTo(caller, existing)) throw notFound(MSG.updateUserNotFound);
  // Type refusals come before places, so an escalation is refused as such and not as a bad place.
  if (existing.username !== caller.username) {
    const refusal = typeRefusal("update", caller.user_type, existing.user_type) ?? typeRefusal("update", caller.user_type, p.user_type);
    if (refusal) throw refusal;
  }
  const place = await placeFor(port, caller, p.user_type, { site_id: given(p.site_id), plant_id: given(p.plant_id) }, existing);
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
  await port.auditedWrite(userChange("update", existing, diff(audited(existing), audited(after))), (db) => repo.updateUser(db, existing.username, change));
  await forgetCredentials(port, existing.username);
  // Every update is told, its contact fields (number, code, type, place) whatever changed: the notifier's copy follows.
  await port.userChanged("auth.user.updated", { ...userContact({ ...existing, ...change }), at: Date.now() });
  return { status: "OK", message: MSG.userUpdated };
}

export async function getUser(port: AuthRequestPort, p: { username: string }): Promise<UserFetchView> {
  const row = await repo.findUser(port.db, p.username.toLowerCase());
  if (!row || !userVisibleTo(port.caller, row)) throw notFound(MSG.userNotFound);
  const names = await namesFor(port, [row]);
  return fetchView(row, names(row));
}

/** `plant_id` `*` (or none, for a SaaS admin) means every plant of the site. */
export async function listUsers(port: AuthRequestPort, p: ListParams): Promise<UserListItem[]> {
  const { caller } = port;
  const siteId = given(p.site_id);
  const plantId = given(p.plant_id);
  if (caller.user_type !== "saas-admin" && (siteId === undefined || plantId === undefined)) {
    throw badRequest(MSG.insufficientInputs);
  }
  // `*` names every site or plant, as list items show it for users not tied to one.
  const only = (id: string | undefined) => (id === undefined || id === "*" ? undefined : id.toLowerCase());
  const { total, rows } = await repo.listUsers(port.db, { site_id: only(siteId), plant_id: only(plantId), scope: scopeOf(caller) }, p);
  const names = await namesFor(port, rows);
  port.setTotal(total);
  return rows.map((row) => listItem(row, names(row)));
}

/** First start with no users: the SaaS admin from ADMIN_USERNAME / ADMIN_PASSWORD (or a generated one, printed once). */
export async function bootstrapAdmin(port: AuthPort, admin: { username: string; password: string | undefined }): Promise<void> {
  await port.db.transaction(async (tx) => {
    // Replicas starting together take turns, so exactly one creates the admin.
    await repo.lockBootstrap(tx);
    if ((await repo.countUsers(tx)) > 0) return;
    const password = admin.password ?? generatePassword();
    await repo.insertReservedAdmin(tx, admin.username, await hashPassword(password), [...MODULES], Date.now());
    if (admin.password) {
      port.logger.info(`Bootstrap SaaS admin created: ${admin.username} (password from ADMIN_PASSWORD)`);
    } else {
      port.logger.warn(`Bootstrap SaaS admin created. Username: ${admin.username}  Password: ${password}  (shown once; set ADMIN_PASSWORD to choose it)`);
    }
  });
}
