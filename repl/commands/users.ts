/** Users: create one (the first site or plant admin of an installation), reset a password. */
import { USER_TYPES, type UserType } from "../../lib/access";
import { generatePassword } from "../../services/auth/passwords";
import { callAs } from "../call";
import { optionalText, requireText } from "../format";
import { UsageError, type AdminCommand } from "../types";

interface UserFetch {
  attributes: { site_id: string; plant_id: string; user_type: UserType; country_code: string; mobile_number: string };
}

function userType(value: unknown): UserType {
  const type = requireText(value, "userType");
  if (!(USER_TYPES as readonly string[]).includes(type)) throw new UsageError(`userType must be one of ${USER_TYPES.join(", ")}`);
  return type as UserType;
}

export const userCreate: AdminCommand = {
  command: "user-create <username> <userType>",
  description:
    "Create a user (userType: saas-admin, support-analyst, site-admin, plant-admin, general-user). " +
    "Without --password one is generated and printed once.",
  options: [
    { option: "--mobile <number>", description: "mobile number (required)" },
    { option: "--country <code>", description: "dialing code, e.g. +49 (required)" },
    { option: "--site <siteId>", description: "the user's site (site-admin)" },
    { option: "--plant <plantId>", description: "the user's plant (plant-admin, general-user)" },
    { option: "--password <password>", description: "9+ characters with upper case, lower case and digits" },
    { option: "--modules <list>", description: "comma-separated modules of a general-user, e.g. Alerting,Configuration" },
  ],
  async run(ctx, args) {
    const username = requireText(args.username, "username");
    const type = userType(args.userType);
    const o = args.options;
    const mobile = optionalText(o.mobile, "mobile");
    const country = optionalText(o.country, "country");
    if (!mobile || !country) throw new UsageError("--mobile and --country are required");
    const site = optionalText(o.site, "site");
    const plant = optionalText(o.plant, "plant");
    if (type === "site-admin" && !site) throw new UsageError("a site-admin needs --site");
    if ((type === "plant-admin" || type === "general-user") && !plant) throw new UsageError(`a ${type} needs --plant`);
    const modules = optionalText(o.modules, "modules")?.split(",").map((m) => m.trim()).filter(Boolean);
    const given = optionalText(o.password, "password");
    const password = given ?? generatePassword();
    const res = await callAs<{ message: string }>(ctx, "auth.users.create", {
      username,
      user_type: type,
      mobile_number: mobile,
      country_code: country,
      password,
      ...(site ? { site_id: site } : {}),
      ...(plant ? { plant_id: plant } : {}),
      ...(modules ? { modules } : {}),
    });
    return given ? res.message : `${res.message}\npassword: ${password}  (shown once)`;
  },
};

export const userPassword: AdminCommand = {
  command: "user-password <username>",
  description: "Reset a user's password; without --password a new one is generated and printed once.",
  options: [{ option: "--password <password>", description: "the new password (9+ characters, upper, lower, digits)" }],
  async run(ctx, args) {
    const username = requireText(args.username, "username");
    const given = optionalText(args.options.password, "password");
    const password = given ?? generatePassword();
    const user = await callAs<UserFetch>(ctx, "auth.users.get", { username });
    const a = user.attributes;
    // The update takes the whole user; everything but the password stays as it is.
    const res = await callAs<{ message: string }>(ctx, "auth.users.update", {
      username,
      user_type: a.user_type,
      mobile_number: a.mobile_number,
      country_code: a.country_code,
      password,
    });
    return given ? res.message : `${res.message}\npassword: ${password}  (shown once)`;
  },
};
