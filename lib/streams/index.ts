/** The stream adapter a node uses: JetStream when the transporter is NATS, else the PostgreSQL log. */
import type { AppConfig } from "../config";
import { JetStreamAdapter } from "./jetstream";
import { STREAM_GROUPS } from "./groups";
import { PgStreamAdapter } from "./pg";
import type { StreamAdapter, StreamSettings } from "./types";

export * from "./types";
export { Outbox, OUTBOX_KEY_SQL, OUTBOX_SQL, type StagingTx } from "./outbox";
export { JetStreamAdapter, jetStreamNames } from "./jetstream";
export { PgStreamAdapter } from "./pg";
export { DEFAULT_PARTITIONS, partitionOf } from "./partitions";
export { STREAM_GROUPS } from "./groups";

interface Logger {
  warn(...args: unknown[]): void;
  error(...args: unknown[]): void;
}

export function streamSettings(cfg: AppConfig): StreamSettings {
  return {
    namespace: cfg.namespace,
    maxDeliveries: cfg.streamMaxDeliveries,
    maxAgeS: cfg.streamMaxAgeS,
    maxBytes: cfg.streamMaxBytes,
    groups: STREAM_GROUPS,
    partitions: cfg.streamPartitions,
    replicas: cfg.streamReplicas,
  };
}

/** `nats://a:4222,nats://b:4222` (the transporter's own URL) or undefined for any other transporter. */
export function natsServers(transporter: string | undefined): string | undefined {
  return transporter && /^nats:\/\//i.test(transporter) ? transporter : undefined;
}

export function createStreamAdapter(cfg: AppConfig, logger: Logger): StreamAdapter {
  const servers = natsServers(cfg.transporter);
  if (servers) return new JetStreamAdapter(servers, streamSettings(cfg), logger, cfg.natsAuth);
  if (!cfg.databaseUrl) throw new Error("the in-process stream adapter needs DATABASE_URL (or the embedded PostgreSQL)");
  return new PgStreamAdapter(cfg.databaseUrl, streamSettings(cfg), logger);
}
