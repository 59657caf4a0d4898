/**
 * The audit trail's producing side (docs/security.md, the audit trail). A service that owns a
 * change writes its audit entry in the same transaction as the change: the entry is staged on the
 * durable `audit` stream through the service's outbox (mixins/stream.mixin.ts), so a change never
 * commits without its entry, nor an entry without its change. The config service reads the stream
 * (group "config") and appends each entry to its hash-chained log (services/config/audit.ts).
 *
 *   await this.db.transaction(async (tx) => {
 *     await repo.updateThing(tx, next);
 *     await stageAudit(this.streams, tx, ctx, { action: "update", entity_type: "asset", entity_id, site_id, plant_id, changes: diff(before, next) });
 *   });
 *
 * or, for a write that is one statement, `auditedWrite(db, streams, ctx, change, (q) => repo.updateThing(q, next))`:
 * the entry's outbox row is then written by that very statement (a data-modifying WITH), so the
 * write costs one round trip as before; a transaction of its own (BEGIN, the write, the outbox
 * row, COMMIT) made asset writes 45 % slower on a loaded two-core machine (bench:api, case audit).
 *
 * Entries are not flushed after each change: the outbox's drain publishes them within its
 * interval (a second). An audit trail can wait that long; a drain per write cost more than the
 * entries themselves. Every producer declares `audit` a batched stream (`StreamMixin({ outbox:
 * true, batched: [AUDIT_STREAM] })`): one drainer at a time takes the staged entries, oldest
 * first, and publishes up to 256 of them as one message, the JSON array of the entries, under
 * one key; config appends a message's entries in one transaction. A message per entry (its
 * publish, delivery and ack) was about half of what the trail cost config's CPU (bench:api, case
 * audit, profiled).
 *
 * Secrets never leave the producer: a field whose name names one (password, OTP, key, token,
 * secret, hash; not an `*_id`) is "***" at any depth, before the entry is staged.
 */
import { isDeepStrictEqual } from "node:util";
import { EntityManager, type DataSource } from "typeorm";
import type { UserType } from "./access";
import { config } from "./config";
import type { RequestMeta } from "./contract";
import { newId } from "./ids";
import type { StagingTx } from "./streams/outbox";

export const AUDIT_STREAM = "audit";

/** What an entry says was done (create, update, delete, actions, acknowledge, shelve, sign-in failure, password reset, tokens). */
export const AUDIT_ACTIONS = [
  "create",
  "update",
  "delete",
  "rename",
  "acknowledge",
  "shelve",
  "unshelve",
  "assign",
  "note",
  "start",
  "stop",
  "run",
  "schedule",
  "unschedule",
  "sign_in_failure",
  "otp_request",
  "password_reset",
  "token_issue",
  "token_revoke",
  "rotate_key",
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** What an entry is about. */
export const AUDIT_ENTITY_TYPES = ["site", "plant", "function", "asset", "monitor", "user", "token", "watcher", "suppression", "alert", "pipeline", "notebook"] as const;
export type AuditEntityType = (typeof AUDIT_ENTITY_TYPES)[number];

/** `{field: [old, new]}`; null stands for "none" (a create's old values, a delete's new ones). */
export type AuditChanges = Record<string, [unknown, unknown]>;

/** One entry as staged on the `audit` stream: its message id is `entry_id`, so a redelivery is appended once. */
export interface AuditEntry {
  entry_id: string;
  /** Epoch ms at which the change was made (the producer's clock). */
  at: number;
  actor: string | null;
  user_type: UserType | null;
  action: AuditAction;
  entity_type: AuditEntityType;
  entity_id: string | null;
  site_id: string | null;
  plant_id: string | null;
  request_id: string | null;
  client: string | null;
  changes: AuditChanges;
  /**
   * Present only when the change was made with an API token an admin issued for another user
   * (docs/security.md, "What an API token may not do"): the admin. Left out otherwise, so that
   * entries made before it hash as they did.
   */
  via_token_of?: string;
}

/** The stream producers stage entries on: add it to a service's stream map (`StreamClient<TheirStreams & AuditStreams>`). */
export interface AuditStreams {
  audit: AuditEntry;
}

/** What a producer says about one change; who, from where and when come from the request. */
export interface AuditChange {
  action: AuditAction;
  entity_type: AuditEntityType;
  entity_id: string | null;
  site_id?: string | null;
  plant_id?: string | null;
  changes?: AuditChanges;
  /** Who, when it is not the caller: the username a failed sign-in tried, the user a password reset is for. */
  actor?: { username: string; user_type: UserType | null };
}

/** The request a change is made in: a Moleculer context fits (its requestID, and the gateway's meta). */
export interface AuditSource {
  requestID?: string | null;
  meta: Partial<Pick<RequestMeta, "user" | "client" | "token">>;
}

/** A producer's stream client (the stream mixin's `streams`, typed with AuditStreams). */
export interface AuditStager {
  stage(tx: StagingTx, stream: typeof AUDIT_STREAM, id: string, data: AuditEntry, key?: string | null): Promise<void>;
}

export const REDACTED = "***";

/** Words that name a secret in a field name (`user_password`, `ingestKey`, `otp_hash`). */
const SECRET_WORDS = new Set([
  "password",
  "passwd",
  "passphrase",
  "pwd",
  "pass",
  "otp",
  "secret",
  "token",
  "key",
  "apikey",
  "hash",
  "authorization",
  "credential",
  "credentials",
]);

/** Longest text kept in an entry: a note or a name is kept whole, a pasted file is not. */
const MAX_TEXT = 4000;

/**
 * Field names already judged: each change names the same few fields again (`asset_name`,
 * `tags[0].thresholds.warning`), and splitting a name into words cost more than the rest of an
 * entry's redaction. Bounded: emptied when full.
 */
const secretFields = new Map<string, boolean>();
const SECRET_FIELDS_KEPT = 4096;

/** Whether a field's value is a secret, by its name: any word of it names one, unless it is an id (`token_id`). */
export function isSecretField(name: string): boolean {
  let secret = secretFields.get(name);
  if (secret === undefined) {
    secret = namesSecret(name);
    if (secretFields.size >= SECRET_FIELDS_KEPT) secretFields.clear();
    secretFields.set(name, secret);
  }
  return secret;
}

function namesSecret(name: string): boolean {
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
  if (words.length === 0 || words[words.length - 1] === "id") return false;
  return words.some((w) => SECRET_WORDS.has(w));
}

/** Text PostgreSQL can hold (no NUL) and of bounded length. */
function cleanText(text: string, max = MAX_TEXT): string {
  const clean = text.includes("\u0000") ? text.replace(/\u0000/g, "\uFFFD") : text;
  return clean.length > max ? `${clean.slice(0, max)}…` : clean;
}

/** A JSON copy of `value` with every secret-named field at any depth replaced by "***". */
export function redact(value: unknown): unknown {
  if (value === undefined || value === null) return null;
  if (typeof value === "string") return cleanText(value);
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (typeof value === "boolean") return value;
  if (Array.isArray(value)) return value.map(redact);
  if (typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      if (v === undefined) continue;
      out[cleanText(k, 200)] = isSecretField(k) ? secretMark(v) : redact(v);
    }
    return out;
  }
  return cleanText(String(value));
}

