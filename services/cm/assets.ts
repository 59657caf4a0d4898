/**
 * The condition of assets: the status their monitors' latest values give, the faults their
 * latest spectra show, and the event open while an asset is out of normal.
 */
import { DomainError } from "../../lib/errors";
import { newId } from "../../lib/ids";
import type { Page } from "../../lib/paging";
import type { AssetEvent } from "../config/contract";
import * as events from "./events.repo";
import * as latestValues from "./latest-values.repo";
import { MSG } from "./messages";
import type { CmPort } from "./port";
import { bearingTolerance } from "./settings";
import * as spectra from "./spectra.repo";
import { severityOf } from "./status";
import { assetView, diagnoseMonitor, evaluateAsset, eventLabel, severityView } from "./views";

/**
 * Opens an asset's event when it leaves normal, raises its severity while it worsens and
 * closes it when the asset is back to normal. Under a per-asset lock (events.underAssetLock).
 */
export async function evaluateAssets(port: CmPort, assetIds: Iterable<string>): Promise<void> {
  for (const assetId of assetIds) {
    await events.underAssetLock(port.db, assetId, async (tx) => {
      const latest = await latestValues.latestOfAsset(tx, assetId);
      const monitors = await port.config.resolveMonitors(latest.map((v) => v.monitor_id));
      const evaluation = evaluateAsset([...monitors.values()], latest);
      if (evaluation.status === "normal" || !evaluation.cause) {
        await events.closeEvent(tx, assetId, Date.now());
        return;
      }
      await events.openOrEscalate(tx, {
        event_id: newId(),
        asset_id: assetId,
        event_start: Math.floor(evaluation.cause.ts / 1000),
        event_severity: severityOf(evaluation.status),
        event_status: MSG.eventStatus,
        event_label: eventLabel(evaluation.cause),
        event_assignee: "",
      });
    });
  }
}

/** Op 73's object: status from the latest values, faults from the latest spectra, the open event, the worst zone. */
async function assetObject(port: CmPort, asset: { asset_id: string; asset_name: string }) {
  const monitors = await port.config.resolveMonitors(await port.config.monitorIds({ asset_id: asset.asset_id }));
  const ids = [...monitors.keys()];
  const [latest, latestSpectra, event] = await Promise.all([
    latestValues.latestOfMonitors(port.db, ids),
    spectra.latestSpectra(port.db, ids),
    events.openEventOf(port.db, asset.asset_id),
  ]);
  const { status } = evaluateAsset([...monitors.values()], latest);
  const faults = new Set<string>();
  for (const m of monitors.values()) {
    const d = diagnoseMonitor(m, latestSpectra.filter((s) => s.monitor_id === m.monitor_id), bearingTolerance());
    for (const f of d?.faults ?? []) faults.add(f.fault);
  }
  // The asset's attributes come with each of its monitors (op 74's list items have none).
  const attributes = monitors.values().next().value?.asset_attributes ?? {};
  return assetView(asset, status, event, [...faults], severityView(attributes, [...monitors.values()], latest).zone);
}

/** Op 73. */
export async function getAsset(port: CmPort, asset_id: string) {
  const asset = await port.config.visibleAsset(asset_id);
  if (!asset) throw new DomainError(400, MSG.invalidAssetId);
  return assetObject(port, asset);
}

/** The ISO 20816-3 zone of each velocity tag of the asset, and the worst (docs/api-tour.md, "Severity"). */
export async function assetSeverity(port: CmPort, asset_id: string) {
  const asset = await port.config.visibleAsset(asset_id);
  if (!asset) throw new DomainError(400, MSG.invalidAssetId);
  const monitors = await port.config.resolveMonitors(await port.config.monitorIds({ asset_id: asset.asset_id }));
  const latest = await latestValues.latestOfMonitors(port.db, [...monitors.keys()]);
  return severityView({ ...asset.attributes }, [...monitors.values()], latest);
}

/** Op 74: each asset of the function, as op 73 answers it. */
export async function listAssets(port: CmPort, params: { function_id: string } & Page) {
  const fn = await port.config.visibleFunction(params.function_id);
  if (!fn) throw new DomainError(400, MSG.invalidFunctionId);
  const assets = port.page(await port.config.assets(fn.function_id), params);
  return Promise.all(assets.map((a) => assetObject(port, a)));
}

/** An asset deleted: its open event is closed. */
export async function assetDeleted(port: CmPort, event: AssetEvent): Promise<void> {
  await events.closeEvent(port.db, event.asset_id, Date.now());
}
