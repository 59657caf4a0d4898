/** `npm run repl`: an admin REPL joined to the cluster that TRANSPORTER and NAMESPACE name. */
import { readConfig } from "../lib/config";
import { createReplBroker } from "../repl";

async function main(): Promise<void> {
  // The REPL serves no service; SERVICES=api only keeps the serving nodes' checks (ADMIN_PASSWORD) out of its way.
  const cfg = readConfig({ ...process.env, SERVICES: "api", LOG_LEVEL: process.env.LOG_LEVEL ?? "warn" });
  const { broker } = createReplBroker(cfg);
  await broker.start();
  broker.repl();
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