/** A secret is shown as set ("***") or not set (null), never as itself. */
const secretMark = (v: unknown): unknown => (v === undefined || v === null ? null : REDACTED);

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * The fields that differ between two states of a record, `{field: [old, new]}`, redacted. `null`
 * for a record that does not exist: a create has only new values, a delete only old ones. An
 * update names what changed inside objects and equally long lists by path, so a threshold
 * change reads `"tags[0].thresholds.warning": ["7.1", "8.0"]` rather than two whole tag lists.
 */
export function diff(before: object | null | undefined, after: object | null | undefined): AuditChanges {
  const changes: AuditChanges = {};
  const walk = (path: string, old: unknown, next: unknown, deep: boolean): void => {
    if (isDeepStrictEqual(old, next)) return;
    if (deep && isPlainObject(old) && isPlainObject(next)) {
      for (const key of [...new Set([...Object.keys(old), ...Object.keys(next)])].sort()) {
        const sub = `${path}${path ? "." : ""}${key}`;
        if (isSecretField(key)) {
          if (!isDeepStrictEqual(old[key] ?? null, next[key] ?? null)) changes[sub] = [secretMark(old[key]), secretMark(next[key])];
        } else walk(sub, old[key] ?? null, next[key] ?? null, true);
      }
      return;
    }
    if (deep && Array.isArray(old) && Array.isArray(next) && old.length === next.length) {
      old.forEach((item, i) => walk(`${path}[${i}]`, item ?? null, next[i] ?? null, true));
      return;
    }
    changes[path] = [redact(old), redact(next)];
  };
  const b = (before ?? {}) as Record<string, unknown>;
  const a = (after ?? {}) as Record<string, unknown>;
  // Inside a record's fields only when both states exist: a create or a delete lists its fields whole.
  const deep = before != null && after != null;
  for (const key of [...new Set([...Object.keys(b), ...Object.keys(a)])].sort()) {
    const old = b[key] ?? null;
    const next = a[key] ?? null;
    if (isSecretField(key)) {
      if (!isDeepStrictEqual(old, next)) changes[key] = [secretMark(old), secretMark(next)];
    } else walk(key, old, next, deep);
  }
  return changes;
}

