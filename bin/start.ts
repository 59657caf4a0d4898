/**
 * `npm start` / `npm run start:service`: one node with the services that SERVICES names (all by
 * default). `npm start -- --seed-demo [--name <name>]`: once it runs, the REPL's `seed-demo` made
 * by this node itself (the one-process start has no bus for the REPL to join), its lines printed.
 */
import { readConfig } from "../lib/config";
import { replPrincipal, runCommand } from "../repl";
import { seed } from "../repl/commands/seed";
import { migrateOnly, startNode } from "./runtime";

/** `--seed-demo` and its options from the command line (`--name X`, `--notify Y`), or null. */
function seedDemoArgs(argv: string[]): Record<string, string> | null {
  if (!argv.includes("--seed-demo")) return null;
  const options: Record<string, string> = {};
  for (const key of ["name", "notify"]) {
    const at = argv.indexOf(`--${key}`);
    if (at >= 0 && argv[at + 1] !== undefined) options[key] = argv[at + 1]!;
  }
  return options;
}

async function main(): Promise<void> {
  const cfg = readConfig();
  if (cfg.migrateOnly) {
    await migrateOnly(cfg);
    process.exit(0);
  }
  const node = await startNode(cfg);
  const demo = seedDemoArgs(process.argv.slice(2));
  if (demo) {
    const out = await runCommand(seed, { broker: node.broker, user: replPrincipal(), joinedAt: Date.now() }, { options: { url: `http://localhost:${cfg.port}`, ...demo } });
    console.log(`\nseed-demo:\n${out}\n`);
  }
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
