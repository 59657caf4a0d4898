/**
 * The console (docs/console.md): a single page served by the gateway at `/`, its modules under
 * `/console/`. Plain ES modules, no build step and no CDN (a plant's network often has no
 * internet): the page's own files from the repository's console/ folder, and the three libraries it uses
 * (preact, htm, uPlot) straight from node_modules, mapped by the page's import map.
 *
 * Files are read once, at the first request, and kept with their gzip; an ETag lets a browser
 * revalidate instead of downloading again. They hold no tenant data, so unlike API answers they
 * may be cached (revalidated each time: a new release is seen at once).
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import path from "node:path";
import { gzipSync } from "node:zlib";

/** The console's folder, at the repository's top (console/), two levels above this file. */
const HERE = path.join(__dirname, "..", "..", "console");

/** A file of an installed package, by its folder (found from the package's main file: not every package exports its package.json). */
const fromPackage = (pkg: string, file: string): string => path.join(path.dirname(require.resolve(pkg)), file);

/** The libraries, by the path the page asks for: `/console/vendor/<name>`. */
const VENDOR: Record<string, string> = {
  "preact.mjs": fromPackage("preact", "preact.mjs"),
  "hooks.mjs": fromPackage("preact/hooks", "hooks.mjs"),
  "htm.mjs": fromPackage("htm", "htm.mjs"),
  "uPlot.esm.js": fromPackage("uplot", "uPlot.esm.js"),
  "uPlot.min.css": fromPackage("uplot", "uPlot.min.css"),
};

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
};

interface Asset {
  type: string;
  body: Buffer;
  gzip: Buffer;
  etag: string;
  policy?: string;
}

const hashOf = (text: string): string => `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`;

/**
 * The page's policy: scripts and styles from this origin only, of inline code only the import
 * map (by its hash). uPlot and preact set styles through the DOM, which a policy does not stop.
 */
export function consolePolicy(html: string): string {
  const inline = [...html.matchAll(/<script type="importmap">([\s\S]*?)<\/script>/g)].map((m) => hashOf(m[1]!));
  return [
    "default-src 'none'",
    `script-src 'self' ${inline.join(" ")}`.trim(),
    "style-src 'self'",
    "connect-src 'self'",
    "img-src 'self' data:",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}

const assets = new Map<string, Asset | null>();

function load(file: string): Asset | null {
  const type = TYPES[path.extname(file)];
  if (type === undefined || !fs.existsSync(file) || !fs.statSync(file).isFile()) return null;
  const body = fs.readFileSync(file);
  const asset: Asset = { type, body, gzip: gzipSync(body, { level: 9 }), etag: `"${createHash("sha1").update(body).digest("base64url")}"` };
  if (type.startsWith("text/html")) asset.policy = consolePolicy(body.toString("utf8"));
  return asset;
}

/** The file behind a URL path, or undefined when the path is not the console's. */
function fileOf(urlPath: string): string | null | undefined {
  if (urlPath === "/" || urlPath === "/index.html") return path.join(HERE, "index.html");
  if (!urlPath.startsWith("/console/")) return undefined;
  const rest = urlPath.slice("/console/".length);
  if (rest.startsWith("vendor/")) return VENDOR[rest.slice("vendor/".length)] ?? null;
  // Only plain names below the folder: no `..`, no hidden files.
  if (!/^[a-z0-9_-]+(\/[a-z0-9_-]+)*\.[a-z]+$/i.test(rest)) return null;
  return path.join(HERE, rest);
}

/** Whether the console's files are cached after their first read (off while developing the console). */
const cached = process.env.CONSOLE_RELOAD !== "true";

/** Answers the console's page and files; false for any other path (the API's routes). */
export function serveConsole(urlPath: string, req: IncomingMessage, res: ServerResponse): boolean {
  const file = fileOf(urlPath);
  if (file === undefined) return false;
  let asset = file === null ? null : cached ? assets.get(file) : undefined;
  if (asset === undefined && file !== null) {
    asset = load(file);
    if (cached) assets.set(file, asset);
  }
  if (!asset) return false;
  const headers: Record<string, string | number> = {
    "Content-Type": asset.type,
    ETag: asset.etag,
    "Cache-Control": "no-cache",
    Vary: "Accept-Encoding",
  };
  if (asset.policy) headers["Content-Security-Policy"] = asset.policy;
  if (req.headers["if-none-match"] === asset.etag) {
    res.writeHead(304, headers);
    res.end();
    return true;
  }
  const gzip = /\bgzip\b/.test(String(req.headers["accept-encoding"] ?? ""));
  const body = gzip ? asset.gzip : asset.body;
  if (gzip) headers["Content-Encoding"] = "gzip";
  headers["Content-Length"] = body.length;
  res.writeHead(200, headers);
  res.end(req.method === "HEAD" ? undefined : body);
  return true;
}
