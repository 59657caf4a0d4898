/** API tokens: issue one for an integration (printed once), revoke one. */
import { callAs } from "../call";
import { requireId, requireText } from "../format";
import { UsageError, type AdminCommand } from "../types";

const SCOPES = ["read", "write"];

function days(value: unknown): number {
  const text = requireText(typeof value === "number" ? String(value) : value, "days");
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < 1 || n > 365) throw new UsageError(`days must be a whole number from 1 to 365, got "${text}"`);
  return n;
}

export const tokenIssue: AdminCommand = {
  command: "token-issue <username> <name> <scope> <days>",
  description:
    "Issue an API token for an integration, acting as the user (scope: read for GET only, write for everything the user may do), " +
    "expiring in 1-365 days; the token is printed once.",
  async run(ctx, args) {
    const username = requireText(args.username, "username");
    const name = requireText(args.name, "name");
    const scope = requireText(args.scope, "scope");
    if (!SCOPES.includes(scope)) throw new UsageError(`scope must be one of ${SCOPES.join(", ")}`);
    const res = await callAs<{ token_id: string; token: string }>(ctx, "auth.tokens.issue", {
      username,
      name,
      scope,
      expires_in_days: days(args.days),
    });
    return `token_id: ${res.token_id}\ntoken: ${res.token}  (shown once; send it as Authorization: Bearer <token>)`;
  },
};

export const tokenRevoke: AdminCommand = {
  command: "token-revoke <username> <tokenId>",
  description: "Revoke an API token of a user: it is refused at once by every gateway.",
  async run(ctx, args) {
    const username = requireText(args.username, "username");
    const tokenId = requireId(args.tokenId, "tokenId");
    return callAs<string>(ctx, "auth.tokens.revoke", { username, token_id: tokenId });
  },
};
