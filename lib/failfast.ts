/**
 * Fail fast past a dead node (docs/operations.md, "Failure modes"). A process killed with SIGKILL
 * says no goodbye: Moleculer learns of it only when its heartbeats stop (30 s by default, counted
 * in whole seconds), and until then calls routed to it wait the full request timeout. NATS knows at
 * once: a process's subscriptions vanish with its socket, and a request to a subject nobody
 * subscribes to is answered "no responders" (503) by the server itself.
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
 * every route is a GET, or an unrouted lookup declared `readOnly`), or a request that carries an Idempotency-Key to an action that declares
 * the header. Anything else answers 503 at once; its caller decides.
 *
 * A node declared gone that was only cut off from NATS for a moment (a NATS node of a cluster
 * restarting, its clients moving to another) answers again on its subject; it is then asked for
 * its INFO and is back in the rotation, rather than after its next heartbeat.
 *
 * A call can also be lost while both nodes live: when a NATS node of a cluster dies, what it held
 * for the caller or the callee (the request, the reply) is gone, and for a moment after a client
 * reconnects elsewhere the other servers do not yet know where its subscriptions are. So the
 * probe carries the ids of the calls pending to the node, and the node answers when its
 * connection last (re)connected and which of those calls it is working on. A call sent before
 * either side's reconnect (or within RECONNECT_SETTLE_MS after it) that the node is not working
 * on will get no answer: its reply would have come before the probe's, on the same route. Such a
 * call, when safe to repeat, is sent again at once (as above); any other still waits out its timeout.
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

/** The IETF draft's header, as the ingestion actions document it among their fields (docs/api-tour.md, "Retries"). */
const IDEMPOTENCY_HEADER = "Idempotency-Key";

/** NATS's "no responders" status: the server has no subscription for the subject. */
const NO_RESPONDERS = "503";

/** After a NATS client reconnects, how long until its subscriptions are known across the cluster. */
const RECONNECT_SETTLE_MS = 1000;

