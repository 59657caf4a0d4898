/**
 * Folders that a process of another, unprivileged, user must reach: the embedded PostgreSQL's
 * files (the `postgres` user) and the notebook folders (each run's own uid). A clone under a
 * private folder (/root, a 0700 temporary folder) is not reachable by them; as root, such a
 * folder is kept under /var/lib/<kind>/<hash of the wanted path> instead, and the wanted path is
 * a link to it.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";

/** Whether a user other than the owner can reach `dir`: every folder on the way is searchable by others. */
export function reachableByOthers(dir: string): boolean {
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    if ((fs.statSync(d).mode & 0o001) === 0) return false;
    if (d === path.dirname(d)) return true;
  }
}

/**
 * `wanted` itself when others reach its parent (or this process is not root); else the real
 * folder under /var/lib/<kind>, with `wanted` made a link to it. What an earlier start kept in
 * `wanted` as a folder is moved there first.
 */
export function reachableFolder(wanted: string, kind: string, log: (msg: string) => void): string {
  const isRoot = typeof process.getuid === "function" && process.getuid() === 0;
  fs.mkdirSync(path.dirname(wanted), { recursive: true });
  if (!isRoot || reachableByOthers(path.dirname(wanted))) return wanted;
  const hash = createHash("sha256").update(path.resolve(wanted)).digest("hex").slice(0, 16);
  const real = path.join("/var/lib", kind, hash);
  fs.mkdirSync(real, { recursive: true, mode: 0o755 });
  fs.chmodSync(path.dirname(real), 0o755);
  const link = fs.lstatSync(wanted, { throwIfNoEntry: false });
  if (link?.isDirectory()) {
    for (const entry of fs.readdirSync(wanted)) fs.cpSync(path.join(wanted, entry), path.join(real, entry), { recursive: true, preserveTimestamps: true });
    fs.rmSync(wanted, { recursive: true });
  } else if (link && (!link.isSymbolicLink() || fs.readlinkSync(wanted) !== real)) {
    throw new Error(`${wanted} exists but other users cannot reach it; move it or choose another folder`);
  }
  if (!fs.lstatSync(wanted, { throwIfNoEntry: false })) fs.symlinkSync(real, wanted);
  log(`${path.dirname(wanted)} is not reachable by other users: ${kind} files are in ${real} (linked from ${wanted})`);
  return real;
}
