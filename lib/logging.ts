/**
 * A request id follows a request through every service: the gateway sets it on the context,
 * Moleculer carries it across the bus, and this middleware makes it visible to every log line
 * written while the action runs (AsyncLocalStorage, so no handler has to pass it on).
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { Context, Middleware } from "moleculer";

const store = new AsyncLocalStorage<string>();

export const currentRequestId = (): string | undefined => store.getStore();

type Handler = (ctx: Context) => unknown;

/** Runs `fn` with `id` as the request id of its log lines (code outside an action: the gateway's error log). */
export function withRequestId<T>(id: string | null | undefined, fn: () => T): T {
  return id ? store.run(id, fn) : fn();
}

function wrap(handler: Handler): Handler {
  return function handleWithRequestId(ctx: Context) {
    return withRequestId(ctx.requestID, () => handler(ctx));
  };
}

export const RequestIdMiddleware: Middleware = {
  name: "RequestId",
  localAction(handler) {
    return wrap(handler as Handler) as typeof handler;
  },
  localEvent(handler) {
    return wrap(handler as Handler) as typeof handler;
  },
};

/** Console logger options whose lines carry the request id when there is one. */
export function loggerOptions(level: string) {
  return {
    type: "Console",
    options: {
      level,
      colors: process.stdout.isTTY === true,
      moduleColors: false,
      formatter: (type: string, args: unknown[], bindings: { nodeID?: string; mod?: string }) => {
        const rid = currentRequestId();
        const head = `${new Date().toISOString()} ${type.toUpperCase().padEnd(5)} ${bindings.nodeID ?? ""}/${(bindings.mod ?? "").toUpperCase()}`;
        return [rid ? `${head} [${rid}]:` : `${head}:`, ...args];
      },
    },
  };
}
