/**
 * Every HTTP operation of the service: the spec's operation number, method, path, the action
 * that serves it and the module whose grant it needs. The gateway's aliases, its 404/405
 * answers and the docs are all made from this one table.
 */
import type { ModuleName } from "../../lib/access";

export type Method = "GET" | "POST" | "PUT" | "DELETE";

/** How a caller without the module's grant is refused (spec: Errors, common to most operations). */
export type DeniedMessage = "module-by-type" | "configuration" | "users";

export interface Operation {
  /** The spec's operation number; ingestion routes (contract) have none. */
  op?: number;
  method: Method;
  path: string;
  action: string;
  /** "basic": HTTP Basic user; "none": no Authorization (password reset, SQL connect); "ingest": a pipeline's bearer key. */
  auth: "basic" | "none" | "ingest";
  module?: ModuleName;
  denied?: DeniedMessage;
}

const cfg = { auth: "basic", module: "Configuration", denied: "configuration" } as const;
const users = { auth: "basic", module: "Configuration", denied: "users" } as const;
const alerting = { auth: "basic", module: "Alerting", denied: "module-by-type" } as const;
const notebooks = { auth: "basic", module: "Notebooks", denied: "module-by-type" } as const;
const cm = { auth: "basic", module: "Condition Monitoring", denied: "module-by-type" } as const;
const ems = { auth: "basic", module: "Energy Monitoring", denied: "module-by-type" } as const;
const open = { auth: "none" } as const;
const ingest = { auth: "ingest" } as const;

