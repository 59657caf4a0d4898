/**
 * Tokens of notebook runs (for the notebooks service): a `read` token of the notebook's owner for
 * one run, which the run's API door (services/notebooks/api-door.ts) sends with each request of
 * the kernel, and which the door revokes when the run ends. They sign in like any read token, so
 * a run reads with exactly its owner's rights; they are not the user's integrations, so the token
 * list does not show them, and a run's own audit entry says who ran it.
 */
import type { ParamsOf, ReplyOf } from "../../lib/contract";
import { newId } from "../../lib/ids";
import type { AuthContract } from "./contract";
import type { AuthPort } from "./port";
import { generateToken, tokenHash } from "./tokens";
import * as repo from "./tokens.repo";

export async function issueRunToken(port: AuthPort, p: ParamsOf<AuthContract, "tokens.issueForRun">): Promise<ReplyOf<AuthContract, "tokens.issueForRun">> {
  const now = Date.now();
  // Tokens of runs that never ended (a replica died mid-run) go once expired.
  await repo.deleteExpiredRunTokens(port.db, now);
  const token = generateToken();
  const token_id = newId();
  const issued = await repo.insertRunToken(port.db, {
    token_id,
    username: p.username.toLowerCase(),
    owner_since: p.owner_since ?? null,
    token_hash: tokenHash(token),
    created_at: now,
    expires_at: now + p.ttl_s * 1000,
  });
  return issued ? { token_id, token } : null;
}

export async function revokeRunToken(port: AuthPort, p: ParamsOf<AuthContract, "tokens.revokeForRun">): Promise<ReplyOf<AuthContract, "tokens.revokeForRun">> {
  const username = await repo.deleteRunToken(port.db, p.token_id);
  if (username === null) return false;
  // Every gateway replica stops trusting it before the run is recorded as ended.
  await port.credentialsChanged({ username, token_id: p.token_id });
  return true;
}
