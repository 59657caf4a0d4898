// @ts-check
// The console's one way to the HTTP API: the session cookie (sent by the browser, never read
// here), the header without which a change made with a cookie is refused (docs/security.md, the
// console session), the service's error envelope turned into an ApiError, and a lost session
// answered by signing in again and repeating the request, so that the page the user was on is kept.

/** An answer other than 2xx: the envelope's status, message and field (when the service names one). */
export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {string} message
   * @param {string | null} [field]
   */
  constructor(status, message, field) {
    super(message);
    this.status = status;
    this.field = field ?? null;
  }
}

/**
 * The signed-in user, as `GET /_auth/session` answers it.
 * @typedef {{ username: string, user_type: string, modules: string[] }} User
 */

/**
 * What a request or an action threw: an ApiError (its status, message and field) or another Error
 * (the network failed, a page's own check).
 * @typedef {Error & { status?: number, field?: string | null }} Failure
 */

/**
 * A request's query: its defined values become `?key=value` (arrays as repeated keys).
 * @typedef {Record<string, unknown>} Query
 */

/**
 * A request's options: its query, its JSON body, `raw` for the Response itself, `retried` once it
 * was repeated after a new sign-in, `signal` to abort it.
 * @typedef {{ query?: Query, body?: unknown, raw?: boolean, retried?: boolean, signal?: AbortSignal }} RequestOptions
 */

/**
 * Called when a request meets 401: resolves once the user has signed in again. Set by the app.
 * @type {() => Promise<void>}
 */
let onSessionLost = () => Promise.reject(new ApiError(401, "Signed out"));
/** @param {() => Promise<void>} handler */
export function whenSessionLost(handler) {
  onSessionLost = handler;
}

/**
 * `?a=1&b=2` of the defined values of `query` (arrays as repeated keys).
 * @param {Query} [query]
 */
export function queryString(query) {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query ?? {})) {
    if (value === undefined || value === null || value === "") continue;
    if (Array.isArray(value)) for (const v of value) params.append(key, String(v));
    else params.set(key, String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : "";
}

/** The base of the API: where the page is served (the gateway may sit under a path). */
const BASE = location.pathname.replace(/\/[^/]*$/, "");

/**
 * The address of a GET route, for a link the browser follows itself (a download: the session
 * cookie goes with it).
 * @param {string} path
 * @param {Query} [query]
 */
export const routeUrl = (path, query) => `${BASE}${path}${queryString(query)}`;

/**
 * One request. Answers the parsed JSON (or the text of a text answer); throws ApiError.
 * `raw: true` answers the Response itself (headers such as X-Capture-Timestamp, CSV).
 * The answer's shape is the route's, as the API's reference describes it; it is not checked here.
 * @param {string} method
 * @param {string} path
 * @param {RequestOptions} [options]
 * @returns {Promise<any>}
 */
export async function api(method, path, { query, body, raw = false, retried = false, signal } = {}) {
  /** @type {Record<string, string>} */
  const headers = { "X-Requested-With": "ims-console", Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(`${BASE}${path}${queryString(query)}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: "same-origin",
    signal,
  });
  // A 401 is either a lost session or a refusal of the user's rights (a module not granted, a
  // user type that may not): only the first brings the sign-in back.
  if (res.status === 401 && !retried && !path.startsWith("/_auth/") && (await whoAmI()) === null) {
    await onSessionLost();
    return api(method, path, { query, body, raw, retried: true, signal });
  }
  if (!res.ok) {
    let envelope = null;
    try {
      envelope = await res.json();
    } catch {
      // not JSON: the status says it
    }
    const e = envelope?.error;
    throw new ApiError(res.status, e?.message ?? `${res.status} ${res.statusText}`, e?.field);
  }
  if (raw) return res;
  const type = res.headers.get("content-type") ?? "";
  return type.includes("json") ? res.json() : res.text();
}

/** @type {(path: string, query?: Query, opts?: RequestOptions) => Promise<any>} */
export const get = (path, query, opts) => api("GET", path, { ...opts, query });
/** @type {(path: string, body?: unknown, query?: Query) => Promise<any>} */
export const post = (path, body, query) => api("POST", path, { body, query });
/** @type {(path: string, body?: unknown, query?: Query) => Promise<any>} */
export const put = (path, body, query) => api("PUT", path, { body, query });
/** @type {(path: string, body?: unknown) => Promise<any>} */
export const del = (path, body) => api("DELETE", path, { body });

/**
 * The signed-in user (`{username, user_type, modules}`), or null.
 * @returns {Promise<User | null>}
 */
export async function whoAmI() {
  try {
    return await api("GET", "/_auth/session");
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) return null;
    throw e;
  }
}
