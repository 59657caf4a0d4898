/**
 * A run's memory limit: NOTEBOOK_MEMORY_MB for all of its processes together, in a memory
 * cgroup of its own (v1 `memory.limit_in_bytes`, or v2 `memory.max`) where this process may make
 * one (root, a writable hierarchy); else per process by RLIMIT_AS. The cgroup also tells whether
 * the kernel's OOM killer ended the run, and lists every process a run left, so that a process
 * that started a session of its own is killed with the run (the `pod` sandbox has no pid
 * namespace to do it).
 */
import fs from "node:fs";
import path from "node:path";

const V1_ROOT = "/sys/fs/cgroup/memory";
const V2_ROOT = "/sys/fs/cgroup";
const GROUP = "ims-notebooks";

export interface RunMemory {
  /** How the run's processes are held: join `cgroupProcs` first, or run under RLIMIT_AS. */
  limit: { cgroupProcs: string } | { rlimitBytes: number };
  /** Whether the run was stopped by its memory limit (an OOM kill in its cgroup). */
  exceeded(): boolean;
  /** Kills every process still in the run's cgroup. */
  killAll(): void;
  /** Removes the cgroup (once its processes are gone). */
  release(): Promise<void>;
}

function write(file: string, value: string): void {
  fs.writeFileSync(file, value);
}

/** The cgroup hierarchy runs are made in, found once: v1's memory controller, v2 with memory delegated, or none. */
let hierarchy: { version: 1 | 2; base: string } | null | undefined;

function findHierarchy(): { version: 1 | 2; base: string } | null {
  if (hierarchy !== undefined) return hierarchy;
  hierarchy = null;
  try {
    if (fs.existsSync(path.join(V1_ROOT, "memory.limit_in_bytes"))) {
      const base = path.join(V1_ROOT, GROUP);
      fs.mkdirSync(base, { recursive: true });
      hierarchy = { version: 1, base };
    } else if (fs.readFileSync(path.join(V2_ROOT, "cgroup.controllers"), "utf8").split(/\s+/).includes("memory")) {
      const base = path.join(V2_ROOT, GROUP);
      fs.mkdirSync(base, { recursive: true });
      write(path.join(V2_ROOT, "cgroup.subtree_control"), "+memory");
      write(path.join(base, "cgroup.subtree_control"), "+memory");
      hierarchy = { version: 2, base };
    }
  } catch {
    hierarchy = null; // not root, or a read-only hierarchy: RLIMIT_AS it is
  }
  return hierarchy;
}

function readCount(file: string, key: string): number {
  try {
    const line = fs.readFileSync(file, "utf8").split("\n").find((l) => l.startsWith(key + " "));
    return line ? Number(line.split(" ")[1]) : 0;
  } catch {
    return 0;
  }
}

function pidsOf(dir: string): number[] {
  try {
    return fs.readFileSync(path.join(dir, "cgroup.procs"), "utf8").split("\n").filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

export function runMemory(runId: string, megabytes: number): RunMemory {
  const bytes = megabytes * 1024 * 1024;
  const h = findHierarchy();
  if (h) {
    const dir = path.join(h.base, runId);
    try {
      fs.mkdirSync(dir);
      if (h.version === 1) {
        write(path.join(dir, "memory.limit_in_bytes"), String(bytes));
        // With swap, the limit would page out rather than stop the run; where memsw exists, it counts too.
        const memsw = path.join(dir, "memory.memsw.limit_in_bytes");
        if (fs.existsSync(memsw)) write(memsw, String(bytes));
      } else {
        write(path.join(dir, "memory.max"), String(bytes));
        const swap = path.join(dir, "memory.swap.max");
        if (fs.existsSync(swap)) write(swap, "0");
      }
      const events = h.version === 1 ? path.join(dir, "memory.oom_control") : path.join(dir, "memory.events");
      return {
        limit: { cgroupProcs: path.join(dir, "cgroup.procs") },
        exceeded: () => readCount(events, "oom_kill") > 0,
        killAll: () => {
          for (const pid of pidsOf(dir)) {
            try {
              process.kill(pid, "SIGKILL");
            } catch {
              /* gone already */
            }
          }
        },
        release: async () => {
          // Killed processes leave the cgroup a moment after the signal.
          for (let i = 0; i < 50 && pidsOf(dir).length > 0; i++) await new Promise((r) => setTimeout(r, 20));
          await fs.promises.rmdir(dir).catch(() => undefined);
        },
      };
    } catch {
      try {
        fs.rmdirSync(dir);
      } catch {
        /* never made */
      }
    }
  }
  return { limit: { rlimitBytes: bytes }, exceeded: () => false, killAll: () => undefined, release: async () => undefined };
}
