/**
 * The audit log (docs/security.md): every service stages its entries on the `audit`
 * stream (lib/audit.ts); this service appends them to `audit_log`, one chain for the whole
 * deployment. Each row's hash is sha256(prev_hash || canonical JSON of the entry, its id
 * included), so a row changed, removed or moved by hand breaks the chain at that row, and
 * `_verify` names it. The rules here are pure; the SQL is in audit.repo.ts.
 */
import { createHash } from "node:crypto";
import { USER_TYPES, type Principal, type UserType } from "../../lib/access";
import { redactChanges, type AuditAction, type AuditChanges, type AuditEntityType, type AuditEntry } from "../../lib/audit";
import { DomainError } from "../../lib/errors";
import { MSG } from "./messages";

/** The prev_hash of the first entry. */
export const GENESIS = "0".repeat(64);

/** What a row's hash covers: the entry as appended, with its place in the chain (`id`). */
export interface ChainedEntry extends AuditEntry {
  id: number;
}

/** A row of `audit_log`, as PostgreSQL answers it (bigint as text, changes as its JSON text). */
export interface AuditRow {
  id: string;
  entry_id: string;
  at: string;
  actor: string | null;
  user_type: string | null;
  action: string;
  entity_type: string;
  entity_id: string | null;
  site_id: string | null;
  plant_id: string | null;
  request_id: string | null;
  client: string | null;
  changes: string;
  via_token_of: string | null;
  prev_hash: string;
  hash: string;
}

/** JSON with object keys sorted at every depth and no spaces: one text for one value, whoever writes it. */
export function canonicalJson(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number") return Number.isFinite(value) ? JSON.stringify(value) : "null";
  if (typeof value !== "object") return JSON.stringify(value);
  // Written with one string rather than arrays joined: every entry of every append comes here.
  if (Array.isArray(value)) {
    let out = "[";
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ",";
      // A hole stays empty, as Array.prototype.join leaves it.
      if (i in value) out += canonicalJson(value[i]);
    }
    return `${out}]`;
  }
  const record = value as Record<string, unknown>;
  let out = "{";
  for (const key of Object.keys(record).sort()) {
    const v = record[key];
    if (v === undefined) continue;
    if (out.length > 1) out += ",";
    out += `${JSON.stringify(key)}:${canonicalJson(v)}`;
  }
  return `${out}}`;
}

/** A chained entry's fields in canonicalJson's order (sorted), with the text that opens each. */
const ENTRY_FIELDS = (
  ["action", "actor", "at", "changes", "client", "entity_id", "entity_type", "entry_id", "id", "plant_id", "request_id", "site_id", "user_type"] as const satisfies readonly (keyof ChainedEntry)[]
)
  .slice()
  .sort()
  .map((key, i) => ({ key, open: `${i === 0 ? "{" : ","}${JSON.stringify(key)}:` }));

/**
 * canonicalJson(entry), written field by field: every append hashes every entry, and the generic
 * walk (sorting each object's keys) cost more than the rest of the append's work in JavaScript.
 * `changesText` is canonicalJson(entry.changes) when the caller has it already (it is stored too).
 */
export function canonicalEntry(entry: ChainedEntry, changesText?: string): string {
  // Anything but the known fields (an entry built elsewhere) takes the generic way, which has the same answer.
  if (Object.keys(entry).length !== ENTRY_FIELDS.length) return canonicalJson(entry);
  let out = "";
  for (const { key, open } of ENTRY_FIELDS) {
    const value = entry[key];
    if (value === undefined) return canonicalJson(entry);
    out += open + (key === "changes" && changesText !== undefined ? changesText : canonicalJson(value));
  }
  return `${out}}`;
}

export function chainHash(prevHash: string, entry: ChainedEntry, changesText?: string): string {
  return createHash("sha256").update(prevHash).update(canonicalEntry(entry, changesText)).digest("hex");
}

const text = (v: unknown, max: number): string | null =>
  typeof v === "string" ? v.replace(/\u0000/g, "\uFFFD").slice(0, max) : typeof v === "number" ? String(v) : null;

/**
 * An entry as the stream delivered it, made safe to store whatever a producer sent: a message
 * that could never be stored would hold its partition back for good (the consumer never gives
 * up on one). The message id stands in for a missing entry id.
 */
