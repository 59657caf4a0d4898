/**
 * REPL admin commands: each is a commander-style declaration with help text, and a `run` that
 * checks its arguments, calls the cluster's actions as the REPL's admin principal and returns
 * the text to print. `run` is plain, so tests drive it against a broker without a terminal.
 */
import type { ServiceBroker } from "moleculer";
import type { Principal } from "../lib/access";

export interface CommandArgs {
  [name: string]: unknown;
  options: Record<string, unknown>;
}

export interface ReplContext {
  broker: ServiceBroker;
  /** Who the REPL acts as: the services see this principal as `ctx.meta.user`. */
  user: Principal;
  /** When the broker joined the cluster: until discovery has had its moment, a missing service is waited for. */
  joinedAt?: number;
}

export interface AdminCommand {
  /** Commander syntax: `user-create <username> <userType>`; `[x]` optional, `<x...>` variadic. */
  command: string;
  description: string;
  options?: { option: string; description: string }[];
  run(ctx: ReplContext, args: CommandArgs): Promise<string>;
}

/** A wrong or missing argument: printed with the command's usage. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}
