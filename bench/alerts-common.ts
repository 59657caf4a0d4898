/** What the `npm run bench:alerts` cases share: config made through the API, and percentiles. */
import type { TestNode } from "../test/helpers/node";

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function create(t: Pick<TestNode, "http">, path: string, body: Record<string, unknown>): Promise<{ id: string; ingest_key?: string }> {
  const res = await t.http<{ id: string; ingest_key?: string }>("POST", path, { body });
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** A site (Asia/Kolkata), a plant of it and a function of that: where a case's watchers and alerts live. */
export async function createPlace(t: Pick<TestNode, "http">, label: string): Promise<{ site: string; plant: string; fn: string }> {
  const site = await create(t, "/_config/sites", {
    site_name: `${label} site`,
    location: "Pune",
    timezone: "Asia/Kolkata",
    latitude: "18.5",
    edge_firmware: { current_version: "1.0.0", previous_version: "" },
  });
  const plant = await create(t, "/_config/plants", { plant_name: `${label} plant`, site_id: site.id });
  const fn = await create(t, "/_config/functions", { function_name: `${label} function`, plant_id: plant.id });
  return { site: site.id, plant: plant.id, fn: fn.id };
}

/** The q-quantile (nearest rank) of the durations. */
export function pct(ms: number[], q: number): number {
  const sorted = [...ms].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
}