export function normalizeEntry(data: unknown, messageId: string): AuditEntry {
  const d = (typeof data === "object" && data !== null ? data : {}) as Record<string, unknown>;
  const userType = text(d.user_type, 32);
  const changes = typeof d.changes === "object" && d.changes !== null && !Array.isArray(d.changes) ? (d.changes as AuditChanges) : {};
  return {
    entry_id: text(d.entry_id, 128) ?? messageId,
    at: typeof d.at === "number" && Number.isFinite(d.at) ? Math.trunc(d.at) : Date.now(),
    actor: text(d.actor, 320),
    user_type: userType !== null && (USER_TYPES as readonly string[]).includes(userType) ? (userType as UserType) : null,
    action: (text(d.action, 64) ?? "update") as AuditAction,
    entity_type: (text(d.entity_type, 64) ?? "unknown") as AuditEntityType,
    // Ids are uuids and usernames, both case-insensitive here: stored in lower case, so the filter finds them by index.
    entity_id: text(d.entity_id, 320)?.toLowerCase() ?? null,
    site_id: text(d.site_id, 64)?.toLowerCase() ?? null,
    plant_id: text(d.plant_id, 64)?.toLowerCase() ?? null,
    request_id: text(d.request_id, 128),
    client: text(d.client, 64),
    // Redacted again (a producer that forgot a secret does not store it), and only what JSON can say.
    changes: redactChanges(changes),
    ...viaTokenOf(text(d.via_token_of, 320)),
  };
}

/** `via_token_of` only where there is one: an entry without it hashes as entries did before it existed. */
const viaTokenOf = (v: string | null | undefined): { via_token_of?: string } => (v ? { via_token_of: v } : {});

/** The entry as stored in a row, for the hash. */
export function chainedOf(row: AuditRow): ChainedEntry {
  let changes: AuditChanges;
  try {
    changes = JSON.parse(row.changes) as AuditChanges;
  } catch {
    // Not JSON: text a person wrote into the row. It is hashed as the text it is, so the check fails there.
    changes = { "": [row.changes, null] };
  }
  return {
    id: Number(row.id),
    entry_id: row.entry_id,
    at: Number(row.at),
    actor: row.actor,
    user_type: row.user_type as UserType | null,
    action: row.action as AuditAction,
    entity_type: row.entity_type as AuditEntityType,
    entity_id: row.entity_id,
    site_id: row.site_id,
    plant_id: row.plant_id,
    request_id: row.request_id,
    client: row.client,
    changes,
    ...viaTokenOf(row.via_token_of),
  };
}

/** How the walk of `_verify` stands: rows seen, the hash the next row must name, the first row that broke the chain. */
export interface ChainWalk {
  entries: number;
  prevHash: string;
  firstBadId: number | null;
}

export const startWalk = (): ChainWalk => ({ entries: 0, prevHash: GENESIS, firstBadId: null });

/**
 * One more row of the walk, in id order. A row is bad when it does not name the hash of the row
 * before it (a row removed or inserted before it) or its own hash is not that of its content (a
 * row changed). The walk goes on from the row's stored hash, so a later row is judged on its own.
 */
export function walkRow(walk: ChainWalk, row: AuditRow): ChainWalk {
  const good = row.prev_hash === walk.prevHash && chainHash(row.prev_hash, chainedOf(row)) === row.hash;
  return {
    entries: walk.entries + 1,
    prevHash: row.hash,
    firstBadId: walk.firstBadId ?? (good ? null : Number(row.id)),
  };
}

/** An entry as `GET /_config/audit` answers it. */
export interface AuditView {
  id: number;
  at: string;
  actor: string | null;
  user_type: string | null;
  action: string;
  entity_type: string;
  entity_id: string | null;
  site_id: string | null;
  plant_id: string | null;
  request_id: string | null;
  client: string | null;
  changes: AuditChanges;
  /**
   * The admin who issued the API token the change was made with, when it is not the actor's own
   * (docs/security.md). Present only then: every other entry keeps the shape it had.
   */
  via_token_of?: string;
}

export function auditView(row: AuditRow): AuditView {
  const e = chainedOf(row);
  return {
    id: e.id,
    at: new Date(e.at).toISOString(),
    actor: e.actor,
    user_type: e.user_type,
    action: e.action,
    entity_type: e.entity_type,
    entity_id: e.entity_id,
    site_id: e.site_id,
    plant_id: e.plant_id,
    request_id: e.request_id,
    client: e.client,
    changes: e.changes,
    ...viaTokenOf(e.via_token_of),
  };
}

/** Whose entries the caller reads: a SaaS admin every one, a site admin its site's; anyone else none (403). */
export function auditScope(user: Principal): { site_id: string | null } {
  if (user.user_type === "saas-admin") return { site_id: null };
  if (user.user_type === "site-admin" && user.site_id) return { site_id: user.site_id.toLowerCase() };
  throw new DomainError(403, MSG.unauthorizedOperation);
}

/** The chain is the whole deployment's: only a SaaS admin checks it (a count of entries would tell a site admin of other sites'). */
export function requireVerifier(user: Principal): void {
  if (user.user_type !== "saas-admin") throw new DomainError(403, MSG.unauthorizedOperation);
}
