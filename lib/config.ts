/**
 * Every setting of the service comes from the environment and is read here, once.
 * The environment table of docs/configuration.md lists the same names; keep the two in step.
 */
import { isIP } from "node:net";
import path from "node:path";
import { parseSecretsKey } from "./secrets";
import { parseSourceAllow } from "./source-guard";
import { splitNatsUrls, type NatsAuth } from "./bus-credentials";
import { DEFAULT_PARTITIONS } from "./streams/partitions";
import { HOUR_MS, MINUTE_MS, parseDurationMs } from "./time";

/**
 * STREAM_MAX_BYTES's default, 1 GiB: a reading is about 110 bytes of JSON on the stream, so some
 * 9 million readings, two and a half hours of a 1,000-tag plant at 1 Hz with a consuming service
 * stopped, before ingestion answers 503 (docs/configuration.md); small beside a NATS node's disk.
 */
const DEFAULT_STREAM_MAX_BYTES = 1024 ** 3;

export interface AppConfig {
  nodeEnv: string;
  port: number;
  namespace: string;
  nodeId: string | undefined;
  services: string[];
  transporter: string | undefined;
  /** The NATS user this node connects as (NATS_USER/NATS_PASSWORD, else the pair TRANSPORTER's URLs carry); undefined: none. */
  natsAuth: NatsAuth | undefined;
  databaseUrl: string | undefined;
  embeddedPgPort: number;
  dataDir: string;
  redisUrl: string | undefined;
  logLevel: string;
  requestTimeoutMs: number;
  adminUsername: string;
  adminPassword: string | undefined;
  authCacheTtlS: number;
  smtpUrl: string | undefined;
  mailFrom: string;
  outboxDir: string;
  /** Where people reach the service (the console's base URL): links in notifications start with it, no trailing slash. */
  publicUrl: string;
  monitorLicenseLimit: number | undefined;
  latestEdgeFirmware: string;
  latestGatewayFirmware: string;
  bodyLimitBytes: number;
  /** Twilio credentials and senders for SMS and WhatsApp; a medium without them is recorded as skipped. */
  twilioAccountSid: string | undefined;
  twilioAuthToken: string | undefined;
  twilioSmsFrom: string | undefined;
  twilioWhatsappFrom: string | undefined;
  /** Tests only: the address of a local stand-in for Twilio's API. */
  twilioApiBase: string | undefined;
  /** Notebook files, one folder per user. */
  notebooksDir: string;
  /** The Python with nbclient and ipykernel; undefined: the notebooks service probes for one. */
  notebookPython: string | undefined;
  notebookRunTimeoutS: number;
  notebookConcurrency: number;
  /** `bwrap`: every run in namespaces of its own (bubblewrap); `pod`: the pod is the sandbox (Kubernetes), runs as an owner's own uid. */
  notebookSandbox: "bwrap" | "pod";
  /** Memory of one run's processes together (a cgroup; else per process by RLIMIT_AS). */
  notebookMemoryMb: number;
  /** The api a notebook's IMS_API_URL leads to (its reads act as the notebook's owner); undefined: the api of this process, else PORT on 127.0.0.1. */
  notebookApiUrl: string | undefined;
  /** Port of the /live, /ready and /metrics server; undefined: none (0: any free port, for tests). */
  healthPort: number | undefined;
  /** After SIGTERM: how long the node goes on serving, unready, while load balancers stop sending to it. */
  drainGraceMs: number;
  /** Then: how long requests already in flight may take to complete before their connections are closed. */
  drainTimeoutMs: number;
  /** MIGRATE_ONLY=1: run the named services' migrations and exit (the Kubernetes migration Job). */
  migrateOnly: boolean;
  /** A pipeline action not acked by its gateway within this time fails and the pipeline goes to `error`. */
  pipelineActionTimeoutMs: number;
  /** Deliveries of one stream message before it goes to the dead-letter subject. */
  streamMaxDeliveries: number;
  /** How long a durable stream keeps a message (JetStream max_age; the in-process log likewise). */
  /** Readings are folded into the history rollups as they are stored (HISTORY_ROLLUPS, default on; off only to measure their cost). */
  historyRollups: boolean;
  /** Readings older than this are kept compressed (HISTORY_COMPRESS_AFTER, a duration, default `1h`; docs/architecture.md, "The historian"). */
  historyCompressAfterMs: number;
  streamMaxAgeS: number;
  /** The most bytes a durable stream, or the outbox feeding it, holds before ingestion answers 503 (STREAM_MAX_BYTES; 0: no bound). */
  streamMaxBytes: number;
  /** JetStream partitions per stream: the most keys (pipelines) a consumer group works on at once; the same on every process of a cluster. */
  streamPartitions: number;
  /** JetStream replicas of each stream (its dead-letter stream too): 3 on a 3-node NATS cluster, 1 on a single server. */
  streamReplicas: number;
  /** The proxies (addresses or CIDRs) whose X-Forwarded-For and X-Forwarded-Proto are believed; empty: the socket's peer is the client. */
  trustProxy: string[];
  /** A console session ends after this long without a request. */
  sessionTtlS: number;
  /** SIGNIN_THROTTLE=false turns failed sign-in throttling off: for the benchmark's comparison only. */
  signInThrottle: boolean;
  /** The sign-in and OTP throttling window; 900 s in service, shorter only in tests (THROTTLE_WINDOW_S). */
  throttleWindowS: number;
  /** AUDIT_TRAIL=false stops staging audit entries: for the benchmark's comparison only, never in service. */
  auditTrail: boolean;
  /**
   * SOURCE_ALLOW: the loopback, link-local or unspecified sources users may name (op 57, the
   * collectors), as `host[:port]` or CIDR entries, comma-separated (lib/source-guard.ts).
   */
  sourceAllow: string;
  /** SECRETS_KEY: the key (32 bytes, base64 or hex) pipeline secrets are encrypted with; undefined: one kept under DATA_DIR (lib/secrets.ts). */
  secretsKey: string | undefined;
  /** After an ingest key is rotated, the old one keeps working this long (seconds). */
  ingestKeyGraceS: number;
  /** The MQTT front door's port (Sparkplug gateways, docs/sparkplug.md); 0: no front door. */
  mqttPort: number;
  /** The largest MQTT packet the front door takes (bytes); a bigger one closes the connection (docs/sparkplug.md#the-front-door). */
  mqttMaxPacketBytes: number;
  /** The Sparkplug host id: the front door's and the host's STATE topic, `spBv1.0/STATE/<id>`. */
  mqttHostId: string;
  /** The plant's broker the service is a Sparkplug primary host on (mqtt://host:1883); undefined: none. */
  mqttUrl: string | undefined;
  mqttUsername: string | undefined;
  mqttPassword: string | undefined;
  /** The sites whose edge pipelines the plant's broker serves; null: all. */
  mqttSites: string[] | null;
  /** Rows a SQL collector reads a page (docs/collectors.md); fewer when its tags would make a page past 5,000 readings. */
  collectorPageRows: number;
  /** OPCUA_PKI_DIR: the OPC-UA client's certificate and the servers' it trusts (`trusted/certs`) (docs/collectors.md#opc-ua). */
  opcuaPkiDir: string;
  /** BEARING_MATCH_TOLERANCE: how far (percent of the frequency, at least 1.5 bins) a peak may be from a bearing defect frequency and match it. */
  bearingMatchTolerancePct: number;
}

