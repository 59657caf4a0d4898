/**
 * Opens lib/opcua-source.ts's source in a process of its own (node-opcua is ES modules, which
 * Jest's loader does not load) and writes what it is told as JSON lines on stdout:
 * `{"state": …}`, `{"changes": […]}`, `{"opened": true}` or `{"failed": "<message>", "detail": …}`. Its one
 * argument is JSON: `{ settings, addresses, allow, pkiDir }` (`allow`: SOURCE_ALLOW's text).
 * Closes the source on SIGTERM, writes `{"closed": true}` and exits.
 */
import { openOpcuaSource, OpcuaSourceError, type OpcuaSourceSettings } from "../../lib/opcua-source";
import { parseSourceAllow, SourceGuard } from "../../lib/source-guard";

interface ProbeInput {
  settings: OpcuaSourceSettings;
  addresses: string[];
  allow: string;
  pkiDir: string;
}

const say = (line: object) => process.stdout.write(`${JSON.stringify(line)}\n`);

async function main(): Promise<void> {
  const input = JSON.parse(process.argv[2]!) as ProbeInput;
  const guard = new SourceGuard({ own: [], allow: parseSourceAllow(input.allow) });
  // A SIGTERM while it is still opening ends the opening.
  const opening = new AbortController();
  process.once("SIGTERM", () => opening.abort());
  try {
    const source = await openOpcuaSource(
      input.settings,
      input.addresses,
      { onChanges: async (changes) => void say({ changes }), onState: (state) => void say({ state }) },
      { check: (host, port) => guard.check(host, port), pkiDir: input.pkiDir, batchMs: 100, signal: opening.signal, log: (msg) => process.stderr.write(`${msg}\n`) },
    );
    say({ opened: true });
    process.removeAllListeners("SIGTERM");
    process.on("SIGTERM", () => {
      void source.close().then(() => {
        say({ closed: true });
        process.exit(0);
      });
    });
  } catch (err) {
    say({ failed: err instanceof Error ? err.message : String(err), detail: err instanceof OpcuaSourceError ? err.detail : null });
    process.exit(0);
  }
}

void main();
