/**
 * An OPC-UA server that a pipeline names (docs/collectors.md, "OPC-UA"): one session, one
 * subscription, a monitored item per tag address, values as they change handed over in batches.
 * The address is checked by the source guard (docs/security.md, "Addresses users give") and the
 * connection goes to the address it checked. node-opcua's client keeps the session alive and
 * reconnects with back-off after a lost connection; every change of state (connected, failing
 * with its cause) is said through `onState`, once per change.
 *
 * node-opcua's packages are ES modules: loaded by `import()` at run time (tsx does; Jest's
 * loader does not, so its tests run this in a child process).
 */
import type { SourceVerdict } from "./source-guard";

export const OPCUA_SECURITY_MODES = ["None", "Sign", "SignAndEncrypt"] as const;
export type OpcuaSecurityMode = (typeof OPCUA_SECURITY_MODES)[number];
export const OPCUA_SECURITY_POLICIES = ["None", "Basic256Sha256", "Aes128_Sha256_RsaOaep", "Aes256_Sha256_RsaPss"] as const;
export type OpcuaSecurityPolicy = (typeof OPCUA_SECURITY_POLICIES)[number];

export interface OpcuaSourceSettings {
  server_url: string;
  /** Empty or absent: an anonymous session. */
  user_name?: string | null;
  user_password?: string | null;
  security_mode?: OpcuaSecurityMode;
  security_policy?: OpcuaSecurityPolicy;
  /** How often the server samples each item and publishes changes, in ms (from the pipeline's `sampling_rate`, in Hz). */
  interval_ms?: number | null;
}

/** One value as it changed: the index of its address in the list opened, the server's timestamp, the number. */
export interface OpcuaChange {
  index: number;
  ts: number;
  value: number;
}

export type OpcuaState = { ok: true } | { ok: false; cause: string };

export interface OpcuaHandlers {
  /** A batch of changes, in the order the server published them; awaited before the next batch is handed over. */
  onChanges(changes: OpcuaChange[]): Promise<void>;
  /** The session is up with every item monitored, or it is failing and why, in the server's words. */
  onState(state: OpcuaState): void;
}

export interface OpcuaSourceOptions {
  /** The source guard's check (lib/source-guard.ts): whether host:port may be reached, and at which address. */
  check(host: string, port: number): Promise<SourceVerdict>;
  /**
   * Where the client keeps its application certificate and the servers' certificates: those under
   * `trusted/certs` are trusted; an unknown one is refused (under `rejected/`, for an operator to
   * move) when a security mode asks the server to prove itself.
   */
  pkiDir: string;
  /** Changes are handed over at most this often (ms). */
  batchMs?: number;
  /**
   * Each address's last value stored (epoch ms): the values the server's history kept since then
   * (up to HISTORY_GAP_MAX_MS back) are read and handed over before the live ones, so a collector
   * started again leaves no gap where the server keeps history.
   */
  since?: Record<string, number>;
  /** Ends the opening while the server is not reached yet (the client would try for ever). */
  signal?: AbortSignal;
  log: (msg: string) => void;
}

export interface OpcuaSource {
  /** Ends the subscription, the session and the connection; no batch is handed over after. */
  close(): Promise<void>;
}

/**
 * Why a source could not be opened: `message` is what a person is shown (the pipeline's cause:
 * `Failed to connect to <server_url>`, or the server's status such as `BadUserAccessDenied`);
 * `detail` is for the log only, as it may say what the guard knows of the service's own addresses.
 */
export class OpcuaSourceError extends Error {
  constructor(
    message: string,
    readonly detail: string,
  ) {
    super(message);
    this.name = "OpcuaSourceError";
  }
}

/** The publishing and sampling interval when the pipeline sets none, in ms. */
export const DEFAULT_SAMPLING_MS = 1000;
const DEFAULT_BATCH_MS = 200;
/** How far back a gap is read from the server's history at the most (ms). */
export const HISTORY_GAP_MAX_MS = 24 * 3600_000;
/** Values a history read asks per node at a time (the server goes on with a continuation point). */
const HISTORY_PAGE = 1000;
/**
 * A gap's values at the most, whatever the server answers (about 20 MB held): a server that never
 * ends its continuation points, or answers far more than it should, ends here; the log says so.
 */
