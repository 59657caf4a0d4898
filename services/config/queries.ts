/**
 * The statements of the config service's largest reads, the asset list and the monitor count,
 * and the site's row, for the benchmark's bare baseline (bench/baseline.ts), which runs the very same SQL without the
 * framework. They live in assets.repo.ts and monitors.repo.ts with the rest of their resource's SQL.
 */
export { ASSET_LIST_SQL, assetListItem, type AssetListRow } from "./assets.repo";
export { MONITOR_COUNT_SQL } from "./monitors.repo";
export type { SiteRow } from "./sites.repo";
