/**
 * A message's partition: a function of its key alone, so every publisher (each pipelines
 * replica, each release) sends one key to one partition. FNV-1a is stable across processes and
 * versions, unlike anything seeded, and spreads uuids evenly.
 */
export const DEFAULT_PARTITIONS = 16;

export function partitionOf(key: string | null | undefined, partitions: number): number {
  if (!key || partitions <= 1) return 0;
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % partitions;
}
