/** The resources auth answers with, and the field docs its operations share (announced in the service's `openapi` setting). */
import { MODULES, USER_TYPES } from "../../lib/access";
import { arr, bool, nullable, obj, str, type JsonSchema } from "../../lib/openapi-schema";
import type { FieldDoc } from "../../lib/operations";
import { OTP_MAX_WRONG_TRIES, OTP_TTL_MS } from "./otp";
import { PASSWORD_RULE } from "./passwords";
import { TOKEN_MAX_DAYS, TOKEN_SCOPES } from "./tokens";

const described = (schema: JsonSchema, description: string, example?: unknown): JsonSchema => ({
  ...schema,
  description,
  ...(example !== undefined ? { examples: [example] } : {}),
});

const EXAMPLE = {
  username: "asha.patil@example.com",
  mobile_number: "9876543210",
  country_code: "+91",
  site_id: "6f1d7c2e-3b4a-4c5d-8e9f-0a1b2c3d4e5f",
  plant_id: "b2c4e6a8-1d3f-4a5b-9c7d-2e4f6a8b0c1d",
  site_name: "Pune Works",
  plant_name: "Pune Assembly Plant",
  created_at: "1767225600000",
  last_login_time: "1769904000000",
} as const;

const userType = described({ type: "string", enum: [...USER_TYPES] }, "the user's type: what it may manage and see", "plant-admin");
const epochText = (what: string, example: string, orNull = false): JsonSchema => ({
  ...described(orNull ? nullable("string") : str, `${what}, epoch milliseconds as text`, example),
  "x-unit": "epoch ms",
});
const createdAt = epochText("when the user was created", EXAMPLE.created_at);
const lastLogin = epochText("the user's last sign-in; null before the first", EXAMPLE.last_login_time, true);
const siteId = described(str, "the user's site; * for the types that see every site", EXAMPLE.site_id);
const plantId = described(str, "the user's plant; * for a site-admin (every plant of its site) and the types that see every site", EXAMPLE.plant_id);
const siteName = described(nullable("string"), "the site's name; null for the types that see every site", EXAMPLE.site_name);
const plantName = described(nullable("string"), "the plant's name; null unless the user belongs to one plant", EXAMPLE.plant_name);

/** An API token as the list shows it, and as issued (the token itself appears only there). */
export const TOKEN_EXAMPLE = {
  token_id: "5b0e7a52-3c1f-4d8e-9a26-7f4c1b2d9e63",
  name: "historian export",
  scope: "read",
  created_at: "2026-03-02T08:15:00.000Z",
  expires_at: "2026-05-31T08:15:00.000Z",
  last_used_at: "2026-03-09T06:00:12.418Z",
} as const;
export const TOKEN_ISSUED_EXAMPLE = { token_id: TOKEN_EXAMPLE.token_id, token: "ims_3q2kTq0Yb8mXo6VfH1r9cJm4pW7aZs5dE2uLgN0yKxQ" } as const;

const tokenId = described({ type: "string", format: "uuid" }, "the token's id, which names it in the list and to revoke it", TOKEN_EXAMPLE.token_id);
const isoTime = (what: string, example: string | null, orNull = false): JsonSchema =>
  described(orNull ? { type: ["string", "null"], format: "date-time" } : { ...str, format: "date-time" }, `${what}, ISO 8601 (UTC)`, example);

export const AUTH_SCHEMAS = {
  Token: obj(
    {
      token_id: tokenId,
      name: described(str, "what the token is for, as its user named it", TOKEN_EXAMPLE.name),
      scope: described({ type: "string", enum: [...TOKEN_SCOPES] }, "read: GET requests only; write: whatever its user may do", TOKEN_EXAMPLE.scope),
      created_at: isoTime("when the token was issued", TOKEN_EXAMPLE.created_at),
      expires_at: isoTime("when the token stops signing in (an expired token stays listed until revoked)", TOKEN_EXAMPLE.expires_at),
      last_used_at: isoTime("the token's last use, to the minute; null before the first", TOKEN_EXAMPLE.last_used_at, true),
    },
    ["token_id", "name", "scope", "created_at", "expires_at", "last_used_at"],
  ),
  TokenIssued: obj(
    {
      token_id: tokenId,
      token: described(str, "the token, shown this once (only its hash is kept): send it as `Authorization: Bearer <token>`", TOKEN_ISSUED_EXAMPLE.token),
    },
    ["token_id", "token"],
  ),
  User: obj({
    username: described(str, "the user's email address, which names the user", EXAMPLE.username),
    mobile_number: described(str, "mobile number, without the country code", EXAMPLE.mobile_number),
    country_code: described(str, "dialing code of the mobile number", EXAMPLE.country_code),
    user_type: userType,
    site_id: siteId,
    plant_id: plantId,
    site_name: siteName,
    plant_name: plantName,
    created_at: createdAt,
    last_login_time: lastLogin,
    permissions: { description: "always null (kept for the spec's shape)" },
    modules: described(arr({ type: "string", enum: [...MODULES] }), "the modules the user is granted", ["Alerting", "Configuration"]),
  }),
  UserFetch: obj({
    hash: described(str, "always the empty string: no password hash leaves the service", ""),
    reserved: described(bool, "true for the bootstrap SaaS admin, which cannot be deleted and keeps its type", false),
    hidden: described(bool, "a hidden user is left out of lists", false),
    backend_roles: described(arr(str), "the user's type, as the one role", ["plant-admin"]),
    attributes: obj({
      site_id: siteId,
      plant_id: plantId,
      user_type: userType,
      created_at: createdAt,
      country_code: described(str, "dialing code of the mobile number", EXAMPLE.country_code),
      mobile_number: described(str, "mobile number, without the country code", EXAMPLE.mobile_number),
      last_login_time: lastLogin,
      site_name: siteName,
      plant_name: plantName,
    }),
    platform_security_roles: described(arr(str), "always empty", []),
    static: described(bool, "always false", false),
  }),
};