export const HISTORY_MAX_VALUES = 200_000;
/** The subscription's publishing interval at the most (ms): changes sampled less often are still sent on soon. */
const PUBLISH_MAX_MS = 250;
/** Reconnection back-off: from 1 s to 30 s, for ever (a source that comes back is collected again). */
const RETRY = { initialDelay: 1000, maxDelay: 30_000, maxRetry: -1 } as const;

/** The host and port of an `opc.tcp://host:port/path` URL, and the URL with the host replaced by `address`. */
export function opcuaTarget(url: string): { host: string; port: number; at(address: string): string } | null {
  const m = /^opc\.tcp:\/\/(\[[^\]]+\]|[^:/]+)(?::(\d+))?(\/.*)?$/i.exec(url.trim());
  if (!m) return null;
  const port = m[2] ? Number(m[2]) : 4840;
  if (!Number.isInteger(port) || port < 1 || port > 65535) return null;
  return {
    host: m[1]!.replace(/^\[(.*)\]$/, "$1"),
    port,
    at: (address) => `opc.tcp://${address.includes(":") ? `[${address}]` : address}:${port}${m[3] ?? ""}`,
  };
}

/** An OPC-UA value as a reading: numbers and Booleans (true = 1); anything else is not one. */
export function readingOf(value: unknown): number | null {
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (typeof value === "boolean") return value ? 1 : 0;
  if (typeof value === "bigint") return Number(value);
  // Int64 and UInt64 arrive as [high, low] 32-bit words.
  if (Array.isArray(value) && value.length === 2 && value.every((w) => typeof w === "number")) return value[0]! * 2 ** 32 + value[1]!;
  return null;
}

