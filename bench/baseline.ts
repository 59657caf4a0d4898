/**
 * The benchmark's baseline (case c): the configuration reads of bench/api.ts on a bare
 * `node:http` server with the same SQL through `pg` and no framework: `GET /_config/sites/_list`,
 * `GET /_config/assets/_list?function_id=…` and `GET /_config/monitors/_count`, as the config
 * service answers them to a SaaS admin. The Basic-auth header is parsed and its username and
 * password compared as text: no password hash, no user lookup, no cache. Run by bench/api.ts in
 * a process of its own, as the services are.
 *
 * Env: DATABASE_URL (the database the services use; the tables are in schema config), PORT,
 * BASIC_USER, BASIC_PASSWORD.
 */
import http from "node:http";
import { Pool } from "pg";
// The very statements of the config service (framework-free module), so the baseline cannot drift from them.
import { ASSET_LIST_SQL, assetListItem, MONITOR_COUNT_SQL, type AssetListRow, type SiteRow } from "../services/config/queries";

const env = process.env;
const user = env.BASIC_USER ?? "admin@localhost";
const password = env.BASIC_PASSWORD ?? "";
const latest = env.LATEST_EDGE_FIRMWARE ?? "1.0.0";
// The same pool size and search_path as the services' DataSource (mixins/db.mixin.ts).
const pool = new Pool({ connectionString: env.DATABASE_URL, max: 10, options: "-c search_path=config" });

// The same statement the config service runs for a caller who sees every site.
const SQL = `SELECT * FROM sites WHERE ($1::uuid IS NULL OR site_id = $1::uuid) ORDER BY created_at, site_name`;

function authorized(header: string | undefined): boolean {
  const m = header ? /^Basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(header) : null;
  if (!m || !m[1]) return false;
  const decoded = Buffer.from(m[1], "base64").toString("utf8");
  const sep = decoded.indexOf(":");
  return sep > 0 && decoded.slice(0, sep).toLowerCase() === user && decoded.slice(sep + 1) === password;
}

function send(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "Content-Type": "application/json; charset=utf-8", "Content-Length": Buffer.byteLength(text) });
  res.end(text);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const NOTHING = "00000000-0000-0000-0000-000000000000";

async function sites(res: http.ServerResponse): Promise<void> {
  const { rows } = await pool.query<SiteRow>(SQL, [null]);
  res.setHeader("X-Total-Count", String(rows.length));
  send(
    res,
    200,
    rows.map((r) => ({
      site_id: r.site_id,
      site_name: r.site_name,
      location: r.location,
      latitude: r.latitude ?? "",
      longitude: r.longitude ?? "",
      timezone: r.timezone,
      retention_period: Number(r.retention_period),
      edge_firmware: {
        current_version: r.edge_current_version ?? "",
        previous_version: r.edge_previous_version ?? "",
        latest_version: latest,
      },
    })),
  );
}

/** Params as the service builds them for a caller who sees everything: scope, function, category, criticality. */
async function assets(res: http.ServerResponse, functionId: string | null): Promise<void> {
  const fn = functionId === null ? null : UUID.test(functionId) ? functionId : NOTHING;
  const { rows } = await pool.query<AssetListRow>(ASSET_LIST_SQL, [null, null, fn, null, null]);
  res.setHeader("X-Total-Count", String(rows.length));
  send(res, 200, rows.map(assetListItem));
}

async function monitorCount(res: http.ServerResponse): Promise<void> {
  const { rows } = await pool.query<{ n: number }>(MONITOR_COUNT_SQL, [null, null, null, null, null, null, null, null]);
  send(res, 200, rows[0]!.n);
}

const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? "/", "http://baseline");
  const path = url.pathname.replace(/\/$/, "");
  const route =
    req.method !== "GET"
      ? undefined
      : path === "/_config/sites/_list"
        ? () => sites(res)
        : path === "/_config/assets/_list"
          ? () => assets(res, url.searchParams.get("function_id"))
          : path === "/_config/monitors/_count"
            ? () => monitorCount(res)
            : undefined;
  if (!route) {
    send(res, 404, { error: { status: 404, message: "Not found" } });
    return;
  }
  if (!authorized(req.headers.authorization)) {
    send(res, 401, { error: { status: 401, message: "Invalid credentials" } });
    return;
  }
  route().catch(() => send(res, 500, { error: { status: 500, message: "Internal error" } }));
});

server.listen(Number(env.PORT ?? 3999), "127.0.0.1");

const stop = () => {
  server.close(() => void pool.end().then(() => process.exit(0)));
  server.closeAllConnections();
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
