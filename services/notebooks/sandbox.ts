/**
 * The sandbox every notebook run executes in (docs/security.md, "Notebooks"): the owner's own
 * unprivileged uid, an environment with no secret of the service, no network but the owner's
 * API door, no file but the owner's folder (read-write), the Python runtime and the runner
 * (read-only), a process tree that dies with the run, and the run's memory limit (memory.ts).
 *
 * `bwrap` (the default): bubblewrap puts the run in user, pid, mount, network, ipc and uts
 * namespaces of its own. setpriv drops root first, so the kernel is unprivileged outside its
 * namespaces too (root mapped into a user namespace would still own root's files). When the pid
 * namespace's first process ends, the kernel ends every process in it: nothing outlives a run.
 * `pod` (Kubernetes): the notebooks pod is the sandbox (its own Secret, a NetworkPolicy that lets
 * it reach the api only); the run still gets the owner's uid, a clean environment and the limit.
 *
 * The command lines are built by pure functions, so a unit test reads them without a kernel.
 */
import { execFile, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";

export type SandboxMode = "bwrap" | "pod";

/** Where the run's folders appear inside a bwrap sandbox. */
export const INSIDE = { folder: "/notebooks", door: "/run/ims", helpers: "/opt/ims", tmp: "/tmp" } as const;

/** Processes and threads a run's uid may have at once (RLIMIT_NPROC): a kernel with numpy uses a few dozen. */
export const MAX_PROCESSES = 512;

/** The door's socket, in the run's door folder. */
export const DOOR_SOCKET = "api.sock";

/** Top-level folders that are links to /usr on a merged-/usr system, or folders of their own on older ones. */
const SYSTEM_ROOTS = ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];

/** What of /etc a Python runtime reads (the loader's cache, Debian's alternatives and Python config); nothing secret. */
const ETC_ENTRIES = ["ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime", "jupyter", "matplotlibrc", "fonts"];

/** The uid a run of `owner` executes as: one per owner, in a range no system account takes. */
export function ownerUid(owner: string): number {
  return 200_000 + (createHash("sha256").update(owner).digest().readUInt32BE(0) % 100_000);
}

/** Whether this process may switch to another uid (root): else runs execute as the service's own, unprivileged, user. */
export const canSwitchUser = (): boolean => typeof process.getuid === "function" && process.getuid() === 0;

/** A run, as the sandbox sees it: host paths, and who runs it. */
export interface RunPlan {
  mode: SandboxMode;
  /** The interpreter with nbclient and ipykernel (a host path). */
  python: string;
  /** Host folders of that Python's installation outside /usr, bound read-only at the same place. */
  runtime: string[];
  /** The host folder of runner.py and ims.py. */
  helpers: string;
  /** The owner's notebooks folder (read-write); null for a probe. */
  folder: string | null;
  /** The run's own folder: its door socket and, in `pod` mode, its temporary files. */
  runDir: string;
  /** The uid (and gid) to run as; null: the service's own user. */
  uid: number | null;
  /** Where the run's processes join its memory cgroup first (its `cgroup.procs`), or the per-process RLIMIT_AS. */
  memory: { cgroupProcs: string } | { rlimitBytes: number };
  /** What to run inside, paths as seen inside (`inside` maps them). */
  command: (inside: Placement) => string[];
}

/** Where the plan's host folders are, as the run sees them. */
export interface Placement {
  folder: string;
  door: string;
  helpers: string;
  tmp: string;
}

export interface Launch {
  file: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  /** Whether the pids the runner reports are this machine's (no pid namespace): the service kills them itself. */
  hostPids: boolean;
  /** The uid the run executes as (null: the service's own). */
  uid: number | null;
}

export function placementOf(plan: Pick<RunPlan, "mode" | "folder" | "runDir" | "helpers">): Placement {
  if (plan.mode === "bwrap") return { ...INSIDE, folder: plan.folder === null ? INSIDE.tmp : INSIDE.folder };
  return { folder: plan.folder ?? plan.runDir, door: plan.runDir, helpers: plan.helpers, tmp: path.join(plan.runDir, "tmp") };
}

/** The run's whole environment: nothing of the service's (no DATABASE_URL, no password, no bus). */
export function runEnv(at: Placement): Record<string, string> {
  return {
    PATH: "/usr/local/bin:/usr/bin:/bin",
    HOME: at.tmp,
    USER: "notebook",
    LOGNAME: "notebook",
    LANG: "C.UTF-8",
    PYTHONPATH: at.helpers,
    MPLCONFIGDIR: path.posix.join(at.tmp, "matplotlib"),
    IPYTHONDIR: path.posix.join(at.tmp, "ipython"),
    JUPYTER_RUNTIME_DIR: path.posix.join(at.tmp, "jupyter"),
    PYDEVD_DISABLE_FILE_VALIDATION: "1",
    IMS_API_SOCKET: path.posix.join(at.door, DOOR_SOCKET),
  };
}

