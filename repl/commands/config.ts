/** The configuration hierarchy at a glance: sites, and the plants of one site or of all. */
import { callAs } from "../call";
import { requireId, table } from "../format";
import type { AdminCommand, ReplContext } from "../types";

interface Site {
  site_id: string;
  site_name: string;
  location: string;
  timezone: string;
  retention_period: number;
}

interface Plant {
  plant_id: string;
  plant_name: string;
  site_name: string;
  function_count: number;
  pipeline_count: number;
}

const listSites = (ctx: ReplContext) => callAs<Site[]>(ctx, "config.sites.list");

export const sites: AdminCommand = {
  command: "sites",
  description: "List the sites as a table.",
  async run(ctx) {
    const rows = await listSites(ctx);
    if (rows.length === 0) return "no sites";
    return table(
      ["site_id", "site_name", "location", "timezone", "retention_days"],
      rows.map((s) => [s.site_id, s.site_name, s.location, s.timezone, s.retention_period]),
    );
  },
};

export const plants: AdminCommand = {
  command: "plants [siteId]",
  description: "List the plants of a site, or of every site, as a table.",
  async run(ctx, args) {
    const siteIds = args.siteId === undefined ? (await listSites(ctx)).map((s) => s.site_id) : [requireId(args.siteId, "siteId")];
    const rows: Plant[] = [];
    for (const site_id of siteIds) rows.push(...(await callAs<Plant[]>(ctx, "config.plants.list", { site_id })));
    if (rows.length === 0) return "no plants";
    return table(
      ["plant_id", "plant_name", "site_name", "functions", "pipelines"],
      rows.map((p) => [p.plant_id, p.plant_name, p.site_name, p.function_count, p.pipeline_count]),
    );
  },
};
