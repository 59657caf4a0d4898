/**
 * Users in the spec's shapes, and the rules of who may see and manage whom (contract: Identity
 * and access). Pure: the service file does the I/O and asks these functions what to answer.
 */
import { MODULES, scopeOf, type ModuleName, type Principal, type UserType } from "../../lib/access";
import { DomainError } from "../../lib/errors";
import type { UserEvent } from "./contract";
import { MSG } from "./messages";

/** A row of auth.users. bigint columns arrive from pg as text, which is the spec's form for the two timestamps. */
export interface UserRow {
  username: string;
  password_hash: string;
  user_type: UserType;
  site_id: string | null;
  plant_id: string | null;
  mobile_number: string;
  country_code: string;
  modules: string[];
  created_at: string;
  last_login_time: string | null;
  reserved: boolean;
  hidden: boolean;
}

/** Where a user belongs: both null for the types that see every site, plant null for a site-admin. */
export interface Place {
  site_id: string | null;
  plant_id: string | null;
}

export interface PlaceNames {
  site_name: string | null;
  plant_name: string | null;
}

export type PlaceKind = "all" | "site" | "plant";

export function placeKindOf(type: UserType): PlaceKind {
  if (type === "saas-admin" || type === "support-analyst") return "all";
  return type === "site-admin" ? "site" : "plant";
}

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

/** The place a row stands for, whatever was stored in the columns its type does not use. */
export function placeOf(row: Pick<UserRow, "user_type" | "site_id" | "plant_id">): Place {
  const kind = placeKindOf(row.user_type);
  return { site_id: kind === "all" ? null : row.site_id, plant_id: kind === "plant" ? row.plant_id : null };
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
