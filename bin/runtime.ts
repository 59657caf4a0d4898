/**
 * Starting a node: the services named by SERVICES, on the broker of moleculer.config.ts, with the
 * embedded PostgreSQL when no DATABASE_URL is given. `npm start` and the tests use the same path.
 */
import { ServiceBroker } from "moleculer";
import { brokerOptions } from "../moleculer.config";
import { setConfig, type AppConfig } from "../lib/config";
import { startEmbeddedPostgres, type EmbeddedDatabase } from "../lib/embedded-pg";
import { startHealthServer, type HealthServer } from "../lib/health";
import { SERVICE_SCHEMAS } from "../services";
import { dbOptionsOf, migrateSchema } from "../mixins/db.mixin";

const NEEDS_DATABASE = new Set(["auth", "config", "pipelines", "alerting", "notifier", "notebooks", "cm", "ems"]);

export interface RunningNode {
  broker: ServiceBroker;
  config: AppConfig;
  /** The /live, /ready and /metrics server, when HEALTH_PORT is set. */
  health?: HealthServer;
  stop(): Promise<void>;
  /**
   * The graceful way out (SIGTERM): unready at once, serving for `drainGraceMs` more while load
   * balancers stop sending here, then no new connection, the requests in flight completed, and stop.
   */
  drain(): Promise<void>;
}

/** What a service does for a graceful drain (the api: its HTTP server). */
interface Drainable {
  beginDrain?(): void;
  finishDrain?(timeoutMs: number): Promise<void>;
}

export async function startNode(cfg: AppConfig): Promise<RunningNode> {
  let embedded: EmbeddedDatabase | undefined;
  if (!cfg.databaseUrl && cfg.services.some((s) => NEEDS_DATABASE.has(s))) {
    embedded = await startEmbeddedPostgres(cfg.dataDir, cfg.embeddedPgPort, (m) => console.log(m));
    cfg = { ...cfg, databaseUrl: embedded.url };
  }
  setConfig(cfg);
  const broker = new ServiceBroker(brokerOptions(cfg));
  for (const name of cfg.services) {
    const schema = SERVICE_SCHEMAS[name];
    if (schema) broker.createService(schema);
    else broker.logger.warn(`service "${name}" is not part of this build yet; skipped`);
  }
  // Up before the services start, so liveness answers while migrations run; ready comes later.
  const health = cfg.healthPort === undefined ? undefined : await startHealthServer(broker, cfg.healthPort);
  try {
    await broker.start();
  } catch (err) {
    await broker.stop().catch(() => undefined);
    await health?.close();
    await embedded?.stop().catch(() => undefined);
    throw err;
  }
  const node: RunningNode = {
    broker,
    config: cfg,
    health,
    async stop() {
      health?.setDraining();
      await broker.stop();
      await health?.close();
      await embedded?.stop();
    },
    async drain() {
      health?.setDraining();
      const drainable = broker.services as unknown as Drainable[];
      for (const svc of drainable) svc.beginDrain?.();
      if (cfg.drainGraceMs > 0) await new Promise((r) => setTimeout(r, cfg.drainGraceMs));
      // The gateway first: its requests in flight still need the services of this node.
      await Promise.all(drainable.map((svc) => svc.finishDrain?.(cfg.drainTimeoutMs)));
      await node.stop();
    },
  };
  return node;
}

/**
 * MIGRATE_ONLY=1: the migrations of the services SERVICES names, each under its advisory lock,
 * without starting a broker. The Kubernetes Job runs this once per release before the rollout.
 */
export async function migrateOnly(cfg: AppConfig, log: (msg: string) => void = console.log): Promise<string[]> {
  if (!cfg.databaseUrl) throw new Error("MIGRATE_ONLY=1 needs DATABASE_URL");
  setConfig(cfg);
  const migrated: string[] = [];
  for (const name of cfg.services) {
    const schema = SERVICE_SCHEMAS[name];
    const opts = schema ? dbOptionsOf(schema) : undefined;
    if (!opts) continue;
    await migrateSchema(opts, cfg.databaseUrl);
    log(`migrated ${name} (schema "${opts.schema}")`);
    migrated.push(name);
  }
  return migrated;
}
