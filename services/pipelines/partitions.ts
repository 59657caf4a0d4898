/**
 * What this process knows of the readings' day partitions. Creating one takes a lock, so the
 * hot path asks here first and reaches the database only for a day it has not seen.
 */
import type { DataSource } from "typeorm";
import * as readingsRepo from "./readings.repo";

export class Partitions {
  private known = new Set<string>();

  async refresh(db: DataSource): Promise<void> {
    this.known = new Set(await readingsRepo.partitionDays(db));
  }

  has(day: string): boolean {
    return this.known.has(day);
  }

  all(): string[] {
    return [...this.known].sort();
  }

  /** Creates the missing partitions (replicas serialize in readingsRepo.createPartitions and skip what exists). */
  async ensure(db: DataSource, days: string[]): Promise<void> {
    const missing = days.filter((d) => !this.known.has(d));
    if (missing.length === 0) return;
    await readingsRepo.createPartitions(db, missing);
    for (const day of missing) this.known.add(day);
  }

  forget(day: string): void {
    this.known.delete(day);
  }
}
