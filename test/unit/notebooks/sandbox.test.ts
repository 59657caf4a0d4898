/** The sandbox's command lines and the door's rule, read without a kernel (services/notebooks/sandbox.ts, api-door.ts). */
import { isReadThrough } from "../../../services/notebooks/api-door";
import { MAX_PROCESSES, launchOf, ownerUid, runEnv, type RunPlan } from "../../../services/notebooks/sandbox";

const plan = (over: Partial<RunPlan> = {}): RunPlan => ({
  mode: "bwrap",
  python: "/usr/bin/python3.11",
  runtime: [],
  helpers: "/tmp/runs/helpers-abc",
  folder: "/srv/notebooks/ana%40plant",
  runDir: "/tmp/runs/run-1",
  uid: ownerUid("ana@plant"),
  memory: { cgroupProcs: "/sys/fs/cgroup/memory/ims-notebooks/run-1/cgroup.procs" },
  command: (at) => ["/usr/bin/python3.11", `${at.helpers}/runner.py`, `${at.folder}/a.ipynb`],
  ...over,
});

describe("a run's launch", () => {
  it("joins its memory cgroup first, drops to the owner's uid, then enters bubblewrap's namespaces with a cleared environment", () => {
    const l = launchOf(plan());
    const argv = [l.file, ...l.args];
    expect(argv.slice(0, 4)).toEqual(["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"', "/sys/fs/cgroup/memory/ims-notebooks/run-1/cgroup.procs"]);
    expect(argv.slice(4, 7)).toEqual(["prlimit", `--nproc=${MAX_PROCESSES}`, "--"]);
    const setpriv = argv.indexOf("setpriv");
    const bwrap = argv.indexOf("bwrap");
    expect(setpriv).toBeGreaterThan(0);
    expect(bwrap).toBeGreaterThan(setpriv);
    expect(argv).toContain(`--reuid=${ownerUid("ana@plant")}`);
    for (const flag of ["--unshare-all", "--die-with-parent", "--new-session", "--clearenv"]) expect(argv).toContain(flag);
    expect(argv).not.toContain("--share-net");
    // The owner's folder read-write at /notebooks, nothing else of the host writable.
    const binds = argv.flatMap((a, i) => (a === "--bind" ? [[argv[i + 1], argv[i + 2]]] : []));
    expect(binds).toEqual([
      ["/srv/notebooks/ana%40plant", "/notebooks"],
      ["/tmp/runs/run-1", "/run/ims"],
    ]);
    expect(argv.slice(-3)).toEqual(["/usr/bin/python3.11", "/opt/ims/runner.py", "/notebooks/a.ipynb"]);
    expect(l.hostPids).toBe(false);
  });

  it("takes RLIMIT_AS where there is no cgroup, and runs as the service's own user where it cannot switch", () => {
    const l = launchOf(plan({ memory: { rlimitBytes: 1 << 30 }, uid: null }));
    expect([l.file, ...l.args].slice(0, 4)).toEqual(["prlimit", `--nproc=${MAX_PROCESSES}`, `--as=${1 << 30}`, "--"]);
    expect(l.args).not.toContain("setpriv");
  });

  it("in a pod, runs the command itself with the run's environment alone and kills the kernel's pids", () => {
    const l = launchOf(plan({ mode: "pod" }));
    expect(l.args).not.toContain("bwrap");
    expect(l.cwd).toBe("/srv/notebooks/ana%40plant");
    expect(l.hostPids).toBe(true);
    expect(l.env.IMS_API_SOCKET).toBe("/tmp/runs/run-1/api.sock");
  });

  it("gives the run an environment with nothing of the service's", () => {
    const env = runEnv({ folder: "/notebooks", door: "/run/ims", helpers: "/opt/ims", tmp: "/tmp" });
    expect(Object.keys(env).sort()).toEqual(
      ["HOME", "IMS_API_SOCKET", "IPYTHONDIR", "JUPYTER_RUNTIME_DIR", "LANG", "LOGNAME", "MPLCONFIGDIR", "PATH", "PYDEVD_DISABLE_FILE_VALIDATION", "PYTHONPATH", "USER"].sort(),
    );
  });

  it("gives each owner a uid of its own, never a system one", () => {
    expect(ownerUid("ana@plant")).not.toBe(ownerUid("ben@plant"));
    for (const owner of ["a", "admin@localhost", "ünïcode"]) expect(ownerUid(owner)).toBeGreaterThanOrEqual(200_000);
  });
});

describe("the owner's API door", () => {
  it("lets reads through", () => {
    expect(isReadThrough("GET", "/_cm/monitors/x/_history?tag=a")).toBe(true);
    expect(isReadThrough("HEAD", "/_notebooks/notebooks/_all")).toBe(true);
  });

  it("refuses changes, the GET forms of run and schedule, and another host", () => {
    for (const method of ["POST", "PUT", "DELETE", "PATCH"]) expect(isReadThrough(method, "/_notebooks/notebooks")).toBe(false);
    for (const url of ["/_notebooks/notebooks/_run", "/_notebooks/notebooks/_run/", "/_notebooks/notebooks/_schedule?x=1"]) expect(isReadThrough("GET", url)).toBe(false);
    for (const url of ["http://169.254.169.254/", "//evil.example/x", "*", ""]) expect(isReadThrough("GET", url)).toBe(false);
  });
});
