/**
 * The Jupyter runtime: which Python has nbclient and ipykernel, and running the runner
 * (python/runner.py) under the run's time limit, in the sandbox launch it is given (sandbox.ts).
 */
import { execFile, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import type { Readable } from "node:stream";
import type { Launch } from "./sandbox";

/** runner.py and ims.py: bound read-only into every run. */
export const HELPERS = path.join(__dirname, "python");

/**
 * Debian's python3-nbclient installs into the system Python, which need not be the first
 * `python3` on PATH (pyenv, venvs): without NOTEBOOK_PYTHON, the first of these that imports the
 * kernel's packages is used.
 */
const CANDIDATES = ["python3", "/usr/bin/python3", "/usr/local/bin/python3", "python"];

function hasJupyter(python: string): Promise<boolean> {
  return new Promise((resolve) => {
    execFile(python, ["-c", "import nbclient, nbformat, ipykernel, jupyter_client"], { timeout: 20_000 }, (err) =>
      resolve(!err),
    );
  });
}

/** The interpreter to run notebooks with, or null when the machine has no Jupyter kernel. */
export async function findJupyterPython(configured: string | undefined): Promise<string | null> {
  for (const python of configured ? [configured] : CANDIDATES) {
    if (await hasJupyter(python)) return python;
  }
  return null;
}

export interface RunOutcome {
  status: "succeeded" | "failed";
  error: string | null;
}

export interface Execution {
  done: Promise<RunOutcome>;
  /** Stops the run now (service shutdown): the runner and its kernel are killed. */
  kill(): void;
}

function killGroup(pid: number | undefined): void {
  if (!pid || pid <= 1) return;
  for (const target of [-pid, pid]) {
    try {
      process.kill(target, "SIGKILL");
    } catch {
      /* already gone */
    }
  }
}

/**
 * Whether `pid` is a process of the run's uid, and not this one: a pid the runner reports is
 * signalled only then, whatever a notebook managed to make it report.
 */
function isRunProcess(pid: number, uid: number | null): boolean {
  if (!Number.isInteger(pid) || pid <= 1 || pid === process.pid) return false;
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
    const real = Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]);
    return real === (uid ?? process.getuid?.());
  } catch {
    return false;
  }
}

/** Why a run stopped early, when it did: the messages are the caller's. */
export interface Stops {
  timeLimit: string;
  interrupted: string;
}

/**
 * Runs the launch (the runner in its sandbox) and reads its outcome. The launch leads a process
 * group of its own; past the time limit the group is killed, and with it the sandbox's pid
 * namespace. Where the run has no pid namespace (`hostPids`), the runner reports its kernel's pid
 * (the kernel has a session of its own) and that group is killed too.
 */
export function executeNotebook(launch: Launch, timeoutS: number, stops: Stops): Execution {
  // The runner reports on fd 3, which the kernel neither inherits nor can open (runner.py).
  const child = spawn(launch.file, launch.args, {
    detached: true,
    stdio: ["ignore", "ignore", "pipe", "pipe"],
    env: launch.env,
    cwd: launch.cwd,
  });
  const status = child.stdio[3] as Readable;
  const errors = child.stdio[2] as Readable;
  let kernelPid: number | undefined;
  let outcome: RunOutcome | undefined;
  let stdout = "";
  let stderr = "";
  let stopped: string | undefined;
  const kill = (reason: string) => {
    stopped ??= reason;
    killGroup(child.pid);
    killGroup(kernelPid);
  };
  status.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
    let nl: number;
    while ((nl = stdout.indexOf("\n")) >= 0) {
      const line = stdout.slice(0, nl).trim();
      stdout = stdout.slice(nl + 1);
      if (!line) continue;
      try {
        const msg = JSON.parse(line) as { kernel_pid?: number; status?: RunOutcome["status"]; error?: string };
        // A pid inside the sandbox's namespace is not this machine's: never signal it.
        if (typeof msg.kernel_pid === "number" && launch.hostPids && isRunProcess(msg.kernel_pid, launch.uid)) kernelPid = msg.kernel_pid;
        if (msg.status) outcome = { status: msg.status, error: msg.error ?? null };
      } catch {
        /* not a line of the runner's */
      }
    }
  });
  errors.setEncoding("utf8").on("data", (chunk: string) => {
    stderr = (stderr + chunk).slice(-2000);
  });
  const timer = setTimeout(() => kill("timeout"), timeoutS * 1000);
  const done = new Promise<RunOutcome>((resolve) => {
    const finish = (code: number | null, failure?: string) => {
      clearTimeout(timer);
      // A kernel the runner could not shut down (it crashed) must not outlive the run.
      if (kernelPid !== undefined && isRunProcess(kernelPid, launch.uid)) killGroup(kernelPid);
      if (stopped === "timeout") resolve({ status: "failed", error: stops.timeLimit });
      else if (stopped) resolve({ status: "failed", error: stopped });
      else if (outcome) resolve(outcome);
      else {
        const last = stderr.trim().split("\n").pop() ?? "";
        resolve({ status: "failed", error: failure ?? `The runner exited with code ${code}${last ? `: ${last}` : ""}` });
      }
    };
    child.once("error", (err) => finish(null, `The runner could not start: ${err.message}`));
    child.once("close", (code) => finish(code));
  });
  return { done, kill: () => kill(stops.interrupted) };
}
