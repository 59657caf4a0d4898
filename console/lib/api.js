// The console's one way to the HTTP API: the session cookie (sent by the browser, never read
// here), the header without which a change made with a cookie is refused (EXTENSIONS.md §3),
// the service's error envelope turned into an ApiError, and a lost session answered by signing
// in again and repeating the request, so that the page the user was on is kept.

/** An answer other than 2xx: the envelope's status, message and field (when the service names one). */
export class ApiError extends Error {
  constructor(status, message, field) {
    super(message);
    this.status = status;
    this.field = field ?? null;
  }
}

/** Called when a request meets 401: resolves once the user has signed in again. Set by the app. */
let onSessionLost = () => Promise.reject(new ApiError(401, "Signed out"));
export function whenSessionLost(handler) {
  onSessionLost = handler;
}

/** `?a=1&b=2` of the defined values of `query` (arrays as repeated keys). */
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
 * One request. Answers the parsed JSON (or the text of a text answer); throws ApiError.
 * `raw: true` answers the Response itself (headers such as X-Capture-Timestamp, CSV).
 */
export async function api(method, path, { query, body, raw = false, retried = false, signal } = {}) {
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

export const get = (path, query, opts) => api("GET", path, { ...opts, query });
export const post = (path, body, query) => api("POST", path, { body, query });
export const put = (path, body, query) => api("PUT", path, { body, query });
export const del = (path, body) => api("DELETE", path, { body });

/** The signed-in user (`{username, user_type, modules}`), or null. */
export async function whoAmI() {
  try {
    return await api("GET", "/_auth/session");
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) return null;
    throw e;
  }
}