/**
 * What SERVICES accepts, and runs by default (`npm start`: all in one process); the deployment
 * manifests (k8s/, docker-compose.yml) run each in a container of its own.
 */
export const ALL_SERVICES = [
  "api",
  "auth",
  "config",
  "pipelines",
  "alerting",
  "notifier",
  "notebooks",
  "cm",
  "ems",
  "mqtt",
  "collectors",
] as const;

type Env = Record<string, string | undefined>;

function int(env: Env, name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new Error(`${name} must be an integer ${max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `from ${min} to ${max}`}, got "${raw}"`);
  }
  return n;
}

/** A duration with its unit (`90s`, `15m`, `1h`, `2d`), at least `min` ms. */
function durationMs(env: Env, name: string, fallback: number, min: number): number {
  const raw = str(env, name);
  if (raw === undefined) return fallback;
  const ms = parseDurationMs(raw);
  if (ms === undefined || ms < min) throw new Error(`${name} must be a duration such as 30m, 1h or 2d, at least ${min / 1000} s, got "${raw}"`);
  return ms;
}

function decimal(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min || n > max) throw new Error(`${name} must be a number from ${min} to ${max}, got "${raw}"`);
  return n;
}

function optionalInt(env: Env, name: string): number | undefined {
  const raw = env[name];
  return raw === undefined || raw === "" ? undefined : int(env, name, 0, 0);
}

