/** `npm start` / `npm run start:service`: one node with the services that SERVICES names (all by default). */
import { readConfig } from "../lib/config";
import { migrateOnly, startNode } from "./runtime";

async function main(): Promise<void> {
  const cfg = readConfig();
  if (cfg.migrateOnly) {
    await migrateOnly(cfg);
    process.exit(0);
  }
  const node = await startNode(cfg);
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    try {
      // SIGTERM is an orchestrator's (k8s, compose): drain. SIGINT is a person's Ctrl-C: stop now.
      if (signal === "SIGTERM") {
        node.broker.logger.info(`SIGTERM received: unready, serving ${node.config.drainGraceMs / 1000} s more, then draining`);
        await node.drain();
      } else {
        node.broker.logger.info(`${signal} received, stopping`);
        await node.stop();
      }
      process.exit(0);
    } catch (err) {
      console.error(err);
      process.exit(1);
    }
  };
  process.on("SIGINT", () => void shutdown("SIGINT"));
  // The terminal closed: stopped as on Ctrl-C (the embedded PostgreSQL, in a session of its own, does not hear it).
  process.on("SIGHUP", () => void shutdown("SIGHUP"));
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
