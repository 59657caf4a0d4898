/** What a site's readings cost on disk (footprint.ts; docs/architecture.md, "The historian"). */
import { MSG } from "./messages";
import { EXAMPLE } from "./openapi";
import type { Ctx, PipelinesActions } from "./pipelines.types";
import { storageFigures } from "./footprint";

export const footprintActions: PipelinesActions = {
  storage: {
    http: {
      routes: ["GET /_config/storage"],
      group: "pipelines",
      summary: "What each site's readings cost on disk",
      description:
        "Per site: its readings (raw and compressed), how many are compressed, the bytes everything kept of them takes " +
        "(raw rows, compressed chunks, the minute and hour rollups, ems's energy readings and rollups, their indexes), bytes per reading, the oldest and newest " +
        "reading (epoch ms) and the site's retention_period. saas-admin: every site; site-admin: its own.",
      fields: { site_id: { in: "query", required: false, description: "one site only", example: EXAMPLE.site_id } },
      answer: {
        schema: "$Storage",
        example: {
          sites: [
            {
              site_id: EXAMPLE.site_id,
              site_name: "Pune Works",
              readings: 31536000,
              compressed_readings: 31532400,
              bytes: 51380224,
              bytes_per_reading: 1.63,
              oldest: 1764547200000,
              newest: 1796083199000,
              retention_period: 400,
            },
          ],
        },
      },
      errors: [[400, MSG.invalidSiteId("<site_id>")], [403, MSG.unauthorizedOperation]],
    },
    params: { site_id: { type: "string", optional: true } },
    handler(ctx: Ctx<{ site_id?: string }>) {
      return storageFigures(this.use(ctx), ctx.params);
    },
  },
};
