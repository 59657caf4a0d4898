/**
 * The ems service's contract: what the storage route (pipelines' `GET /_config/storage`) asks of
 * it, the bytes ems keeps per monitor. Internal: not reachable over HTTP.
 */
import { serviceClient } from "../../lib/contract";

/** The bytes of ems's tables of readings and rollups (indexes and TOAST included) that are a monitor's. */
export interface MonitorBytes {
  monitor_id: string;
  bytes: number;
}

export interface EmsContract {
  "storage.monitors": { params: Record<string, never>; reply: { monitors: MonitorBytes[] } };
}

export const emsClient = serviceClient<EmsContract>("ems");
