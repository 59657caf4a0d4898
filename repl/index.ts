/**
 * The REPL: a short-lived node that joins the cluster (same TRANSPORTER and NAMESPACE), with
 * moleculer-repl's own commands plus the admin commands below. Add a command: write it under
 * commands/ and list it in COMMANDS.
 */
import os from "node:os";
import { ServiceBroker } from "moleculer";
import { MODULES, type Principal } from "../lib/access";
import type { AppConfig } from "../lib/config";
import { brokerOptions } from "../moleculer.config";
import { errorText } from "./call";
import { plants, sites } from "./commands/config";
import { history } from "./commands/history";
import { notifications, notificationsRetry } from "./commands/notifications";
import { pipelineShow, pipelineStart, pipelineStop, retentionNow } from "./commands/pipelines";
import { seed } from "./commands/seed";
import { tokenIssue, tokenRevoke } from "./commands/tokens";
import { userCreate, userPassword } from "./commands/users";
import { UsageError, type AdminCommand, type CommandArgs, type ReplContext } from "./types";

export const COMMANDS: AdminCommand[] = [
  userCreate,
  userPassword,
  tokenIssue,
  tokenRevoke,
  sites,
  plants,
  pipelineStart,
  pipelineStop,
  pipelineShow,
  retentionNow,
  history,
  notifications,
  notificationsRetry,
  seed,
];

/**
 * The REPL acts as a SaaS admin. Whoever can run it can already reach the cluster's bus, where
 * every service trusts `meta.user`: the REPL adds no power, it only names it.
 */
export function replPrincipal(): Principal {
  return { username: `repl@${os.hostname()}`, user_type: "saas-admin", site_id: null, plant_id: null, modules: [...MODULES] };
}

/** Runs a command and returns what to print: its output, or the error (with the usage on a bad argument). */
export async function runCommand(cmd: AdminCommand, ctx: ReplContext, args: CommandArgs): Promise<string> {
  try {
    return await cmd.run(ctx, { ...args, options: args.options ?? {} });
  } catch (err) {
    if (err instanceof UsageError) {
      const opts = (cmd.options ?? []).map((o) => `  ${o.option.padEnd(24)} ${o.description}`);
      return [`error: ${err.message}`, `usage: ${cmd.command}`, ...opts].join("\n");
    }
    return `error: ${errorText(err)}`;
  }
}

interface CustomCommand {
  command: string;
  description: string;
  options?: { option: string; description: string }[];
  /** moleculer-repl passes `{ <argument>: value, options: {...} }` (Moleculer's typings say string[]). */
  action(broker: ServiceBroker, args: unknown): Promise<void>;
}

/** moleculer-repl's `customCommands` form of our commands. */
export function customCommands(ctx: ReplContext, print: (text: string) => void = console.log): CustomCommand[] {
  return COMMANDS.map((cmd) => ({
    command: cmd.command,
    description: cmd.description,
    options: cmd.options,
    async action(_broker: ServiceBroker, args: unknown) {
      print(await runCommand(cmd, ctx, args as CommandArgs));
    },
  }));
}

/**
 * A broker that joins the cluster and serves nothing (stopping it never stops a serving node),
 * with the admin commands in its REPL.
 */
export function createReplBroker(cfg: AppConfig): { broker: ServiceBroker; ctx: ReplContext } {
  if (!cfg.transporter) {
    throw new Error("TRANSPORTER is not set: the REPL joins a running cluster over NATS (TRANSPORTER=nats://host:4222, NAMESPACE as the cluster's)");
  }
  const ctx = { user: replPrincipal() } as ReplContext;
  ctx.broker = new ServiceBroker({
    ...brokerOptions(cfg),
    nodeID: `repl-${os.hostname()}-${process.pid}`,
    cacher: null,
    metrics: { enabled: false },
    replOptions: { delimiter: `ims:${cfg.namespace} $`, customCommands: customCommands(ctx) },
    started: () => {
      ctx.joinedAt = Date.now();
    },
  });
  return { broker: ctx.broker, ctx };
}
