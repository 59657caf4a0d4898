/**
 * Who may see and change what. The gateway and every service
 * decide with these functions, so a rule is written once.
 */
import { DomainError } from "./errors";

export const USER_TYPES = ["saas-admin", "support-analyst", "site-admin", "plant-admin", "general-user"] as const;
export type UserType = (typeof USER_TYPES)[number];

export const MODULES = [
  "Configuration",
  "Alerting",
  "Condition Monitoring",
  "Energy Monitoring",
  "Notebooks",
] as const;
export type ModuleName = (typeof MODULES)[number];

/** The authenticated caller, carried as `ctx.meta.user` from the gateway to every service. */
export interface Principal {
  username: string;
  user_type: UserType;
  site_id: string | null;
  plant_id: string | null;
  modules: ModuleName[];
}

export type Scope =
  | { kind: "all" }
  | { kind: "site"; site_id: string }
  | { kind: "plant"; site_id: string; plant_id: string };

export function scopeOf(user: Principal): Scope {
  switch (user.user_type) {
    case "saas-admin":
    case "support-analyst":
      return { kind: "all" };
    case "site-admin":
      return { kind: "site", site_id: user.site_id ?? "" };
    default:
      return { kind: "plant", site_id: user.site_id ?? "", plant_id: user.plant_id ?? "" };
  }
}

/** Whether a record placed at (site, plant) is visible to the caller. A plant-less record (a site) is visible to its plant users too. */
export function inScope(scope: Scope, place: { site_id: string | null; plant_id?: string | null }): boolean {
  if (scope.kind === "all") return true;
  if (place.site_id !== scope.site_id) return false;
  if (scope.kind === "site") return true;
  return place.plant_id === undefined || place.plant_id === null || place.plant_id === scope.plant_id;
}

export function hasModule(user: Principal, module: ModuleName): boolean {
  return user.user_type !== "general-user" || user.modules.includes(module);
}

/**
 * What a user type may write in the configuration (contract table "may write"). `whole-site` is
 * creating or deleting a site, above a site-admin, who administers the one it has.
 */
export type Writable = "whole-site" | "site" | "plant" | "function" | "asset" | "monitor" | "pipeline" | "watcher";

const WRITES: Record<UserType, readonly Writable[]> = {
  "saas-admin": ["whole-site", "site", "plant", "function", "asset", "monitor", "pipeline", "watcher"],
  "site-admin": ["site", "plant", "function", "asset", "monitor", "pipeline", "watcher"],
  "plant-admin": ["function", "asset", "monitor", "pipeline", "watcher"],
  "support-analyst": [],
  "general-user": [],
};

export function mayWrite(user: Principal, what: Writable): boolean {
  return WRITES[user.user_type].includes(what);
}

/**
 * The write permission of every service: 403 with the service's own text (each has its
 * `MSG.unauthorizedOperation`) unless the caller may write `what`. No caller is another service
 * acting for the system (alerting's hidden watchers), which may.
 */
export function requireWrite(user: Principal | null | undefined, what: Writable, message: string): void {
  if (user && !mayWrite(user, what)) throw new DomainError(403, message);
}
