/** The resources auth answers with, and the field docs its operations share (announced in the service's `openapi` setting). */
import { MODULES, USER_TYPES } from "../../lib/access";
import { arr, bool, nullable, obj, str, type JsonSchema } from "../../lib/openapi-schema";
import type { FieldDoc } from "../../lib/operations";
import { OTP_MAX_WRONG_TRIES, OTP_TTL_MS } from "./otp";
import { PASSWORD_RULE } from "./passwords";

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

export const AUTH_SCHEMAS = {
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
