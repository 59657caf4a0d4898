/**
 * What a request names (a function, plant or site, a watcher, a gateway, an alert), found and
 * checked against the caller's scope: one unknown and one outside the scope answer alike, so a
 * caller learns nothing of what it may not see.
 */
import { inScope } from "../../lib/access";
import type { ResolvedFunction } from "../config/contract";
import type { ResolvedPipeline } from "../pipelines/contract";
import { DomainError } from "../../lib/errors";
import { isId } from "../../lib/ids";
import { getAlert, type AlertRow } from "./alerts.repo";
import type { PlaceColumn } from "./kpi.repo";
import { MSG } from "./messages";
import type { AlertingPort } from "./port";
import { getWatcher, type WatcherRow } from "./watchers.repo";

export async function functionInScope(port: AlertingPort, function_id: string, message: string): Promise<ResolvedFunction> {
  const fn = isId(function_id) ? await port.config.function(function_id) : null;
  if (!fn || !inScope(port.scope, fn)) throw new DomainError(400, message);
  return fn;
}

/**
 * A function, plant or site in the caller's scope, in config's spelling of its id. `field`: the
 * field a plant's or site's refusal names (none: the alert list's and count's answers name none).
 */
export async function placeInScope(port: AlertingPort, column: PlaceColumn, id: string, field?: string): Promise<string> {
  if (column === "function_id") return (await functionInScope(port, id, MSG.functionDoesNotExist)).function_id;
  if (column === "plant_id") {
    const plant = await port.config.plant(id);
    if (!plant || !inScope(port.scope, plant)) throw new DomainError(400, MSG.plantDoesNotExist, field);
    return plant.plant_id;
  }
  const site = await port.config.site(id);
  if (!site || !inScope(port.scope, { site_id: site.site_id })) throw new DomainError(400, MSG.siteDoesNotExist, field);
  return site.site_id;
}

export async function watcherInScope(port: AlertingPort, watcher_id: string): Promise<WatcherRow> {
  const w = isId(watcher_id) ? await getWatcher(port.db, watcher_id) : null;
  if (!w || !inScope(port.scope, w)) throw new DomainError(400, MSG.invalidWatcherId);
  return w;
}

export async function gatewayInScope(port: AlertingPort, pipeline_id: string): Promise<ResolvedPipeline> {
  const gateway = await port.pipelines.resolve(pipeline_id);
  if (!gateway || !inScope(port.scope, gateway)) throw new DomainError(400, MSG.invalidInput("pipeline_id"));
  return gateway;
}

export const unknownAlert = (alert_id: string) => new DomainError(400, MSG.invalidAlertId(alert_id));

export async function alertInScope(port: AlertingPort, alert_id: string): Promise<AlertRow> {
  const row = isId(alert_id) ? await getAlert(port.db, alert_id) : null;
  if (!row || !inScope(port.scope, row)) throw unknownAlert(alert_id);
  return row;
}
