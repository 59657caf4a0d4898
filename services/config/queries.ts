/**
 * The statements of the config service's largest reads, the asset list and the monitor count,
 * for the benchmark's bare baseline (bench/baseline.ts), which runs the very same SQL without the
 * framework. They live in repo.ts with the rest of the service's SQL.
 */
export { ASSET_LIST_SQL, assetListItem, MONITOR_COUNT_SQL, type AssetListRow } from "./repo";
