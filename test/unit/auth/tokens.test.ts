/** API tokens' pure rules: shape, hash, expiry, the once-a-minute use, and who may manage whose. */
import { createHash } from "node:crypto";
import type { Principal, UserType } from "../../../lib/access";
import {
  LAST_USED_EVERY_MS,
  dueForTouch,
  expiresAt,
  generateToken,
  isLive,
  looksLikeToken,
  tokenHash,
  tokenRefusal,
  tokenView,
} from "../../../services/auth/tokens";
import type { UserRow } from "../../../services/auth/users.repo";

const row = (username: string, user_type: UserType, site_id: string | null = null, plant_id: string | null = null): UserRow => ({
  username,
  password_hash: "x",
  user_type,
  site_id,
  plant_id,
  mobile_number: "",
  country_code: "",
  modules: [],
  created_at: "0",
  last_login_time: null,
  reserved: false,
  hidden: false,
});
const caller = (r: UserRow): Principal => ({ username: r.username, user_type: r.user_type, site_id: r.site_id, plant_id: r.plant_id, modules: [] });

describe("tokens", () => {
  it("are 256 random bits behind a prefix, each new, stored as their SHA-256", () => {
    const a = generateToken();
    expect(a).toMatch(/^ims_[A-Za-z0-9_-]{43}$/);
    expect(looksLikeToken(a)).toBe(true);
    expect(generateToken()).not.toBe(a);
    for (const bad of ["", "ims_", `${a}x`, a.replace("ims_", "imx_"), `Basic ${a}`]) expect(looksLikeToken(bad)).toBe(false);
    expect(tokenHash(a)).toBe(createHash("sha256").update(a).digest("hex"));
  });

  it("expire days after issue, and are live strictly before", () => {
    expect(expiresAt(1000, 2)).toBe(1000 + 2 * 86_400_000);
    expect(isLive({ expires_at: "5000" }, 4999)).toBe(true);
    expect(isLive({ expires_at: "5000" }, 5000)).toBe(false);
  });

  it("record a use when none was recorded within the last minute", () => {
    expect(dueForTouch({ last_used_at: null }, 10)).toBe(true);
    expect(dueForTouch({ last_used_at: "1000" }, 1000 + LAST_USED_EVERY_MS - 1)).toBe(false);
    expect(dueForTouch({ last_used_at: "1000" }, 1000 + LAST_USED_EVERY_MS)).toBe(true);
  });

  it("are listed with ISO 8601 times and without token or hash", () => {
    const view = tokenView({
      token_id: "id",
      username: "u",
      name: "n",
      scope: "read",
      token_hash: "h",
      created_at: "0",
      expires_at: "86400000",
      last_used_at: null,
      issued_by: "admin@localhost",
    });
    expect(view).toEqual({ token_id: "id", name: "n", scope: "read", created_at: "1970-01-01T00:00:00.000Z", expires_at: "1970-01-02T00:00:00.000Z", last_used_at: null });
  });
});

describe("tokenRefusal: who manages whose tokens", () => {
  const saas = row("saas@x", "saas-admin");
  const support = row("support@x", "support-analyst");
  const siteA = row("site.a@x", "site-admin", "A");
  const siteB = row("site.b@x", "site-admin", "B");
  const plantA1 = row("plant.a1@x", "plant-admin", "A", "A1");
  const plantA1bis = row("plant.a1bis@x", "plant-admin", "A", "A1");
  const plantB1 = row("plant.b1@x", "plant-admin", "B", "B1");
  const generalA1 = row("general.a1@x", "general-user", "A", "A1");
  const generalA1bis = row("general.a1bis@x", "general-user", "A", "A1");

  const outcome = (c: UserRow, target: UserRow) => {
    const r = tokenRefusal(caller(c), target);
    return r ? `${r.code} ${r.message}` : "ok";
  };

  it("lets every user manage its own", () => {
    for (const u of [saas, support, siteA, plantA1, generalA1]) expect(outcome(u, u)).toBe("ok");
  });

  it("lets an admin manage the users it may update, and refuses with the users routes' texts", () => {
    expect(outcome(saas, siteA)).toBe("ok");
    expect(outcome(saas, support)).toBe("ok");
    expect(outcome(siteA, plantA1)).toBe("ok");
    expect(outcome(siteA, generalA1)).toBe("ok");
    expect(outcome(plantA1, generalA1)).toBe("ok");
    expect(outcome(siteA, siteB)).toBe("404 User not found!");
    expect(outcome(siteA, plantB1)).toBe("404 User not found!");
    expect(outcome(siteA, saas)).toBe("404 User not found!");
    expect(outcome(plantA1, siteA)).toBe("404 User not found!");
    expect(outcome(plantA1, plantA1bis)).toBe("401 Unauthorized operation! plant-admin can't update another plant-admin");
    expect(outcome(generalA1, generalA1bis)).toBe("403 Unauthorized operation!, can't update User");
    expect(outcome(support, generalA1)).toBe("403 Unauthorized operation! Support Analyst can't update User");
  });
});
