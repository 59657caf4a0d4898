/**
 * What ems's readings cost on disk, per monitor: the storage route (`GET /_config/storage`,
 * pipelines' footprint.ts) adds it to each monitor's site (docs/architecture.md, "The historian").
 */
import type { MonitorBytes } from "./contract";
import type { EmsPort } from "./port";
import { tableRows, type TableRows } from "./storage.repo";

/**
 * Each table's bytes shared out among the monitors by their rows in it; a table left with no rows
 * still takes its pages until vacuumed (the raw rows after a compression), shared by the rows the
 * monitors hold in all. The figures add up to the tables' whole size (when any monitor has a row).
 */
export function shareOut(tables: TableRows[]): MonitorBytes[] {
  const bytes = new Map<string, number>();
  const add = (monitor_id: string, b: number) => bytes.set(monitor_id, (bytes.get(monitor_id) ?? 0) + b);
  const held = new Map<string, number>();
  let unowned = 0;
  for (const t of tables) {
    const total = t.monitors.reduce((n, m) => n + m.rows, 0);
    if (total === 0) unowned += t.bytes;
    for (const m of t.monitors) {
      if (total > 0) add(m.monitor_id, (t.bytes * m.rows) / total);
      held.set(m.monitor_id, (held.get(m.monitor_id) ?? 0) + m.rows);
    }
  }
  const rows = [...held.values()].reduce((n, r) => n + r, 0);
  if (rows > 0) for (const [monitor_id, r] of held) add(monitor_id, (unowned * r) / rows);
  return [...bytes].map(([monitor_id, b]) => ({ monitor_id, bytes: Math.round(b) })).sort((a, b) => a.monitor_id.localeCompare(b.monitor_id));
}

export async function monitorBytes(port: EmsPort): Promise<{ monitors: MonitorBytes[] }> {
  return { monitors: shareOut(await tableRows(port.db)) };
}