export const OPERATIONS: Operation[] = [
  // Watchers and alerts
  { op: 1, method: "POST", path: "/_alerting/watchers", action: "alerting.watchers.create", ...alerting },
  { op: 2, method: "DELETE", path: "/_alerting/watchers/:watcher_id", action: "alerting.watchers.remove", ...alerting },
  { op: 3, method: "PUT", path: "/_alerting/watchers/:watcher_id", action: "alerting.watchers.update", ...alerting },
  { op: 4, method: "GET", path: "/_alerting/watchers/:watcher_id", action: "alerting.watchers.get", ...alerting },
  { op: 5, method: "GET", path: "/_alerting/watchers/_list", action: "alerting.watchers.list", ...alerting },
  { op: 6, method: "GET", path: "/_alerting/watchers/_count", action: "alerting.watchers.count", ...alerting },
  { op: 7, method: "GET", path: "/_alerting/alerts/_count", action: "alerting.alerts.count", ...alerting },
  { op: 8, method: "GET", path: "/_alerting/alerts/_list", action: "alerting.alerts.list", ...alerting },
  { op: 9, method: "GET", path: "/_alerting/alerts/_trend", action: "alerting.alerts.trend", ...alerting },
  { op: 10, method: "PUT", path: "/_alerting/alerts/:alert_id", action: "alerting.alerts.note", ...alerting },
  { op: 10, method: "PUT", path: "/_alerting/alert/:alert_id", action: "alerting.alerts.note", ...alerting },

  // Assets
  { op: 11, method: "POST", path: "/_config/assets", action: "config.assets.create", ...cfg },
  { op: 12, method: "DELETE", path: "/_config/assets/:asset_id", action: "config.assets.remove", ...cfg },
  { op: 13, method: "PUT", path: "/_config/assets/:asset_id", action: "config.assets.update", ...cfg },
  { op: 14, method: "GET", path: "/_config/assets/:asset_id", action: "config.assets.get", ...cfg },
  { op: 15, method: "GET", path: "/_config/assets/_list", action: "config.assets.list", ...cfg },
  { op: 16, method: "GET", path: "/_config/assets/_count", action: "config.assets.count", ...cfg },

  // Monitors
  { op: 17, method: "POST", path: "/_config/monitors", action: "config.monitors.create", ...cfg },
  { op: 18, method: "DELETE", path: "/_config/monitors/:monitor_id", action: "config.monitors.remove", ...cfg },
  { op: 19, method: "PUT", path: "/_config/monitors/:monitor_id", action: "config.monitors.update", ...cfg },
  { op: 20, method: "GET", path: "/_config/monitors/:monitor_id", action: "config.monitors.get", ...cfg },
  { op: 21, method: "GET", path: "/_config/monitors/_list", action: "config.monitors.list", ...cfg },
  { op: 22, method: "GET", path: "/_config/monitors/_count", action: "config.monitors.count", ...cfg },

  // Functions
  { op: 23, method: "POST", path: "/_config/functions", action: "config.functions.create", ...cfg },
  { op: 24, method: "DELETE", path: "/_config/functions/:function_id", action: "config.functions.remove", ...cfg },
  { op: 25, method: "PUT", path: "/_config/functions/:function_id", action: "config.functions.update", ...cfg },
  { op: 26, method: "GET", path: "/_config/functions/:function_id", action: "config.functions.get", ...cfg },
  { op: 27, method: "GET", path: "/_config/functions/_list", action: "config.functions.list", ...cfg },

  // Sites
  { op: 28, method: "POST", path: "/_config/sites", action: "config.sites.create", ...cfg },
  { op: 29, method: "DELETE", path: "/_config/sites/:site_id", action: "config.sites.remove", ...cfg },
  { op: 30, method: "PUT", path: "/_config/sites/:site_id", action: "config.sites.update", ...cfg },
  { op: 31, method: "GET", path: "/_config/sites/:site_id", action: "config.sites.get", ...cfg },
  { op: 32, method: "GET", path: "/_config/sites/_list", action: "config.sites.list", ...cfg },

  // Plants
  { op: 33, method: "POST", path: "/_config/plants", action: "config.plants.create", ...cfg },
  { op: 34, method: "DELETE", path: "/_config/plants/:plant_id", action: "config.plants.remove", ...cfg },
  { op: 35, method: "PUT", path: "/_config/plants/:plant_id", action: "config.plants.update", ...cfg },
  { op: 36, method: "GET", path: "/_config/plants/:plant_id", action: "config.plants.get", ...cfg },
  { op: 37, method: "GET", path: "/_config/plants/_list", action: "config.plants.list", ...cfg },

  // Password reset: no Authorization header (ops 43-45). Static paths before /users/:username.
  { op: 43, method: "POST", path: "/_config/users/password/generate_otp", action: "auth.password.generateOtp", ...open },
  { op: 44, method: "POST", path: "/_config/users/password/validate_otp", action: "auth.password.validateOtp", ...open },
  { op: 44, method: "POST", path: "/_config/users/validate_otp", action: "auth.password.validateOtp", ...open },
  { op: 45, method: "PUT", path: "/_config/users/password", action: "auth.password.update", ...open },

  // Users
  { op: 38, method: "POST", path: "/_config/users", action: "auth.users.create", ...users },
  { op: 39, method: "DELETE", path: "/_config/users/:username", action: "auth.users.remove", ...users },
  // `:user`, not `:username`: the body's username is required too (spec op 40), and a path
  // parameter of the same name would overwrite it before it could be checked.
  { op: 40, method: "PUT", path: "/_config/users/:user", action: "auth.users.update", ...users },
  { op: 41, method: "GET", path: "/_config/users/:username", action: "auth.users.get", ...users },
  { op: 42, method: "GET", path: "/_config/users/_list", action: "auth.users.list", ...users },

  // Third-party pipelines
  { op: 46, method: "POST", path: "/_config/pipelines/thirdparty", action: "pipelines.thirdparty.create", ...cfg },
  { op: 47, method: "DELETE", path: "/_config/pipelines/thirdparty/:pipeline_id", action: "pipelines.thirdparty.remove", ...cfg },
  { op: 48, method: "PUT", path: "/_config/pipelines/thirdparty/:pipeline_id", action: "pipelines.thirdparty.update", ...cfg },
  { op: 49, method: "GET", path: "/_config/pipelines/thirdparty/:pipeline_id", action: "pipelines.thirdparty.get", ...cfg },

  // Edge-server pipelines (the fetch is the contract's addition)
  { op: 50, method: "POST", path: "/_config/pipelines/edge-server", action: "pipelines.edge.create", ...cfg },
  { op: 51, method: "DELETE", path: "/_config/pipelines/edge-server/:pipeline_id", action: "pipelines.edge.remove", ...cfg },
  { op: 52, method: "PUT", path: "/_config/pipelines/edge-server/:pipeline_id", action: "pipelines.edge.update", ...cfg },
  { op: 53, method: "GET", path: "/_config/pipelines/edge-server/:pipeline_id", action: "pipelines.edge.get", ...cfg },

  // Pipelines of all kinds
  { op: 54, method: "GET", path: "/_config/pipelines/_list", action: "pipelines.list", ...cfg },
  { op: 55, method: "GET", path: "/_config/pipelines/_count", action: "pipelines.count", ...cfg },
  { op: 56, method: "POST", path: "/_config/pipelines/_action", action: "pipelines.action", ...cfg },
  { op: 57, method: "POST", path: "/_config/pipelines/sql/connect", action: "pipelines.sqlConnect", ...open },

  // Notebooks
  { op: 58, method: "POST", path: "/_notebooks/notebooks", action: "notebooks.create", ...notebooks },
  { op: 59, method: "DELETE", path: "/_notebooks/notebooks", action: "notebooks.remove", ...notebooks },
  { op: 60, method: "PUT", path: "/_notebooks/notebooks/:notebook_id", action: "notebooks.rename", ...notebooks },
  // Without the id, so that the spec's `Notebook ID is missing` is what it answers (not 405).
  { op: 60, method: "PUT", path: "/_notebooks/notebooks", action: "notebooks.rename", ...notebooks },
  { op: 61, method: "GET", path: "/_notebooks/notebooks/:notebook_id", action: "notebooks.get", ...notebooks },
  { op: 62, method: "GET", path: "/_notebooks/notebooks/_all", action: "notebooks.all", ...notebooks },
  { op: 63, method: "GET", path: "/_notebooks/notebooks/_count", action: "notebooks.count", ...notebooks },
  { op: 64, method: "GET", path: "/_notebooks/notebooks/_run", action: "notebooks.run", ...notebooks },
  { op: 64, method: "POST", path: "/_notebooks/notebooks/_run", action: "notebooks.run", ...notebooks },
  { op: 65, method: "POST", path: "/_notebooks/notebooks/_schedule", action: "notebooks.schedule", ...notebooks },
  { op: 65, method: "GET", path: "/_notebooks/notebooks/_schedule", action: "notebooks.schedule", ...notebooks },
  { op: 66, method: "POST", path: "/_notebooks/notebooks/_unschedule", action: "notebooks.unschedule", ...notebooks },
  // Not in the spec: a notebook's cells over HTTP (read, or the executed copy with ?executed=true; replace).
  { method: "GET", path: "/_notebooks/notebooks/:notebook_id/_content", action: "notebooks.content", ...notebooks },
  { method: "PUT", path: "/_notebooks/notebooks/:notebook_id/_content", action: "notebooks.saveContent", ...notebooks },

  // Condition monitoring
  { op: 67, method: "GET", path: "/_cm/fft/_peaks", action: "cm.fft.peaks", ...cm },
  { op: 68, method: "GET", path: "/_cm/fft/_summary", action: "cm.fft.summary", ...cm },
  { op: 69, method: "GET", path: "/_cm/fft/_spectrum", action: "cm.fft.spectrum", ...cm },
  { op: 70, method: "GET", path: "/_cm/fft/_timestamps", action: "cm.fft.timestamps", ...cm },
  { op: 71, method: "GET", path: "/_cm/monitors/:monitor_id", action: "cm.monitors.get", ...cm },
  { op: 72, method: "GET", path: "/_cm/monitors/_list", action: "cm.monitors.list", ...cm },
  { op: 73, method: "GET", path: "/_cm/assets/:asset_id", action: "cm.assets.get", ...cm },
  { op: 74, method: "GET", path: "/_cm/assets/_list", action: "cm.assets.list", ...cm },

  // Energy metrics
  { op: 75, method: "GET", path: "/_ems/monitor/:monitor_id", action: "ems.monitor", ...ems },
  { op: 76, method: "GET", path: "/_ems/monitor/_all", action: "ems.all", ...ems },
  { op: 77, method: "GET", path: "/_ems/monitor/_trend/:monitor_id", action: "ems.trend", ...ems },
  // Without the monitor id, so that the spec's `Monitor id not given` is what they answer: not 404, and
  // not `/_ems/monitor/_trend` read as op 75 of a monitor called `_trend`.
  { op: 75, method: "GET", path: "/_ems/monitor", action: "ems.monitor", ...ems },
  { op: 77, method: "GET", path: "/_ems/monitor/_trend", action: "ems.trend", ...ems },

  // Utility
  // Under /_config, so behind the Configuration module like the rest of the group (contract: route groups).
  { op: 78, method: "GET", path: "/_config/server-time", action: "config.serverTime", ...cfg },

  // Ingestion API of the edge gateways (contract: Pipelines and data ingestion)
  { method: "POST", path: "/_ingest/pipelines/:pipeline_id/readings", action: "pipelines.ingest.readings", ...ingest },
  { method: "POST", path: "/_ingest/pipelines/:pipeline_id/waveforms", action: "pipelines.ingest.waveform", ...ingest },
  { method: "POST", path: "/_ingest/pipelines/:pipeline_id/heartbeat", action: "pipelines.ingest.heartbeat", ...ingest },
  { method: "GET", path: "/_ingest/pipelines/:pipeline_id/actions", action: "pipelines.ingest.actions", ...ingest },
  { method: "POST", path: "/_ingest/pipelines/:pipeline_id/actions/:action_id", action: "pipelines.ingest.ack", ...ingest },
  // Not in the contract: a gateway fetches its own configuration (tags, registration, monitors) with its key.
  { method: "GET", path: "/_ingest/pipelines/:pipeline_id", action: "pipelines.ingest.config", ...ingest },
];

const isStatic = (path: string): boolean => !path.includes(":");

/** Static paths first, so `/_config/sites/_list` is never read as a site called `_list`. */
export function orderedOperations(ops: Operation[] = OPERATIONS): Operation[] {
  return [...ops.filter((o) => isStatic(o.path)), ...ops.filter((o) => !isStatic(o.path))];
}

function toRegExp(path: string): RegExp {
  const body = path
    .split("/")
    .map((seg) => (seg.startsWith(":") ? "[^/]+" : seg.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
    .join("/");
  return new RegExp(`^${body}/?$`);
}

const MATCHERS = OPERATIONS.map((o) => ({ op: o, re: toRegExp(o.path), static: isStatic(o.path) }));

/** The methods served at a URL path: static routes shadow parameterised ones, as in routing. */
export function methodsAt(urlPath: string): Method[] {
  const hits = MATCHERS.filter((m) => m.re.test(urlPath));
  const statics = hits.filter((m) => m.static);
  return [...new Set((statics.length ? statics : hits).map((m) => m.op.method))];
}
