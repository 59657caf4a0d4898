/** The site operations: create, delete, update, fetch, list. */
import type { Context } from "moleculer";
import { PAGE_FIELDS } from "../../lib/paging";
import type { ConfigActions } from "./config.types";
import { MSG } from "./messages";
import { ID_FIELDS } from "./openapi";
import { id, list, name, optText, page, text } from "./params";
import * as sites from "./sites";

// latest_version is the service's own (the list shows it); a site read back and sent again carries it: ignored.
const edgeFirmware = {
  type: "object",
  strict: true,
  props: { current_version: optText, previous_version: optText, latest_version: optText },
} as const;
/** Days, up to a hundred years. */
const retention = { type: "number", integer: true, positive: true, max: 36500 } as const;

const SITE_FIELDS = {
  site_name: { description: "unique among sites, case-insensitively", example: "Pune Works" },
  location: { description: "where the site is", example: "Chakan MIDC, Pune" },
  timezone: { description: "IANA time zone name; trends and retention follow it", example: "Asia/Kolkata" },
  latitude: { description: "decimal degrees as text, -90..90; latitude or longitude has to be given", example: "18.7606" },
  longitude: { description: "decimal degrees as text, -180..180; latitude or longitude has to be given", example: "73.8636" },
  retention_period: { unit: "days", description: "how long the site's readings are kept", example: 180 },
  edge_firmware: {
    description: "the edge server's firmware: current_version and previous_version (latest_version is ignored)",
    example: { current_version: "2.4.1", previous_version: "2.3.0" },
  },
};

export const siteActions: ConfigActions = {
  "sites.create": {
    http: {
      op: 28,
      routes: ["POST /_config/sites"],
      group: "sites",
      summary: "Create a site",
      description: "Only a SaaS admin creates sites.",
      fields: {
        ...SITE_FIELDS,
        retention_period: { ...SITE_FIELDS.retention_period, description: "how long the site's readings are kept; 180 when not given" },
      },
      answer: { id: true },
      errors: [
        [400, MSG.siteExists("<site_name>")],
        [400, MSG.siteCreateError],
        [400, MSG.siteLatLong],
        [400, MSG.invalidInput("<field>")],
        [403, MSG.unauthorizedOperation],
      ],
    },
    params: {
      site_name: name,
      location: text,
      timezone: text,
      edge_firmware: edgeFirmware,
      latitude: optText,
      longitude: optText,
      retention_period: { ...retention, optional: true },
    },
    handler(ctx: Context<sites.SiteCreate>) {
      return sites.createSite(this.use(ctx), ctx.params);
    },
  },

  "sites.remove": {
    http: {
      op: 29,
      routes: ["DELETE /_config/sites/:site_id"],
      group: "sites",
      summary: "Delete a site",
      description: "Only a SaaS admin deletes sites; a site with plants is kept.",
      fields: { site_id: ID_FIELDS.site_id },
      answer: { text: MSG.siteDeleted },
      errors: [[400, MSG.invalidSiteId("<site_id>")], [400, MSG.siteHasPlants], [403, MSG.unauthorizedOperation]],
    },
    params: { site_id: id },
    handler(ctx: Context<{ site_id: string }>) {
      return sites.removeSite(this.use(ctx), ctx.params.site_id);
    },
  },

  "sites.update": {
    http: {
      op: 30,
      routes: ["PUT /_config/sites/:site_id"],
      group: "sites",
      summary: "Update a site",
      description:
        "location and retention_period are required; the other fields keep their value when left out. " +
        "A new edge_firmware.current_version without a previous_version moves the old current version to previous_version.",
      fields: { site_id: ID_FIELDS.site_id, ...SITE_FIELDS },
      answer: { text: MSG.siteUpdated },
      errors: [[400, MSG.invalidSite], [400, MSG.siteLatLong], [400, MSG.siteExists("<site_name>")], [400, MSG.invalidInput("<field>")], [403, MSG.unauthorizedOperation]],
    },
    params: {
      site_id: id,
      location: text,
      retention_period: retention,
      site_name: { ...name, optional: true },
      timezone: optText,
      edge_firmware: { ...edgeFirmware, optional: true },
      latitude: optText,
      longitude: optText,
    },
    handler(ctx: Context<sites.SiteUpdate>) {
      return sites.updateSite(this.use(ctx), ctx.params);
    },
  },

  "sites.get": {
    http: {
      op: 31,
      routes: ["GET /_config/sites/:site_id"],
      group: "sites",
      summary: "Fetch a site",
      fields: { site_id: ID_FIELDS.site_id },
      answer: { schema: "$Site" },
      errors: [[400, MSG.invalidSiteId("<site_id>")], [405, MSG.methodNotAllowed]],
    },
    params: { site_id: id },
    handler(ctx: Context<{ site_id: string }>) {
      return sites.getSite(this.use(ctx), ctx.params.site_id);
    },
  },

  "sites.list": {
    http: {
      op: 32,
      routes: ["GET /_config/sites/_list"],
      group: "sites",
      summary: "List the sites",
      description: "Every site for the SaaS roles, the caller's own site for everyone else; edge_firmware carries latest_version.",
      fields: PAGE_FIELDS,
      answer: { schema: "$Site[]" },
      errors: [[400, MSG.excessInputs], [400, MSG.invalidInput("<field>")]],
    },
    params: { ...page, $$messages: list },
    handler(ctx: Context<{ limit?: number; offset?: number }>) {
      return sites.listSites(this.use(ctx), ctx.params);
    },
  },
};