function str(env: Env, name: string): string | undefined {
  const raw = env[name];
  return raw === undefined || raw === "" ? undefined : raw;
}

function oneOf<T extends string>(env: Env, name: string, values: readonly T[], fallback: T): T {
  const raw = str(env, name);
  if (raw === undefined) return fallback;
  if (!(values as readonly string[]).includes(raw)) throw new Error(`${name} must be one of ${values.join(", ")}, got "${raw}"`);
  return raw as T;
}

/** TRUST_PROXY: comma-separated addresses (`10.0.0.7`) or CIDRs (`10.0.0.0/8`, `fd00::/8`). */
function trustProxyOf(env: Env): string[] {
  const entries = (str(env, "TRUST_PROXY") ?? "").split(",").map((s) => s.trim()).filter(Boolean);
  for (const entry of entries) {
    const [address = "", prefix, ...rest] = entry.split("/");
    const family = isIP(address);
    const bits = prefix === undefined ? 0 : Number(prefix);
    const valid = family !== 0 && rest.length === 0 && (prefix === undefined || (/^\d+$/.test(prefix) && bits <= (family === 4 ? 32 : 128)));
    if (!valid) throw new Error(`TRUST_PROXY must list addresses or CIDRs, comma-separated; got "${entry}"`);
  }
  return entries;
}

/** SOURCE_ALLOW checked at start: an entry that is neither host[:port] nor a CIDR stops the process. */
function sourceAllowOf(env: Env): string {
  const text = str(env, "SOURCE_ALLOW") ?? "";
  parseSourceAllow(text);
  return text;
}

/** SECRETS_KEY: 32 bytes as base64 or 64 hex digits. */
function secretsKeyOf(env: Env): string | undefined {
  const text = str(env, "SECRETS_KEY");
  if (text !== undefined && !parseSecretsKey(text)) throw new Error("SECRETS_KEY must be 32 bytes, as base64 or 64 hex digits");
  return text;
}

/**
 * The NATS credentials: NATS_USER and NATS_PASSWORD (both or neither), else those TRANSPORTER's
 * URLs carry (nats://user:pass@host:4222); both given and different is a mistake, refused.
 */
function natsAuthOf(env: Env): NatsAuth | undefined {
  const user = str(env, "NATS_USER");
  const pass = str(env, "NATS_PASSWORD");
  if (!user !== !pass) throw new Error("NATS_USER and NATS_PASSWORD go together: set both or neither");
  const transporter = str(env, "TRANSPORTER");
  const inUrls = transporter ? splitNatsUrls(transporter).auth : undefined;
  if (!user || !pass) return inUrls;
  if (inUrls && (inUrls.user !== user || inUrls.pass !== pass)) {
    throw new Error("TRANSPORTER's URLs carry credentials other than NATS_USER/NATS_PASSWORD: give them in one place");
  }
  return { user, pass };
}