/** A probe's answer: when the node's connection last (re)connected, and which of the asked calls it works on. */
interface ProbeAnswer {
  since: number;
  working: string[];
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function probeAnswerOf(data: Uint8Array): ProbeAnswer | undefined {
  try {
    const parsed = JSON.parse(decoder.decode(data)) as Partial<ProbeAnswer>;
    if (typeof parsed.since === "number" && Array.isArray(parsed.working)) return { since: parsed.since, working: parsed.working.map(String) };
  } catch {
    // An empty answer (a node of an older release): alive, and nothing more known.
  }
  return undefined;
}

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
function safeToRepeat(http: HttpDeclaration | undefined, readOnly: boolean): (ctx: Context) => boolean {
  if (readOnly) return () => true;
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
  /** When this node's NATS connection last (re)connected. */
  let connectedAt = Date.now();
  /** Calls from other nodes this node is working on, by request id. */
  const working = new Set<string>();
  /** Per node, its calls still pending, when each was sent and whether it may be sent again; a Map keeps them oldest first. */
  const pending = new Map<string, Map<Context, { since: number; safe: boolean }>>();
  const lastAsked = new Map<string, number>();
  const asking = new Set<string>();
  /** Nodes this middleware declared gone, and when. */
  const gone = new Map<string, number>();
  let timer: NodeJS.Timeout | undefined;

  const connection = (): NatsConnection | undefined => (nats?.client as NatsConnection | null | undefined) ?? undefined;

  function answerProbes(): void {
    const nc = connection();
    if (!broker || !nats || !nc || responder?.on === nc) return;
    connectedAt = Date.now();
    const sub = nc.subscribe(aliveSubject(nats.prefix, broker.nodeID), {
      callback: (err, msg) => {
        if (err) return;
        let asked: unknown = [];
        try {
          asked = msg.data.length ? JSON.parse(decoder.decode(msg.data)) : [];
        } catch {
          asked = [];
        }
        // After the calls that arrived with the probe have entered their handlers.
        setImmediate(() => {
          const answer: ProbeAnswer = { since: connectedAt, working: Array.isArray(asked) ? asked.map(String).filter((id) => working.has(id)) : [] };
          msg.respond(encoder.encode(JSON.stringify(answer)));
        });
      },
    });
    responder = { on: nc, sub };
    void (async () => {
      for await (const status of nc.status()) if (status.type === "reconnect") connectedAt = Date.now();
    })().catch(() => undefined);
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
      for (const [ctx, call] of calls) {
        // Answered, or given up on by the Timeout middleware (transit's promise then never settles).
        if (!transit.pendingRequests.has(ctx.id)) {
          calls.delete(ctx);
          continue;
        }
        if (now - call.since >= opts.probeAfterMs) ask(nodeID, now);
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
    const asked = [...(pending.get(nodeID) ?? new Map<Context, { since: number; safe: boolean }>())].filter(([, call]) => now - call.since >= opts.probeAfterMs).slice(0, 1000);
    const payload = asked.length ? encoder.encode(JSON.stringify(asked.map(([ctx]) => ctx.id))) : undefined;
    nc.request(aliveSubject(nats.prefix, nodeID), payload, { timeout: opts.probeTimeoutMs }).then(
      (msg) => {
        asking.delete(nodeID);
        if (gone.delete(nodeID)) returned(nodeID);
        const answer = probeAnswerOf(msg.data);
        // A reply the node sent before its answer has been handled by the time this timer fires.
        if (answer) setTimeout(() => failOverLost(nodeID, asked, answer), 20);
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

  /** Sends again the safe calls the node will never answer: sent around a reconnect, not being worked on. */
  function failOverLost(nodeID: string, asked: [Context, { since: number; safe: boolean }][], answer: ProbeAnswer): void {
    const transit = broker?.transit;
    if (!transit) return;
    const settled = Math.max(connectedAt, answer.since) + RECONNECT_SETTLE_MS;
    const busy = new Set(answer.working);
    let lost = 0;
    for (const [ctx, call] of asked) {
      if (!call.safe || call.since >= settled || busy.has(ctx.id)) continue;
      const req = transit.pendingRequests.get(ctx.id);
      if (!req) continue;
      transit.removePendingRequest(ctx.id);
      pending.get(nodeID)?.delete(ctx);
      req.reject(rejected(ctx.action?.name ?? "", nodeID, true));
      lost++;
    }
    if (lost) broker?.logger.warn(`${lost} call(s) to '${nodeID}' were lost as NATS reconnected; sent again.`);
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
      const safe = safeToRepeat(action.http, action.readOnly === true);
      const name = action.name ?? "";
      const failFast = (ctx: Context): Promise<unknown> => {
        const nodeID = ctx.nodeID;
        if (!nodeID || !broker) return handler(ctx);
        // Chosen before the node was declared gone (the gateway picks its endpoint before it authenticates).
        if (broker.registry.nodes.get(nodeID)?.available === false) return Promise.reject(rejected(name, nodeID, safe(ctx)));
        let calls = pending.get(nodeID);
        if (!calls) pending.set(nodeID, (calls = new Map()));
        calls.set(ctx, { since: Date.now(), safe: safe(ctx) });
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

    localAction(next) {
      if (!nats) return next;
      const handler = next as unknown as Handler;
      const tracked = (ctx: Context): Promise<unknown> => {
        if (!broker || ctx.nodeID === broker.nodeID) return handler(ctx);
        working.add(ctx.id);
        return new Promise((resolve) => resolve(handler(ctx))).finally(() => working.delete(ctx.id));
      };
      return tracked as unknown as typeof next;
    },

    async stopped() {
      clearInterval(timer);
      timer = undefined;
      responder?.sub.unsubscribe();
      responder = undefined;
    },
  };
}
