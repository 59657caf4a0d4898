/**
 * The owner's API door: a Unix socket of the notebooks service, bound into one run's sandbox,
 * where the runner's loopback forwarder sends the kernel's requests (IMS_API_URL). Every request
 * goes on to the api with a `read` token of the notebook's owner, made for this run and revoked
 * when it ends: the kernel acts as its owner with exactly the owner's rights now, and never holds
 * a credential. Only reads pass (GET, HEAD), and not the GET forms of run and schedule (ops 64,
 * 65), which change things; the api refuses the same for any read token. No header of the
 * kernel's is passed on: it cannot bring a cookie or another credential.
 */
import fs from "node:fs/promises";
import http, { type IncomingMessage, type ServerResponse } from "node:http";

/** Ops 64 and 65 accept GET but queue runs and change schedules. */
const CHANGING_GETS = new Set(["/_notebooks/notebooks/_run", "/_notebooks/notebooks/_schedule"]);

/** The answer the api gives a read token's change: the same envelope, so a notebook sees one behaviour. */
const REFUSED = JSON.stringify({ error: { status: 403, message: "Unauthorized operation" } });

/** Headers of the api's answer that the kernel gets; nothing else (no cookie). */
const PASSED_BACK = ["content-type", "content-disposition", "content-length", "retry-after", "x-capture-timestamp", "cache-control"];

export interface ApiDoor {
  close(): Promise<void>;
}

export interface ApiDoorOptions {
  socket: string;
  /** The api's base URL, no trailing slash. */
  apiUrl: string;
  token: string;
  /** The uid the run executes as, which alone may connect; null: the service's own user. */
  uid: number | null;
}

function refuse(res: ServerResponse): void {
  res.writeHead(403, { "content-type": "application/json; charset=utf-8" }).end(REFUSED);
}

export function isReadThrough(method: string | undefined, url: string | undefined): boolean {
  if (method !== "GET" && method !== "HEAD") return false;
  // Origin-form only: `http://elsewhere/` or `//elsewhere` must not name another host.
  if (!url || !url.startsWith("/") || url.startsWith("//")) return false;
  return !CHANGING_GETS.has(url.split("?")[0]!.replace(/\/+$/, ""));
}

export async function openApiDoor(o: ApiDoorOptions): Promise<ApiDoor> {
  const api = new URL(o.apiUrl);
  const forward = (req: IncomingMessage, res: ServerResponse) => {
    if (!isReadThrough(req.method, req.url)) {
      req.resume();
      return refuse(res);
    }
    const upstream = http.request(
      {
        host: api.hostname,
        port: api.port || 80,
        method: req.method,
        path: (api.pathname.replace(/\/+$/, "") || "") + req.url,
        headers: { authorization: `Bearer ${o.token}`, accept: req.headers.accept ?? "*/*", "user-agent": "ims-notebook" },
      },
      (answer) => {
        const headers: Record<string, string | string[]> = {};
        for (const name of PASSED_BACK) {
          const v = answer.headers[name];
          if (v !== undefined) headers[name] = v;
        }
        res.writeHead(answer.statusCode ?? 502, headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", () => {
      if (!res.headersSent) res.writeHead(503, { "content-type": "application/json; charset=utf-8" });
      res.end(JSON.stringify({ error: { status: 503, message: "Service unavailable" } }));
    });
    req.resume();
    upstream.end();
  };
  const server = http.createServer(forward);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(o.socket, () => resolve());
  });
  await fs.chmod(o.socket, 0o600);
  if (o.uid !== null) await fs.chown(o.socket, o.uid, o.uid);
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
