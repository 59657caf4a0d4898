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

function wrap(handler: Handler): Handler {
  return function withRequestId(ctx: Context) {
    const id = ctx.requestID;
    return id ? store.run(id, () => handler(ctx)) : handler(ctx);
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