/** One user as the list answers it. */
export const USER_EXAMPLE = {
  username: EXAMPLE.username,
  mobile_number: EXAMPLE.mobile_number,
  country_code: EXAMPLE.country_code,
  user_type: "plant-admin",
  site_id: EXAMPLE.site_id,
  plant_id: EXAMPLE.plant_id,
  site_name: EXAMPLE.site_name,
  plant_name: EXAMPLE.plant_name,
  created_at: EXAMPLE.created_at,
  last_login_time: EXAMPLE.last_login_time,
  permissions: null,
  modules: ["Alerting", "Configuration"],
};

export const USER_FETCH_EXAMPLE = {
  hash: "",
  reserved: false,
  hidden: false,
  backend_roles: ["plant-admin"],
  attributes: {
    site_id: EXAMPLE.site_id,
    plant_id: EXAMPLE.plant_id,
    user_type: "plant-admin",
    created_at: EXAMPLE.created_at,
    country_code: EXAMPLE.country_code,
    mobile_number: EXAMPLE.mobile_number,
    last_login_time: EXAMPLE.last_login_time,
    site_name: EXAMPLE.site_name,
    plant_name: EXAMPLE.plant_name,
  },
  platform_security_roles: [],
  static: false,
};

/** The body of a user's create and update. */
export const USER_FIELDS: Record<string, FieldDoc> = {
  username: { description: "the user's email address; it names the user and is where a generated password is sent", example: EXAMPLE.username },
  mobile_number: { description: "mobile number, without the country code (used for SMS and WhatsApp alerts)", example: EXAMPLE.mobile_number },
  country_code: { description: "dialing code of the mobile number", example: EXAMPLE.country_code },
  user_type: {
    description:
      "saas-admin and support-analyst see every site; a site-admin manages one site, a plant-admin one plant, a general-user works in one plant",
    enum: [...USER_TYPES],
    example: "plant-admin",
  },
  site_id: { description: "the site of a site-admin (required for one); for plant users it follows from plant_id", example: EXAMPLE.site_id },
  plant_id: { description: "the plant of a plant-admin or general-user (required for them)", example: EXAMPLE.plant_id },
  modules: {
    type: `enum(${MODULES.join("|")})[]`,
    description:
      "the modules granted (only a general-user is limited by them); an object whose keys with a true value are the names is accepted too. " +
      "Without it a general-user gets none, the other types every module.",
    example: ["Alerting", "Configuration"],
  },
};

export const passwordDoc = (what: string, example: string): FieldDoc => ({ description: `${what}. ${PASSWORD_RULE}`, example });

/** The body of the password-reset operations. */
export const RESET_FIELDS: Record<string, FieldDoc> = {
  email: { description: "the user's email address (username)", example: EXAMPLE.username },
  otp: {
    description: `the 6-digit one-time password from the email; valid ${OTP_TTL_MS / 60_000} minutes, void after ${OTP_MAX_WRONG_TRIES} wrong tries`,
    example: "482913",
  },
  new_password: passwordDoc("the new password", "Pune2026Works"),
};

/** The body of a token's issue. */
export const TOKEN_FIELDS: Record<string, FieldDoc> = {
  name: { description: "what the token is for (an integration's name), shown in the list", example: TOKEN_EXAMPLE.name },
  scope: {
    description: "read: the token may only make GET requests; write: it may do whatever its user may do",
    enum: [...TOKEN_SCOPES],
    example: TOKEN_EXAMPLE.scope,
  },
  expires_in_days: { description: `days until the token expires, 1 to ${TOKEN_MAX_DAYS}`, unit: "days", example: 90 },
};