/** `--symlink` or `--ro-bind` for the system's top-level folders, as this machine has them. */
function systemRootArgs(): string[] {
  const args: string[] = [];
  for (const root of SYSTEM_ROOTS) {
    const st = fs.lstatSync(root, { throwIfNoEntry: false });
    if (!st) continue;
    if (st.isSymbolicLink()) args.push("--symlink", fs.readlinkSync(root), root);
    else if (st.isDirectory()) args.push("--ro-bind", root, root);
  }
  return args;
}

function etcArgs(): string[] {
  const names = fs.readdirSync("/etc").filter((n) => ETC_ENTRIES.includes(n) || /^python3(\.\d+)?$/.test(n));
  return names.flatMap((n) => ["--ro-bind", `/etc/${n}`, `/etc/${n}`]);
}

/** bubblewrap's arguments for a plan: what the run sees, and nothing else. */
export function bwrapArgs(plan: RunPlan, at: Placement): string[] {
  const env = runEnv(at);
  return [
    "--unshare-all",
    "--die-with-parent",
    "--new-session",
    "--hostname",
    "notebook",
    "--ro-bind",
    "/usr",
    "/usr",
    ...systemRootArgs(),
    ...etcArgs(),
    ...plan.runtime.flatMap((dir) => ["--ro-bind", dir, dir]),
    "--proc",
    "/proc",
    "--dev",
    "/dev",
    "--tmpfs",
    INSIDE.tmp,
    ...(plan.folder === null ? [] : ["--bind", plan.folder, INSIDE.folder]),
    "--bind",
    plan.runDir,
    INSIDE.door,
    "--ro-bind",
    plan.helpers,
    INSIDE.helpers,
    "--chdir",
    at.folder,
    "--clearenv",
    ...Object.entries(env).flatMap(([k, v]) => ["--setenv", k, v]),
    "--",
  ];
}

/**
 * The whole command line of a run: join the memory cgroup (before anything forks, so no child
 * escapes it) or take the per-process limit, drop to the owner's uid, enter the namespaces.
 */
