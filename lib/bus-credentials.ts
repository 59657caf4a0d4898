/**
 * The credentials of the bus (NATS) and the cache (Redis) as their URLs carry them
 * (`nats://user:pass@host:4222,...`, `redis://:pass@host:6379`): taken apart for the clients, and
 * masked for logs. The embedded default (`npm start`: no TRANSPORTER, no REDIS_URL) uses none.
 */

/** A NATS user and its password: every connection of a process (the transporter's, the streams') uses the same. */
export interface NatsAuth {
  user: string;
  pass: string;
}

/**
 * A URL, or a comma-separated list of them, with every password replaced by `***`: what a log
 * line may print of TRANSPORTER or REDIS_URL. Entries that are not URLs are left as they are.
 */
export function redactUrl(urls: string): string {
  return urls
    .split(",")
    .map((entry) => {
      const trimmed = entry.trim();
      if (!trimmed.includes("://")) return entry;
      try {
        const u = new URL(trimmed);
        if (!u.password) return entry;
        u.password = "***";
        const masked = u.toString();
        // A special scheme's URL (http:) gains a `/` path; keep the entry's own form.
        return entry.replace(trimmed, masked.endsWith("/") && !trimmed.endsWith("/") ? masked.slice(0, -1) : masked);
      } catch {
        // Not parseable: mask whatever sits between `//` and `@`, which may hold a password.
        return entry.replace(/\/\/[^@/]*@/, "//***@");
      }
    })
    .join(",");
}

/**
 * TRANSPORTER's comma-separated NATS URLs as the `nats` client takes them: each server without
 * its credentials (the client reads `user:pass@` as part of the host, and a password starting with
 * digits as a port), and the one user/password pair the URLs carry, percent-decoded. A URL may
 * carry none (the pair of the others applies to it: a connection has one identity); two URLs that
 * carry different pairs are an error, as is a user without a password (a token: not supported).
 */
export function splitNatsUrls(urls: string): { servers: string[]; auth?: NatsAuth } {
  const servers: string[] = [];
  let auth: NatsAuth | undefined;
  for (const entry of urls.split(",").map((s) => s.trim()).filter(Boolean)) {
    if (!entry.includes("://")) {
      servers.push(entry);
      continue;
    }
    let u: URL;
    try {
      u = new URL(entry);
    } catch {
      throw new Error(`TRANSPORTER: not a URL: ${redactUrl(entry)}`);
    }
    servers.push(`${u.protocol}//${u.host}`);
    if (!u.username && !u.password) continue;
    if (!u.username || !u.password) throw new Error(`TRANSPORTER: ${redactUrl(entry)} needs both a user and a password (user:password@host)`);
    const pair = { user: decodeURIComponent(u.username), pass: decodeURIComponent(u.password) };
    if (auth && (auth.user !== pair.user || auth.pass !== pair.pass)) {
      throw new Error("TRANSPORTER: its URLs carry different credentials; a node connects as one user");
    }
    auth = pair;
  }
  return auth ? { servers, auth } : { servers };
}
