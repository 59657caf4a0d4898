/**
 * Fail fast past a dead node (issue 19, item 1). A process killed with SIGKILL says no goodbye:
 * Moleculer learns of it only when its heartbeats stop (30 s by default, counted in whole
 * seconds), and until then calls routed to it wait the full request timeout. NATS knows at once:
 * a process's subscriptions vanish with its socket, and a request to a subject nobody subscribes
 * to is answered "no responders" (503) by the server itself.
 *
 * So every node answers on a subject of its own (`<prefix>.ALIVE.<nodeID>`, on the transporter's
 * own connection, so that the answer proves the very socket its requests arrive on). When a call
 * to another node has been pending for PROBE_AFTER_MS, that node is asked; "no responders" means
 * the process is gone: the node is declared disconnected here, as a heartbeat timeout would
 * declare it, which takes it out of the rotation and rejects every call pending to it
 * (RequestRejectedError, 503). A late answer or a timed-out probe proves nothing (the node may
 * be busy or the bus slow) and changes nothing: only the server's own "nobody is subscribed" does.
 *
 * A call so rejected is marked for a retry on another replica (`failoverRetryable`, the check of
 * the broker's retryPolicy) when repeating it cannot do a thing twice: a read (an action whose
 * every route is a GET), or a request that carries an Idempotency-Key to an action that declares
 * the header. Anything else answers 503 at once; its caller decides.
 *
 * A node declared gone that was only cut off from NATS for a moment (a NATS node of a cluster
 * restarting, its clients moving to another) answers again on its subject; it is then asked for
 * its INFO and is back in the rotation, rather than after its next heartbeat.
 *
 * Without a NATS transporter (the single process of `npm start`) the middleware is not used.
 */
import { Errors, Transporters, type Context, type Middleware, type ServiceBroker } from "moleculer";
import type { NatsConnection, NatsError, Subscription } from "nats";
import type { HttpDeclaration } from "./operations";

export interface FailFastOptions {
  /** A remote call pending this long has its node asked whether it still exists. */
  probeAfterMs: number;
  /** How long the node's answer is waited for: a live node that does not answer in time is busy, not gone. */
  probeTimeoutMs: number;
  /** Not more often than this per node, however many of its calls are pending. */
  probeEveryMs: number;
  /** How often pending calls are looked at, while there are any. */
  tickMs: number;
  /** How long a node declared gone is watched for its return (its heartbeats bring it back later anyway). */
  watchGoneMs: number;
}

export const FAILFAST_DEFAULTS: FailFastOptions = {
  probeAfterMs: 500,
  probeTimeoutMs: 300,
  probeEveryMs: 500,
  tickMs: 100,
  watchGoneMs: 30_000,
};

/** The IETF draft's header, as the ingestion actions document it among their fields (EXTENSIONS.md §6). */
const IDEMPOTENCY_HEADER = "Idempotency-Key";

/** NATS's "no responders" status: the server has no subscription for the subject. */
const NO_RESPONDERS = "503";

/** Calls rejected because their node is gone, which may be sent again to another replica. */
const retryable = new WeakSet<Error>();

/** The broker's retryPolicy check: only calls this middleware found safe to repeat. */
export function failoverRetryable(err: unknown): boolean {
  return err instanceof Error && retryable.has(err);
}

/** The subject a node answers on while its process lives. */
export function aliveSubject(prefix: string, nodeID: string): string {
  return `${prefix}.ALIVE.${nodeID}`;
}

type Handler = (ctx: Context) => Promise<unknown>;

/** Whether sending the call again cannot do anything twice. */
function safeToRepeat(http: HttpDeclaration | undefined): (ctx: Context) => boolean {
  if (!http) return () => false;
  if (http.routes.length > 0 && http.routes.every((route) => route.startsWith("GET "))) return () => true;
  if (http.fields?.[IDEMPOTENCY_HEADER]?.in === "header") return (ctx) => (ctx.meta as { idempotency?: unknown }).idempotency !== undefined;
  return () => false;
}