/** Changes given by hand (not through `diff`) are redacted the same way; the log's consumer applies it again. */
export function redactChanges(changes: AuditChanges): AuditChanges {
  const out: AuditChanges = {};
  for (const [key, pair] of Object.entries(changes)) {
    const [old, next] = Array.isArray(pair) && pair.length === 2 ? pair : [null, pair];
    out[cleanText(key, 200)] = isSecretField(key) ? [secretMark(old), secretMark(next)] : [redact(old), redact(next)];
  }
  return out;
}

const short = (text: string | null | undefined, max = 320): string | null => (text === undefined || text === null ? null : cleanText(text, max));

/** The entry of one change made in `source`'s request. */
export function auditEntry(source: AuditSource, change: AuditChange, at = Date.now()): AuditEntry {
  const user = source.meta.user ?? null;
  const via = change.actor ? undefined : short(source.meta.token?.via_token_of);
  return {
    entry_id: newId(),
    at,
    actor: short(change.actor ? change.actor.username : (user?.username ?? null)),
    user_type: change.actor ? change.actor.user_type : (user?.user_type ?? null),
    action: change.action,
    entity_type: change.entity_type,
    entity_id: short(change.entity_id),
    site_id: short(change.site_id ?? null, 64),
    plant_id: short(change.plant_id ?? null, 64),
    request_id: short(source.requestID ?? null, 128),
    client: short(source.meta.client ?? null, 64),
    changes: redactChanges(change.changes ?? {}),
    ...(via ? { via_token_of: via } : {}),
  };
}

/** False only under AUDIT_TRAIL=false, which the benchmark uses to measure what the trail costs. */
export const auditEnabled = (): boolean => config().auditTrail;

/**
 * Stages the entries of changes made in the caller's transaction `tx` (nothing when the trail is
 * off). One record's entries reach the log in the order they were made: the batched stream is
 * drained by one drainer at a time, in the order staged; the key (the entity) keeps that order
 * for an outbox that does not batch the stream.
 */
export async function stageAudit(stager: AuditStager, tx: StagingTx, source: AuditSource, changes: AuditChange | AuditChange[]): Promise<void> {
  if (!auditEnabled()) return;
  const at = Date.now();
  for (const change of Array.isArray(changes) ? changes : [changes]) {
    const entry = auditEntry(source, change, at);
    await stager.stage(tx, AUDIT_STREAM, entry.entry_id, entry, `${entry.entity_type}:${entry.entity_id ?? ""}`);
  }
}

type Queryable = DataSource | EntityManager;

interface StagedRow {
  sql: string;
  params: unknown[];
}

/**
 * An EntityManager for a write of one statement: that statement also writes the staged outbox
 * rows, in data-modifying WITH queries, so the change and its entries commit together in one
 * round trip, without a transaction (a statement is atomic). A second statement is refused.
 */
class OneStatement extends EntityManager {
  private used = false;

  constructor(
    db: DataSource,
    private readonly staged: StagedRow[],
  ) {
    super(db);
  }

  override async query<T = unknown>(sql: string, params: unknown[] = []): Promise<T> {
    if (this.used) throw new Error("auditedWrite: a write given its changes beforehand must be one statement");
    this.used = true;
    let offset = params.length;
    const ctes = this.staged.map((row, i) => {
      // The outbox's own INSERT, its parameters numbered after the statement's.
      const text = row.sql.replace(/\$(\d+)/g, (_m, k: string) => `$${Number(k) + offset}`);
      offset += row.params.length;
      return `audit_staged_${i} AS (${text})`;
    });
    const withClause = /^\s*WITH(\s+RECURSIVE)?\s/i;
    const combined = withClause.test(sql) ? sql.replace(withClause, (head) => `${head}${ctes.join(", ")}, `) : `WITH ${ctes.join(", ")} ${sql}`;
    return super.query<T>(combined, [...params, ...this.staged.flatMap((row) => row.params)]);
  }
}

/**
 * A write of one statement with its audit entries. Changes known beforehand go into that very
 * statement (OneStatement): one round trip, as the write alone was. Changes that depend on what
 * the write answered (a delete that found nothing records nothing) take a transaction. Under
 * AUDIT_TRAIL=false the write runs alone, as it did before the trail, so that the benchmark
 * measures all that the trail adds.
 */
export async function auditedWrite<T>(
  db: DataSource,
  stager: AuditStager,
  source: AuditSource,
  changes: AuditChange | AuditChange[] | ((result: T) => AuditChange | AuditChange[] | null),
  write: (q: Queryable) => Promise<T>,
): Promise<T> {
  if (!auditEnabled()) return write(db);
  if (typeof changes !== "function") {
    const staged: StagedRow[] = [];
    await stageAudit(stager, { query: async (sql, params) => staged.push({ sql, params: params ?? [] }) }, source, changes);
    return write(new OneStatement(db, staged));
  }
  return db.transaction(async (tx) => {
    const r = await write(tx);
    const made = changes(r);
    if (made) await stageAudit(stager, tx, source, made);
    return r;
  });
}