export function launchOf(plan: RunPlan): Launch {
  const at = placementOf(plan);
  const inner = plan.command(at);
  const sandboxed = plan.mode === "bwrap" ? ["bwrap", ...bwrapArgs(plan, at), ...inner] : inner;
  const asUser =
    plan.uid === null ? sandboxed : ["setpriv", `--reuid=${plan.uid}`, `--regid=${plan.uid}`, "--clear-groups", "--no-new-privs", "--", ...sandboxed];
  // At most MAX_PROCESSES processes and threads of the run's uid: a fork bomb stops there (root ignores it; the run is never root).
  const counted = ["prlimit", `--nproc=${MAX_PROCESSES}`, ...("rlimitBytes" in plan.memory ? [`--as=${plan.memory.rlimitBytes}`] : []), "--", ...asUser];
  const limited = "cgroupProcs" in plan.memory ? ["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"', plan.memory.cgroupProcs, ...counted] : counted;
  const [file, ...args] = limited;
  // bwrap clears the environment itself; in `pod` mode the process starts with this one alone.
  return { file: file!, args, env: runEnv(at), cwd: plan.mode === "bwrap" ? "/" : at.folder, hostPids: plan.mode === "pod", uid: plan.uid };
}

/** The folders of a Python installation outside /usr (a pyenv, a venv), which the sandbox must show read-only. */
export function runtimeFolders(python: string): Promise<string[]> {
  const script =
    "import json, os, site, sys; print(json.dumps([os.path.dirname(os.path.realpath(sys.executable)), sys.prefix, sys.base_prefix, sys.exec_prefix, *site.getsitepackages()]))";
  return new Promise((resolve, reject) => {
    execFile(python, ["-c", script], { timeout: 20_000 }, (err, stdout) => {
      if (err) return reject(err);
      const found = (JSON.parse(stdout) as string[]).map((p) => path.resolve(p)).filter((p) => !p.startsWith("/usr/") && fs.existsSync(p));
      // A folder inside another listed one is bound with it.
      const unique = [...new Set(found)].sort();
      resolve(unique.filter((p, i) => !unique.slice(0, i).some((q) => p.startsWith(q + "/"))));
    });
  });
}

/** Gives the owner's folder to the owner's uid, closed to every other uid. */
export async function handFolderTo(folder: string, uid: number | null): Promise<void> {
  if (uid === null) return;
  await fs.promises.chown(folder, uid, uid);
  await fs.promises.chmod(folder, 0o700);
}

export interface ProbeOptions {
  mode: SandboxMode;
  python: string;
  helpers: string;
  runsDir: string;
  memoryMb: number;
}

/**
 * Whether this machine can sandbox a run: a trivial run, in the very sandbox runs get, imports the
 * kernel's packages. The answer names the interpreter's real path and runtime folders, or why not.
 */
export async function probeSandbox(o: ProbeOptions): Promise<{ ok: true; executable: string; runtime: string[] } | { ok: false; reason: string }> {
  let executable: string;
  let runtime: string[];
  try {
    executable = await new Promise<string>((resolve, reject) =>
      execFile(o.python, ["-c", "import os, sys; print(os.path.realpath(sys.executable))"], { timeout: 20_000 }, (err, out) =>
        err ? reject(err) : resolve(out.trim()),
      ),
    );
    runtime = await runtimeFolders(executable);
  } catch (err) {
    return { ok: false, reason: `the Python at ${o.python} did not answer: ${String(err)}` };
  }
  const runDir = await fs.promises.mkdtemp(path.join(o.runsDir, "probe-"));
  try {
    const uid = canSwitchUser() ? ownerUid("\0probe") : null;
    if (uid !== null) await fs.promises.chown(runDir, uid, uid);
    const launch = launchOf({
      mode: o.mode,
      python: executable,
      runtime,
      helpers: o.helpers,
      folder: null,
      runDir,
      uid,
      memory: { rlimitBytes: Math.max(o.memoryMb, 1024) * 1024 * 1024 * 4 },
      command: () => [executable, "-c", "import nbclient, ipykernel, ims"],
    });
    // A session of its own, as runs have: the terminal's Ctrl-C stops the service, not the probe under it.
    await new Promise<void>((resolve, reject) => {
      const probe = spawn(launch.file, launch.args, { env: launch.env, cwd: launch.cwd, detached: true, stdio: ["ignore", "ignore", "pipe"] });
      let stderr = "";
      probe.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr = (stderr + chunk).slice(-2000)));
      const timer = setTimeout(() => probe.kill("SIGKILL"), 30_000);
      probe.once("error", (err) => {
        clearTimeout(timer);
        reject(err);
      });
      probe.once("close", (code) => {
        clearTimeout(timer);
        if (code === 0) resolve();
        else reject(new Error(stderr.trim().split("\n").pop() || `the probe exited with code ${code}`));
      });
    });
    return { ok: true, executable, runtime };
  } catch (err) {
    return { ok: false, reason: (err as Error).message };
  } finally {
    await fs.promises.rm(runDir, { recursive: true, force: true });
  }
}

/**
 * The runs' own folder (door sockets, the helpers), which every owner's uid must reach: under the
 * system's temporary folder, one per NOTEBOOKS_DIR, the helpers copied in (the checkout may sit in
 * a private folder such as /root).
 */
export async function prepareRunsDir(tmpRoot: string, notebooksDir: string, helpersSource: string): Promise<{ runsDir: string; helpers: string }> {
  const hash = createHash("sha256").update(path.resolve(notebooksDir)).digest("hex").slice(0, 12);
  const runsDir = path.join(tmpRoot, `ims-notebook-runs-${hash}`);
  await fs.promises.mkdir(runsDir, { recursive: true, mode: 0o711 });
  await fs.promises.chmod(runsDir, 0o711);
  // Named by their content: a replica starting beside a running one never changes the files a run has bound.
  const files = await Promise.all(["runner.py", "ims.py"].map(async (name) => ({ name, text: await fs.promises.readFile(path.join(helpersSource, name)) })));
  const digest = createHash("sha256");
  for (const f of files) digest.update(f.name).update(f.text);
  const helpers = path.join(runsDir, `helpers-${digest.digest("hex").slice(0, 12)}`);
  if (!fs.existsSync(helpers)) {
    const staging = await fs.promises.mkdtemp(path.join(runsDir, "staging-"));
    for (const f of files) await fs.promises.writeFile(path.join(staging, f.name), f.text, { mode: 0o644 });
    await fs.promises.chmod(staging, 0o755);
    await fs.promises.rename(staging, helpers).catch(() => fs.promises.rm(staging, { recursive: true, force: true }));
  }
  return { runsDir, helpers };
}