export async function openOpcuaSource(settings: OpcuaSourceSettings, addresses: string[], handlers: OpcuaHandlers, opts: OpcuaSourceOptions): Promise<OpcuaSource> {
  const target = opcuaTarget(settings.server_url);
  if (!target) throw new OpcuaSourceError("Invalid settings: server_url", `not an opc.tcp URL: ${settings.server_url}`);
  const unreachable = `Failed to connect to ${settings.server_url}`;
  const verdict = await opts.check(target.host, target.port);
  if (!verdict.allowed) throw new OpcuaSourceError(unreachable, `not allowed: ${verdict.reason}`);
  const ua = await import("node-opcua-client");
  const { OPCUACertificateManager } = await import("node-opcua-certificate-manager");
  const sampling = settings.interval_ms && settings.interval_ms > 0 ? settings.interval_ms : DEFAULT_SAMPLING_MS;
  const mode = settings.security_mode ?? "None";
  const policy = settings.security_policy ?? (mode === "None" ? "None" : "Basic256Sha256");

  let closed = false;
  let said: string | null = null;
  const state = (s: OpcuaState) => {
    const text = s.ok ? "" : s.cause;
    if (text === said) return;
    said = text;
    handlers.onState(s);
  };

  // Changes queue here and are handed over one batch at a time, so a slow store holds the next batch back rather than reordering.
  let queue: OpcuaChange[] = [];
  let handing: Promise<void> = Promise.resolve();
  const flush = () => {
    if (queue.length === 0 || closed) return;
    const batch = queue;
    queue = [];
    handing = handing.then(() => handlers.onChanges(batch)).catch((err: unknown) => opts.log(`OPC-UA changes not taken: ${errorText(err)}`));
  };
  // Started once the gap is read (below): what the server kept from before comes first.
  const batching: { timer?: NodeJS.Timeout } = {};

  const clientCertificateManager = new OPCUACertificateManager({ rootFolder: opts.pkiDir, automaticallyAcceptUnknownCertificate: false });
  const client = ua.OPCUAClient.create({
    applicationName: "industrial-monitoring-collectors",
    clientCertificateManager,
    connectionStrategy: RETRY,
    securityMode: ua.MessageSecurityMode[mode],
    securityPolicy: ua.SecurityPolicy[policy],
    endpointMustExist: false,
    keepSessionAlive: true,
    requestedSessionTimeout: 60_000,
  });
  // One cause while it lasts (the pipeline's error does not change with each attempt); the attempts go to the log.
  client.on("backoff", (retry: number, delay: number) => {
    opts.log(`${settings.server_url} not reached: trying again in ${Math.round(delay / 1000)} s (attempt ${retry + 1})`);
    state({ ok: false, cause: unreachable });
  });
  client.on("connection_lost", () => state({ ok: false, cause: `connection to ${settings.server_url} lost` }));
  client.on("connection_reestablished", () => state({ ok: true }));

  const url = target.at(verdict.address);
  const fail = async (err: unknown) => {
    closed = true;
    clearInterval(batching.timer);
    await client.disconnect().catch(() => undefined);
    throw err;
  };
  // The client tries to connect for as long as it takes: an abort (the collector stopping) ends that.
  const abort = () => void client.disconnect().catch(() => undefined);
  if (opts.signal?.aborted) return fail(new OpcuaSourceError(unreachable, "stopped before connecting"));
  opts.signal?.addEventListener("abort", abort, { once: true });
  try {
    await client.connect(url);
    if (opts.signal?.aborted) throw new Error("stopped while connecting");
  } catch (err) {
    opts.signal?.removeEventListener("abort", abort);
    return fail(new OpcuaSourceError(unreachable, errorText(err)));
  }
  opts.signal?.removeEventListener("abort", abort);
  let session: import("node-opcua-client", { with: { "resolution-mode": "import" } }).ClientSession;
  try {
    session = await client.createSession(
      settings.user_name ? { type: ua.UserTokenType.UserName, userName: settings.user_name, password: settings.user_password ?? "" } : { type: ua.UserTokenType.Anonymous },
    );
  } catch (err) {
    // The server's status name (BadUserAccessDenied, BadIdentityTokenRejected, ...) is the cause a person can act on.
    return fail(new OpcuaSourceError(statusName(err) ?? `Failed to open a session on ${settings.server_url}`, errorText(err)));
  }
  const subscription = ua.ClientSubscription.create(session, {
    // What was sampled reaches the store within a quarter of a second, whatever the sampling interval.
    requestedPublishingInterval: Math.min(sampling, PUBLISH_MAX_MS),
    requestedLifetimeCount: 120,
    requestedMaxKeepAliveCount: 20,
    maxNotificationsPerPublish: 0,
    publishingEnabled: true,
    priority: 10,
  });
  const group = ua.ClientMonitoredItemGroup.create(
    subscription,
    addresses.map((nodeId) => ({ nodeId, attributeId: ua.AttributeIds.Value })),
    { samplingInterval: sampling, discardOldest: true, queueSize: 100 },
    ua.TimestampsToReturn.Both,
  );
  group.on("changed", (_item, dataValue, index) => {
    if (!dataValue.statusCode.isGood()) return;
    const value = readingOf(dataValue.value.value);
    if (value === null) return;
    queue.push({ index, ts: timestampOf(dataValue) ?? Date.now(), value });
  });
  try {
    await new Promise<void>((resolve, reject) => {
      group.once("initialized", () => resolve());
      group.once("err", (message: string) => reject(new Error(message)));
    });
  } catch (err) {
    await session.close().catch(() => undefined);
    return fail(new OpcuaSourceError(statusName(err) ?? `Failed to monitor the tags on ${settings.server_url}`, errorText(err)));
  }
  // An address the server does not know is the pipeline's mistake, said in words; the others are collected.
  const bad = group.monitoredItems
    .map((item, i) => ({ i, status: item.statusCode }))
    .filter(({ status }) => status && !status.isGood())
    .map(({ i, status }) => `${addresses[i]}: ${status.name}`);
  state(bad.length ? { ok: false, cause: `unknown addresses: ${bad.join(", ")}` } : { ok: true });

  // The gap since the last values stored, from the server's history, before the live changes queued meanwhile.
  if (opts.since) {
    try {
      const gap = await readGap(ua, session, addresses, opts.since, Date.now());
      if (gap.length >= HISTORY_MAX_VALUES) opts.log(`OPC-UA history: the gap read stops at ${gap.length} values; older changes past them are not read`);
      for (let i = 0; i < gap.length && !closed; i += 5000) await handlers.onChanges(gap.slice(i, i + 5000));
    } catch (err) {
      opts.log(`OPC-UA history not read: ${errorText(err)}`);
    }
  }
  batching.timer = setInterval(flush, opts.batchMs ?? DEFAULT_BATCH_MS);

  return {
    async close() {
      if (closed) return;
      clearInterval(batching.timer);
      // What has changed so far is handed over before the session ends.
      flush();
      closed = true;
      await handing;
      await subscription.terminate().catch(() => undefined);
      await session.close().catch(() => undefined);
      await client.disconnect().catch(() => undefined);
    },
  };
}

