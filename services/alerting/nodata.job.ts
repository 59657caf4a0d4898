/**
 * The no_data job (nodata.ts): every NO_DATA_TICK_MS, the gateways of the series now due are asked
 * whether they run (pipelines' contract, cached there; outside any transaction), then one
 * transaction claims those due series (FOR UPDATE SKIP LOCKED: a replica's claim is invisible to
 * the others), marks the silent ones and defers the rest, and opens each silent trigger's no_data
 * alert through the evaluation's opening path (history `opened`, notice staged on the alerts
 * stream, follow-ups), all committed together. A crash before the commit leaves the series due;
 * after it, the series is silent and opens nothing again until it is heard.
 */
import { countDomain } from "../../lib/metrics";
import type { AlertingThis } from "./alerting.types";
import { STREAMS } from "./contract";
import { openNoDataAlerts, type NoticeSink, type Silence } from "./evaluation";
import { resolveGateway } from "./lookups";
import { decideSilence } from "./nodata";
import * as repo from "./nodata.repo";
import type { WatchedSeries } from "./nodata.repo";
import { triggerRows } from "./triggers.repo";

/** How often silent series are looked for: a no_data alert opens at most this late. */
export const NO_DATA_TICK_MS = 1000;
/** The most series one run claims; the rest wait for the next tick. */
const NO_DATA_BATCH = 200;

/** Whether a gateway runs now: null when pipelines cannot say (not deployed, unreachable, unknown id). */
async function running(self: AlertingThis, gateway_id: string): Promise<boolean | null> {
  const gateway = await resolveGateway(self.broker, self.broker, gateway_id).catch(() => null);
  return gateway ? gateway.status === "running" : null;
}

/** One run: answers how many no_data alerts opened. */
export async function openSilentAlerts(self: AlertingThis, now = Date.now()): Promise<number> {
  const gateways = await repo.dueSilentGateways(self.db, now);
  if (gateways.length === 0) return 0;
  const status = new Map<string, boolean | null>();
  for (const g of gateways) status.set(g, await running(self, g));

  const notices: NoticeSink = (tx, alert) => self.streams.stage(tx, STREAMS.alerts, alert.alert_id, alert, alert.watcher_id);
  const opened = await self.tx().transaction(async (tx) => {
    const claimed = await repo.claimSilentSeries(tx, now, gateways, NO_DATA_BATCH);
    const settled: { s: WatchedSeries; due_at: number | null }[] = [];
    const silences = new Map<string, { start: number; series: WatchedSeries[] }>();
    for (const s of claimed) {
      const d = decideSilence(s, status.get(s.gateway_id) ?? null, now);
      if (d.kind === "defer") {
        settled.push({ s, due_at: d.due_at });
        continue;
      }
      settled.push({ s, due_at: null });
      const key = `${s.watcher_id}\u0000${s.trigger_id}`;
      const found = silences.get(key);
      if (found) {
        found.start = Math.min(found.start, d.start);
        found.series.push(s);
      } else silences.set(key, { start: d.start, series: [s] });
    }
    await repo.settleSeries(tx, settled);
    if (silences.size === 0) return [];
    const keys = [...silences.values()].map((x) => x.series[0]);
    const rows = new Map((await triggerRows(tx, keys)).map((t) => [`${t.watcher_id}\u0000${t.trigger_id}`, t]));
    const list: Silence[] = [];
    // In key order: two replicas' openings on one trigger queue on its unique index, never cross.
    for (const [key, x] of [...silences.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      const t = rows.get(key);
      if (t) list.push({ t, start: x.start, series: x.series });
    }
    return openNoDataAlerts(tx, list, self.describer(), notices);
  });
  for (const a of opened) countDomain(self.broker, "alerts.opened", { severity: a.severity });
  // Committed: publish the notices now rather than at the outbox's next tick.
  if (opened.length) self.streams.flush();
  return opened.length;
}
