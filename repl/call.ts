/** Calling the cluster's actions from the REPL, and saying plainly when a service is not there. */
import type { ServiceBroker } from "moleculer";
import type { ReplContext } from "./types";

/** An action that no running node offers: the command answers `not available: …` instead of failing. */
export class NotAvailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = "NotAvailable";
  }
}

const DISCOVERY_WAIT_MS = 3000;

function serviceOf(action: string): string {
  return action.split(".")[0]!;
}

function serviceDeployed(broker: ServiceBroker, service: string): boolean {
  return broker.registry.getServiceList({ onlyAvailable: true, skipInternal: true }).some((s) => s.name === service);
}

function actionOffered(broker: ServiceBroker, action: string): boolean {
  return broker.registry.getActionList({ onlyAvailable: true, skipInternal: true }).some((a) => a.name === action);
}

/**
 * Whether the action can be called now; a node that has just joined may not have heard of every
 * service yet, so shortly after joining a missing service is waited for before it is called absent.
 */
export async function ensureAvailable(broker: ServiceBroker, action: string, joinedAt = 0): Promise<void> {
  const service = serviceOf(action);
  const wait = DISCOVERY_WAIT_MS - (Date.now() - joinedAt);
  if (!serviceDeployed(broker, service) && wait > 0) {
    await broker.waitForServices(service, wait).catch(() => undefined);
  }
  if (!serviceDeployed(broker, service)) {
    throw new NotAvailable(`not available: ${service} not deployed`);
  }
  if (!actionOffered(broker, action)) throw new NotAvailable(`not available: ${action} is not provided by ${service} yet`);
}

/** Calls an action as the REPL's principal. */
export async function callAs<T>(ctx: ReplContext, action: string, params: Record<string, unknown> = {}): Promise<T> {
  await ensureAvailable(ctx.broker, action, ctx.joinedAt);
  try {
    return await ctx.broker.call<T, Record<string, unknown>>(action, params, { meta: { user: ctx.user } });
  } catch (err) {
    // The service left between the check and the call (a node stopping, a rollout).
    const name = (err as { name?: string }).name;
    if (name === "ServiceNotFoundError" || name === "ServiceNotAvailableError") {
      throw new NotAvailable(`not available: ${serviceOf(action)} not deployed`);
    }
    throw err;
  }
}

/** The text of an error for the operator: the service's own message (a DomainError's is the spec's). */
export function errorText(err: unknown): string {
  if (err instanceof NotAvailable) return err.message;
  const e = err as { message?: string; code?: number; type?: string };
  if (e?.type === "DOMAIN_ERROR") return `${e.code} ${e.message}`;
  return e?.message ?? String(err);
}