/** MQTT_HOST_ID: one topic level, so no `/`, `+` or `#`. */
function mqttHostIdOf(env: Env): string {
  const id = str(env, "MQTT_HOST_ID") ?? "ims";
  if (/[/+#]/.test(id)) throw new Error(`MQTT_HOST_ID must be one topic level (no "/", "+" or "#"), got "${id}"`);
  return id;
}

export function readConfig(env: Env = process.env): AppConfig {
  const dataDir = path.resolve(str(env, "DATA_DIR") ?? "./data");
  const services = (str(env, "SERVICES") ?? ALL_SERVICES.join(","))
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = services.filter((s) => !(ALL_SERVICES as readonly string[]).includes(s));
  if (unknown.length) throw new Error(`SERVICES names unknown services: ${unknown.join(", ")}`);
  const nodeEnv = str(env, "NODE_ENV") ?? "development";
  const adminPassword = str(env, "ADMIN_PASSWORD");
  if (nodeEnv === "production" && !adminPassword && services.includes("auth")) {
    throw new Error("ADMIN_PASSWORD is required when NODE_ENV=production");
  }
  // A pod that forgot DATABASE_URL would otherwise start a private embedded PostgreSQL and
  // quietly keep its data apart from every other replica's.
  if (nodeEnv === "production" && !str(env, "DATABASE_URL") && services.some((s) => s !== "api")) {
    throw new Error("DATABASE_URL is required when NODE_ENV=production");
  }
  // Replicas each keeping a key of their own under ./data could not read each other's secrets.
  if (nodeEnv === "production" && !str(env, "SECRETS_KEY") && services.includes("pipelines")) {
    throw new Error("SECRETS_KEY is required when NODE_ENV=production");
  }
  return {
    nodeEnv,
    port: int(env, "PORT", 3000),
    namespace: str(env, "NAMESPACE") ?? "ims",
    nodeId: str(env, "NODE_ID"),
    services,
    transporter: str(env, "TRANSPORTER"),
    natsAuth: natsAuthOf(env),
    databaseUrl: str(env, "DATABASE_URL"),
    embeddedPgPort: int(env, "EMBEDDED_PG_PORT", 5433, 1),
    dataDir,
    redisUrl: str(env, "REDIS_URL"),
    logLevel: str(env, "LOG_LEVEL") ?? "info",
    requestTimeoutMs: int(env, "REQUEST_TIMEOUT_MS", 10000, 100),
    adminUsername: (str(env, "ADMIN_USERNAME") ?? "admin@localhost").toLowerCase(),
    adminPassword,
    authCacheTtlS: int(env, "AUTH_CACHE_TTL_S", 60, 0),
    smtpUrl: str(env, "SMTP_URL"),
    mailFrom: str(env, "MAIL_FROM") ?? "Industrial Monitoring <no-reply@localhost>",
    outboxDir: path.resolve(str(env, "OUTBOX_DIR") ?? path.join(dataDir, "outbox")),
    publicUrl: (str(env, "PUBLIC_URL") ?? "http://localhost:3000").replace(/\/+$/, ""),
    monitorLicenseLimit: optionalInt(env, "MONITOR_LICENSE_LIMIT"),
    latestEdgeFirmware: str(env, "LATEST_EDGE_FIRMWARE") ?? "1.0.0",
    latestGatewayFirmware: str(env, "LATEST_GATEWAY_FIRMWARE") ?? "1.0.0",
    bodyLimitBytes: int(env, "BODY_LIMIT_BYTES", 1024 * 1024, 1024),
    twilioAccountSid: str(env, "TWILIO_ACCOUNT_SID"),
    twilioAuthToken: str(env, "TWILIO_AUTH_TOKEN"),
    twilioSmsFrom: str(env, "TWILIO_SMS_FROM"),
    twilioWhatsappFrom: str(env, "TWILIO_WHATSAPP_FROM"),
    twilioApiBase: str(env, "TWILIO_API_BASE"),
    notebooksDir: path.resolve(str(env, "NOTEBOOKS_DIR") ?? path.join(dataDir, "notebooks")),
    notebookPython: str(env, "NOTEBOOK_PYTHON"),
    notebookRunTimeoutS: int(env, "NOTEBOOK_RUN_TIMEOUT_S", 600, 1),
    notebookConcurrency: int(env, "NOTEBOOK_CONCURRENCY", 2, 1),
    notebookSandbox: oneOf(env, "NOTEBOOK_SANDBOX", ["bwrap", "pod"] as const, "bwrap"),
    notebookMemoryMb: int(env, "NOTEBOOK_MEMORY_MB", 1024, 64),
    notebookApiUrl: str(env, "NOTEBOOK_API_URL")?.replace(/\/+$/, ""),
    healthPort: optionalInt(env, "HEALTH_PORT"),
    drainGraceMs: int(env, "DRAIN_GRACE_S", 5, 0) * 1000,
    drainTimeoutMs: int(env, "DRAIN_TIMEOUT_S", 15, 1) * 1000,
    migrateOnly: str(env, "MIGRATE_ONLY") === "1" || str(env, "MIGRATE_ONLY") === "true",
    historyRollups: str(env, "HISTORY_ROLLUPS") !== "0" && str(env, "HISTORY_ROLLUPS") !== "false",
    historyCompressAfterMs: durationMs(env, "HISTORY_COMPRESS_AFTER", HOUR_MS, MINUTE_MS),
    pipelineActionTimeoutMs: int(env, "PIPELINE_ACTION_TIMEOUT_MS", 60000, 100),
    streamMaxDeliveries: int(env, "STREAM_MAX_DELIVERIES", 5, 1),
    streamMaxAgeS: int(env, "STREAM_MAX_AGE_S", 7 * 24 * 3600, 60),
    streamMaxBytes: int(env, "STREAM_MAX_BYTES", DEFAULT_STREAM_MAX_BYTES, 0),
    streamPartitions: int(env, "STREAM_PARTITIONS", DEFAULT_PARTITIONS, 1, 1024),
    streamReplicas: int(env, "STREAM_REPLICAS", 1, 1, 5),
    trustProxy: trustProxyOf(env),
    sessionTtlS: int(env, "SESSION_TTL_S", 8 * 3600, 60),
    signInThrottle: str(env, "SIGNIN_THROTTLE") !== "0" && str(env, "SIGNIN_THROTTLE") !== "false",
    throttleWindowS: int(env, "THROTTLE_WINDOW_S", 15 * 60, 1),
    auditTrail: str(env, "AUDIT_TRAIL") !== "0" && str(env, "AUDIT_TRAIL") !== "false",
    sourceAllow: sourceAllowOf(env),
    secretsKey: secretsKeyOf(env),
    ingestKeyGraceS: int(env, "INGEST_KEY_GRACE_S", 3600, 0),
    mqttPort: int(env, "MQTT_PORT", 1883, 0, 65535),
    // 4 MiB: an NBIRTH of 10,000 metrics, each with a 40-character name and two properties, is 1.1 MB.
    mqttMaxPacketBytes: int(env, "MQTT_MAX_PACKET_BYTES", 4 * 1024 * 1024, 1024, 268_435_460),
    mqttHostId: mqttHostIdOf(env),
    mqttUrl: str(env, "MQTT_URL"),
    mqttUsername: str(env, "MQTT_USERNAME"),
    mqttPassword: str(env, "MQTT_PASSWORD"),
    mqttSites: str(env, "MQTT_SITES")?.split(",").map((s) => s.trim().toLowerCase()).filter(Boolean) ?? null,
    collectorPageRows: int(env, "COLLECTOR_PAGE_ROWS", 1000, 1, 100_000),
    opcuaPkiDir: path.resolve(str(env, "OPCUA_PKI_DIR") ?? path.join(dataDir, "opcua-pki")),
    bearingMatchTolerancePct: decimal(env, "BEARING_MATCH_TOLERANCE", 3, 0.1, 20),
  };
}

let current: AppConfig | undefined;

/** The process's configuration; tests replace it with `setConfig` before starting a broker. */
export function config(): AppConfig {
  current ??= readConfig();
  return current;
}

export function setConfig(next: AppConfig): void {
  current = next;
}
