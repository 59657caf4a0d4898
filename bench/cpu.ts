/** CPU time of processes from Linux /proc, for benchmarks that say where the time went. */
import fs from "node:fs";
import type { Client } from "pg";

const TICK_MS = 1000 / 100; // USER_HZ: 100 on Linux whatever the kernel's HZ

/** CPU ms (user + system) each process has used so far, from /proc/<pid>/stat; a process gone counts 0. */
export function cpuMs(pids: number[]): Map<number, number> {
  const out = new Map<number, number>();
  for (const pid of pids) {
    try {
      // Fields after the command name (which may hold spaces): state is the 3rd, utime the 14th, stime the 15th.
      const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
      out.set(pid, (Number(fields[11]) + Number(fields[12])) * TICK_MS);
    } catch {
      out.set(pid, 0);
    }
  }
  return out;
}

/** CPU ms spent from `start` to `end` by the processes of `end` (one absent from `start` counts from 0). */
export function cpuBetween(start: Map<number, number>, end: Map<number, number>): number {
  let ms = 0;
  for (const [pid, used] of end) ms += Math.max(0, used - (start.get(pid) ?? 0));
  return ms;
}

/** The machine's busy and total CPU ms so far, over all cores (/proc/stat; idle and iowait are not busy). */
export function machineMs(): { busy: number; total: number } {
  const fields = fs.readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  const total = fields.reduce((a, b) => a + b, 0) * TICK_MS;
  const idle = (fields[3]! + fields[4]!) * TICK_MS;
  return { busy: total - idle, total };
}

/** The database's backends serving the cluster (not this client). */
export async function backendPids(pg: Client): Promise<number[]> {
  return (await pg.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`)).rows.map(
    (r) => r.pid,
  );
}

/** The nats-server processes listening on `port` (by their command line), for its CPU time. */
export function natsServerPids(port: number): number[] {
  const pids: number[] = [];
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = fs.readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
      if (!argv[0]?.endsWith("nats-server")) continue;
      const at = argv.findIndex((a) => a === "-p" || a === "--port");
      const listens = at >= 0 ? Number(argv[at + 1]) : 4222;
      if (listens === port) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}
