/**
 * The auth service's texts. Errors are the spec's, word for word (the interface's text, Errors:
 * the user and password-reset rows); success texts the spec leaves to us are marked "ours".
 */
import { WEAK_PASSWORD } from "./passwords";

export const MSG = {
  invalidCredentials: "Invalid credentials",
  insufficientInputs: "Insufficient inputs",
  excessInputs: "Excess inputs",
  weakPassword: WEAK_PASSWORD,
  // A user's site or plant that does not exist, or lies outside the caller's scope (ours, in the config service's words).
  invalidSiteId: (id: string) => `Invalid Site ID: ${id}`,
  invalidPlantId: (id: string) => `Invalid Plant ID: ${id}`,

  // Op 38
  userCreated: "User created successfully", // ours
  userExists: "User already exists",
  // The spec's, from a backend that kept roles apart; a user's type is its role here, so never answered.
  roleMappingFailed: "Error in mapping role!",
  roleCreateFailed: "Error in creating role!",
  createForbidden: "Unauthorized operation!, can't create user",
  supportAnalystCantCreate: "Unauthorized operation! Support Analyst can't create User",
  plantAdminCantCreate: "Unauthorized operation! plant-admin can't create another plant-admin",
  siteAdminCantCreate: "Unauthorized operation! site-admin can't create another site-admin",

  // Op 39
  userDeleted: "User deleted successfully", // ours
  userNotFound: "User not found!",
  cantDelete: "Invalid Operation, can't delete user",
  deleteForbidden: "Unauthorized operation!, can't delete user",
  deleteFailed: "Something went wrong!",

  // Op 40. The spec names the 401 refusals only as "plant-admin and site-admin update refusals": ours, in the create texts' form.
  userUpdated: "User updated successfully", // ours
  updateUserNotFound: "User not found",
  updateForbidden: "Unauthorized operation!, can't update User",
  supportAnalystCantUpdate: "Unauthorized operation! Support Analyst can't update User",
  plantAdminCantUpdate: "Unauthorized operation! plant-admin can't update another plant-admin",
  siteAdminCantUpdate: "Unauthorized operation! site-admin can't update another site-admin",

  // Ops 43-45
  otpSent: "An OTP has been sent to your email address",
  otpVerified: "OTP verified successfully",
  passwordUpdated: "Password updated successfully",
  invalidRequestBody: "Invalid request body",
  userDoesNotExist: "User Doesn't Exists",
  otpGenerateFailed: "Something went wrong.",
  invalidOtp: "Invalid OTP",
  otpExpired: "OTP has expired, please request a new one",
  requestNewOtp: "Please request a new one OTP",
  passwordUpdateFailed: "Failed to update password",

  // API tokens (docs/security.md; ours, in the words of the other new routes)
  tokenRevoked: "Token revoked",
  invalidInput: (field: string) => `Invalid input: ${field}`,
  /** A `read` token's change, and a token issuing tokens (it could outlive its own expiry). */
  unauthorizedOperation: "Unauthorized operation",
} as const;

/** Texts of the emails the auth service sends (ours). Short ASCII lines, so they travel as 7bit and read as written. */
export const EMAIL = {
  otpSubject: "Your password reset code",
  otpText: (otp: string, minutes: number) =>
    [
      `Your one-time password (OTP) is: ${otp}`,
      "",
      `It is valid for ${minutes} minutes and can be used once.`,
      "If you did not ask to reset your password, ignore this email.",
    ].join("\n"),
  lockoutSubject: "Sign-in to your account paused",
  lockoutText: (username: string, address: string, scope: "address" | "account", minutes: number) =>
    [
      scope === "address"
        ? `Several wrong passwords were tried for ${username} from the address ${address}.`
        : `Many wrong passwords were tried for ${username} from several addresses, the last from ${address}.`,
      scope === "address"
        ? `Sign-in from that address is paused for ${minutes} minutes after the last try.`
        : `Sign-in from addresses you have not used before is paused for ${minutes} minutes after the last try;`,
      ...(scope === "account" ? ["the addresses you signed in from before are not affected."] : []),
      "",
      "If it was not you, someone may be guessing your password. To choose a new one,",
      "request a reset code (POST /_config/users/password/generate_otp).",
    ].join("\n"),
  accountSubject: "Your Industrial Monitoring account",
  accountText: (username: string, password: string) =>
    [
      "An account has been created for you.",
      "",
      `Username: ${username}`,
      `Password: ${password}`,
      "",
      "Sign in with HTTP Basic authentication. To choose your own",
      "password, request a reset code (POST /_config/users/password/generate_otp).",
    ].join("\n"),
};
