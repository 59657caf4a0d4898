/**
 * A gateway's own configuration, by its key: settings, tags, registration and the monitors it
 * feeds with their tags (names, units) and asset attributes, so that it knows what to read and send.
 */
import { unauthorized } from "../../lib/errors";
import { openSettings } from "../../lib/secrets";
import { authenticate } from "./ingest";
import { MSG } from "./messages";
import { findPipeline } from "./pipelines.repo";
import type { SystemPort } from "./port";
import { registeredMonitors } from "./registrations.repo";
import { identityView } from "./rules";

export async function gatewayConfig(port: SystemPort, params: { pipeline_id: string }) {
  const pipeline = await authenticate(port, params.pipeline_id);
  const row = await findPipeline(port.db, pipeline.pipeline_id);
  if (!row) throw unauthorized(MSG.invalidIngestKey);
  const monitors = await port.config.monitors(await registeredMonitors(port.db, row.pipeline_id));
  return {
    ...identityView(row),
    status: row.status,
    // The gateway connects to its source with them: its own key opens its secrets.
    settings: openSettings(port.secretsKey, row.settings),
    tags: row.tags,
    registration: row.registration,
    monitors: [...monitors.values()].map((m) => ({
      monitor_id: m.monitor_id,
      monitor_name: m.monitor_name,
      monitor_type: m.monitor_type,
      asset_attributes: m.asset_attributes ?? {},
      tags: m.tags.map((t) => ({ tag_id: t.tag_id, tag_name: t.tag_name, tag_unit: t.tag_unit })),
    })),
  };
}
