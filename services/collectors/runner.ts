/**
 * The pipelines this replica collects (docs/collectors.md#replicas). Every replica lists the
 * started collected pipelines every CLAIM_EVERY_MS and takes the lease (lib/lease.ts) of those no
 * replica holds: each pipeline is collected by exactly one replica at a time. The replicas share
 * them: each keeps at most its share (the pipelines over the replicas connected) and gives back
 * the rest, which another takes on its next round. When a replica dies its database connection
 * closes, PostgreSQL frees its leases, the others' shares grow and they take its pipelines; a page
 * the dead one had read but not stored is read again from the stored position.
 */
import { Leases } from "../../lib/lease";
import type { CollectedPipeline } from "../pipelines/contract";
import type { RunningCollector } from "./collector";
import { COLLECTED_SUBTYPES, collectorOf, UNAVAILABLE_SUBTYPES } from "./kinds";
import { MSG } from "./messages";
import type { CollectorsPort } from "./port";

/** How often the pipelines are listed and free leases tried: a dead replica's pipelines move within this. */
export const CLAIM_EVERY_MS = 2000;

interface Held {
  version: string;
  collector: RunningCollector;
}

export interface Collectors {
  /** The pipelines this replica collects now. */
  readonly held: string[];
  close(): Promise<void>;
}

export async function startCollectors(port: CollectorsPort, databaseUrl: string): Promise<Collectors> {
  const running = new Map<string, Held>();
  const leases = new Leases({
    databaseUrl,
    scope: "collector",
    // The leases went with the connection: another replica may collect them already, so stop at once.
    onLost: (keys) => void Promise.all(keys.map((k) => letGo(k, false))),
  });
  for (const subtype of UNAVAILABLE_SUBTYPES) port.log.info(MSG.kindUnavailable(subtype));

  async function letGo(pipeline_id: string, release: boolean): Promise<void> {
    const held = running.get(pipeline_id);
    running.delete(pipeline_id);
    await held?.collector.stop();
    if (release) await leases.release(pipeline_id);
    if (held) port.log.info(MSG.letGo(pipeline_id));
  }

  function start(p: CollectedPipeline): void {
    const begin = collectorOf(p.subtype);
    if (!begin) return;
    port.log.info(MSG.collecting(p.pipeline_id, p.subtype));
    running.set(p.pipeline_id, { version: p.version, collector: begin(port, p) });
  }

  /** One round: what is no longer to collect let go, free leases taken, stops completed, new collections started. */
  async function round(): Promise<void> {
    const listed = new Map((await port.pipelines(COLLECTED_SUBTYPES)).map((p) => [p.pipeline_id, p]));
    for (const [id, held] of [...running]) {
      const p = listed.get(id);
      // Changed settings or a moved position: started again below with what the list says now.
      if (!p || p.action === "stop" || p.version !== held.version || held.collector.ended) await letGo(id, !p);
    }
    for (const id of leases.keys) if (!listed.has(id)) await leases.release(id);
    const collecting = [...listed.values()].filter((p) => p.action === "start");
    const share = Math.ceil(collecting.length / (await leases.holders()));
    // Past its share (another replica joined): the last started go back, to be taken by the others.
    for (const id of [...running.keys()].slice(share)) await letGo(id, true);
    const held = await leases.take([...listed.keys()]);
    for (const p of listed.values()) {
      if (!held.has(p.pipeline_id) || running.has(p.pipeline_id)) continue;
      if (p.action === "stop") {
        // A pending stop is completed by whichever replica holds it, whatever its share.
        await port.stopped(p.pipeline_id);
        await leases.release(p.pipeline_id);
      } else if (running.size < share) {
        start(p);
      } else {
        await leases.release(p.pipeline_id);
      }
    }
  }

  let closed = false;
  let current: Promise<void> | null = null;
  const tick = () => {
    if (closed || current) return;
    current = round()
      .catch((err: unknown) => port.log.warn(MSG.leasesNotTaken(String(err))))
      .finally(() => {
        current = null;
      });
  };
  const timer = setInterval(tick, CLAIM_EVERY_MS);
  tick();

  return {
    get held() {
      return [...running.keys()];
    },
    async close() {
      closed = true;
      clearInterval(timer);
      await current;
      await Promise.all([...running.keys()].map((id) => letGo(id, false)));
      // Given back at once: another replica takes them on its next round.
      await leases.close();
    },
  };
}