type OpcuaClientModule = typeof import("node-opcua-client", { with: { "resolution-mode": "import" } });
type OpcuaSession = import("node-opcua-client", { with: { "resolution-mode": "import" } }).ClientSession;

/**
 * What the server's history holds of each address after `since[address]` and up to `now`, oldest
 * first: empty for a server or node without history (its status says so; nothing to read).
 */
async function readGap(ua: OpcuaClientModule, session: OpcuaSession, addresses: string[], since: Record<string, number>, now: number): Promise<OpcuaChange[]> {
  const wanted = addresses.flatMap((nodeId, index) => (since[nodeId] !== undefined && since[nodeId]! < now ? [{ nodeId, index, after: since[nodeId]! }] : []));
  if (wanted.length === 0) return [];
  const start = new Date(Math.max(Math.min(...wanted.map((w) => w.after)), now - HISTORY_GAP_MAX_MS));
  const out: OpcuaChange[] = [];
  let asking = wanted.map((w) => ({ ...w, continuationPoint: undefined as Buffer | undefined }));
  while (asking.length > 0) {
    const results = await session.readHistoryValue(
      asking.map((w) => ({ nodeId: w.nodeId, continuationPoint: w.continuationPoint })),
      start,
      new Date(now),
      { numValuesPerNode: HISTORY_PAGE, returnBounds: false, timestampsToReturn: ua.TimestampsToReturn.Both },
    );
    const next: typeof asking = [];
    const before = out.length;
    results.forEach((r, i) => {
      const w = asking[i]!;
      if (!r.statusCode.isGood()) return;
      const values = (r.historyData as { dataValues?: { statusCode: { isGood(): boolean }; value: { value: unknown }; sourceTimestamp: Date | null; serverTimestamp: Date | null }[] } | null)?.dataValues ?? [];
      for (const dv of values) {
        const at = timestampOf(dv) ?? undefined;
        const value = readingOf(dv.value.value);
        if (dv.statusCode.isGood() && at !== undefined && at > w.after && value !== null) out.push({ index: w.index, ts: at, value });
      }
      if (r.continuationPoint && r.continuationPoint.length > 0) next.push({ ...w, continuationPoint: r.continuationPoint });
    });
    // A round that brought nothing new, or too much in all: the rest is not asked for.
    asking = out.length > before && out.length < HISTORY_MAX_VALUES ? next : [];
  }
  return out;
}

/**
 * A value's time: its source timestamp, else the server's; null when neither is one. OPC-UA's
 * "no time" is its minimum date (1601), which some servers send: a time before 1970 is none.
 */
export function timestampOf(dv: { sourceTimestamp: Date | null; serverTimestamp: Date | null }): number | null {
  for (const at of [dv.sourceTimestamp, dv.serverTimestamp]) {
    const ms = at?.getTime();
    if (ms !== undefined && Number.isFinite(ms) && ms > 0) return Math.round(ms);
  }
  return null;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The OPC-UA status name an error carries (`BadUserAccessDenied`), if any. */
function statusName(err: unknown): string | null {
  const m = /\b(Bad[A-Z][A-Za-z]+)\b/.exec(errorText(err));
  return m ? m[1]! : null;
}
