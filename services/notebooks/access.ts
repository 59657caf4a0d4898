/**
 * Who sees which notebooks. A user sees and changes its own; a site admin also those of its
 * site's users, a plant admin those of its plant's users (by the owner's scope stored at
 * creation); a SaaS admin every one. Everyone else, a support analyst included, only its own.
 */
import type { Principal } from "../../lib/access";

/** A SQL condition on the `notebooks` row aliased `n`, with its parameters numbered from `first`. */
export function visibleWhere(user: Principal, first: number): { sql: string; params: unknown[] } {
  const p = (i: number) => `$${first + i}`;
  switch (user.user_type) {
    case "saas-admin":
      return { sql: "TRUE", params: [] };
    case "site-admin":
      return { sql: `(n.owner = ${p(0)} OR n.site_id = ${p(1)})`, params: [user.username, user.site_id ?? ""] };
    case "plant-admin":
      return {
        sql: `(n.owner = ${p(0)} OR (n.site_id = ${p(1)} AND n.plant_id = ${p(2)}))`,
        params: [user.username, user.site_id ?? "", user.plant_id ?? ""],
      };
    default:
      return { sql: `n.owner = ${p(0)}`, params: [user.username] };
  }
}
