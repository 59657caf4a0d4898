/**
 * The Jupyter runtime of this replica and the sandbox its runs get, each probed once (a probe
 * that found nothing is tried again after a minute, someone may be installing it; a found one is
 * kept), and the api its runs' doors forward to.
 */
import type { Server } from "node:http";
import type { ServiceBroker } from "moleculer";
import { config } from "../../lib/config";
import { findJupyterPython } from "./kernel";
import type { NotebooksLogger } from "./port";
import type { SandboxState } from "./queue";
import { probeSandbox } from "./sandbox";

/** A probe that found no Jupyter is retried after this long: someone may be installing it. */
const NEGATIVE_PROBE_MS = 60_000;

/** The runs' own folder (door sockets) and the helpers bound into every run. */
export interface RunFolders {
  runsDir: string;
  helpers: string;
}

export class RunRuntime {
  private pythonProbe: { at: number; python: Promise<string | null> } | undefined;
  private sandboxProbe: { at: number; state: Promise<SandboxState> } | undefined;

  constructor(
    private readonly folders: Promise<RunFolders>,
    private readonly logger: NotebooksLogger,
  ) {}

  /** The interpreter with nbclient (NOTEBOOK_PYTHON, or probed once); null: no Jupyter on this machine. */
  python(): Promise<string | null> {
    const probe = this.pythonProbe;
    if (probe && Date.now() - probe.at < NEGATIVE_PROBE_MS) return probe.python;
    if (probe) {
      // A found interpreter is kept; only a failed probe is retried.
      const retry = probe.python.then((found) => found ?? findJupyterPython(config().notebookPython));
      this.pythonProbe = { at: Date.now(), python: retry };
      return retry;
    }
    const python = findJupyterPython(config().notebookPython);
    this.pythonProbe = { at: Date.now(), python };
    return python;
  }

  /** Whether runs can be sandboxed here (probed, a failure retried after a minute), and with what runtime. */
  sandbox(): Promise<SandboxState> {
    const probe = this.sandboxProbe;
    if (probe && Date.now() - probe.at < NEGATIVE_PROBE_MS) return probe.state;
    const cfg = config();
    const previous = probe?.state;
    const state = (async (): Promise<SandboxState> => {
      const found = await previous;
      if (found?.ok) return found;
      const python = await this.python();
      if (!python) return { ok: false, reason: "no Python with nbclient and ipykernel" };
      const { runsDir, helpers } = await this.folders;
      const probed = await probeSandbox({ mode: cfg.notebookSandbox, python, helpers, runsDir, memoryMb: cfg.notebookMemoryMb });
      if (probed.ok) this.logger.info(`Notebook runs are sandboxed (${cfg.notebookSandbox}) with the Python of ${probed.executable}`);
      else this.logger.warn(`Notebook runs cannot be sandboxed here, so none will run (${probed.reason})`);
      return probed;
    })();
    this.sandboxProbe = { at: Date.now(), state };
    return state;
  }
}

/** The api of this process where it runs here (its port may have been any free one), else PORT on this machine. */
export function localApiUrl(broker: ServiceBroker): string {
  const server = (broker.getLocalService("api") as unknown as { server?: Server } | undefined)?.server;
  const address = server?.address();
  const port = address && typeof address === "object" ? address.port : config().port;
  return `http://127.0.0.1:${port}`;
}