export function FailFastMiddleware(options: Partial<FailFastOptions> = {}): Middleware {
  const opts: FailFastOptions = { ...FAILFAST_DEFAULTS, ...options };
  let broker: ServiceBroker | undefined;
  let nats: Transporters.NATS | undefined;
  let responder: { on: NatsConnection; sub: Subscription } | undefined;
  /** Per node, its calls still pending and when each was sent; a Map keeps them oldest first. */
  const pending = new Map<string, Map<Context, number>>();
  const lastAsked = new Map<string, number>();
  const asking = new Set<string>();
  /** Nodes this middleware declared gone, and when. */
  const gone = new Map<string, number>();
  let timer: NodeJS.Timeout | undefined;

  const connection = (): NatsConnection | undefined => (nats?.client as NatsConnection | null | undefined) ?? undefined;

  function answerProbes(): void {
    const nc = connection();
    if (!broker || !nats || !nc || responder?.on === nc) return;
    const sub = nc.subscribe(aliveSubject(nats.prefix, broker.nodeID), {
      callback: (err, msg) => {
        if (!err) msg.respond();
      },
    });
    responder = { on: nc, sub };
  }

  function watch(): void {
    if (timer) return;
    timer = setInterval(tick, opts.tickMs);
    timer.unref();
  }

  function tick(): void {
    const transit = broker?.transit;
    if (!transit) return;
    const now = Date.now();
    for (const [nodeID, calls] of pending) {
      for (const [ctx, since] of calls) {
        // Answered, or given up on by the Timeout middleware (transit's promise then never settles).
        if (!transit.pendingRequests.has(ctx.id)) {
          calls.delete(ctx);
          continue;
        }
        if (now - since >= opts.probeAfterMs) ask(nodeID, now);
        break;
      }
      if (calls.size === 0) pending.delete(nodeID);
    }
    for (const [nodeID, since] of gone) {
      if (broker?.registry.nodes.get(nodeID)?.available || now - since > opts.watchGoneMs) gone.delete(nodeID);
      else ask(nodeID, now);
    }
    if (pending.size === 0 && gone.size === 0) {
      clearInterval(timer);
      timer = undefined;
    }
  }

  function ask(nodeID: string, now: number): void {
    const nc = connection();
    if (!nc || !nats || asking.has(nodeID) || now - (lastAsked.get(nodeID) ?? 0) < opts.probeEveryMs) return;
    asking.add(nodeID);
    lastAsked.set(nodeID, now);
    nc.request(aliveSubject(nats.prefix, nodeID), undefined, { timeout: opts.probeTimeoutMs }).then(
      () => {
        asking.delete(nodeID);
        if (gone.delete(nodeID)) returned(nodeID);
      },
      (err: NatsError) => {
        asking.delete(nodeID);
        if (err.code === NO_RESPONDERS) declareGone(nodeID);
      },
    );
  }

  function declareGone(nodeID: string): void {
    const node = broker?.registry.nodes.get(nodeID);
    if (!broker || !node?.available) return;
    const calls = pending.get(nodeID)?.size ?? 0;
    broker.logger.warn(`Node '${nodeID}' is gone (NATS: no subscriber on its alive subject); ${calls} call(s) pending to it are rejected.`);
    gone.set(nodeID, Date.now());
    // As a heartbeat timeout would: out of the rotation, its pending requests rejected (transit.js).
    broker.registry.nodes.disconnected(nodeID, true);
    pending.delete(nodeID);
  }

  function returned(nodeID: string): void {
    if (!broker || broker.registry.nodes.get(nodeID)?.available) return;
    broker.logger.info(`Node '${nodeID}' answers again; asking for its services.`);
    void Promise.resolve(broker.registry.discoverer.discoverNode(nodeID)).catch(() => undefined);
  }

  function rejected(action: string, nodeID: string, safe: boolean): Errors.RequestRejectedError {
    const err = new Errors.RequestRejectedError({ action, nodeID });
    if (safe) retryable.add(err);
    return err;
  }

  return {
    name: "FailFast",

    created(b: ServiceBroker) {
      broker = b;
      const tx = b.transit?.tx;
      if (!(tx instanceof Transporters.NATS)) return;
      nats = tx;
      // Before any local service is announced: a caller must never find our subject empty while we live.
      b.localBus.on("$transporter.connected", answerProbes);
    },

    remoteAction(next, action) {
      if (!nats) return next;
      const handler = next as unknown as Handler;
      const safe = safeToRepeat(action.http);
      const name = action.name ?? "";
      const failFast = (ctx: Context): Promise<unknown> => {
        const nodeID = ctx.nodeID;
        if (!nodeID || !broker) return handler(ctx);
        // Chosen before the node was declared gone (the gateway picks its endpoint before it authenticates).
        if (broker.registry.nodes.get(nodeID)?.available === false) return Promise.reject(rejected(name, nodeID, safe(ctx)));
        let calls = pending.get(nodeID);
        if (!calls) pending.set(nodeID, (calls = new Map()));
        calls.set(ctx, Date.now());
        watch();
        return handler(ctx).then(
          (result) => {
            pending.get(nodeID)?.delete(ctx);
            return result;
          },
          (err: unknown) => {
            pending.get(nodeID)?.delete(ctx);
            if (err instanceof Errors.RequestRejectedError && (err.data as { nodeID?: string } | undefined)?.nodeID === nodeID && safe(ctx)) {
              retryable.add(err);
            }
            throw err;
          },
        );
      };
      return failFast as unknown as typeof next;
    },

    async stopped() {
      clearInterval(timer);
      timer = undefined;
      responder?.sub.unsubscribe();
      responder = undefined;
    },
  };
}
