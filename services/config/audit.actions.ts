/**
 * The audit trail's read side (docs/security.md): the entries, newest first, and the chain's
 * check; and the consumer of the `audit` stream that appends what every service staged. The
 * chain's rules are in audit.ts, its SQL in audit.repo.ts.
 */
import type { Context } from "moleculer";
import type { DataSource } from "typeorm";
import { AUDIT_ACTIONS, AUDIT_ENTITY_TYPES, type AuditEntry, type AuditStreams } from "../../lib/audit";
import type { RequestMeta } from "../../lib/contract";
import { DomainError } from "../../lib/errors";
import { int, nullable, obj, str, type JsonSchema } from "../../lib/openapi-schema";
import { setTotal } from "../../lib/paging";
import { parseIsoDate } from "../../lib/time";
import type { StreamConsumers } from "../../mixins/stream.mixin";
import { auditScope, auditView, normalizeEntry, requireVerifier, startWalk, walkRow, type AuditView } from "./audit";
import * as repo from "./audit.repo";
import type { ConfigActions, ConfigThis } from "./config.types";
import { MSG } from "./messages";
import { list, optText } from "./params";

/** A page holds this many entries unless `limit` says otherwise: the log only grows. */
const DEFAULT_LIMIT = 100;
/** Rows read at a time by `_verify`. */
const VERIFY_BATCH = 2000;
/** Entries appended in one transaction at most, unless one message brings more (a batch is not split). */
const APPEND_BATCH = 256;
/**
 * How long a single entry waits for others before its append starts. Messages of one entry each
 * (published before batches) are keyed by entity, and the stream hands out one message per
 * partition at a time, so the messages of the other partitions arrive within a few milliseconds,
 * and one transaction takes them all rather than one each. A batch starts at once.
 */
const GATHER_MS = 5;

interface ListParams {
  from?: string;
  to?: string;
  actor?: string;
  entity_type?: string;
  entity_id?: string;
  limit?: number;
  offset?: number;
}

const EXAMPLE_ENTRY: AuditView = {
  id: 1284,
  at: "2026-02-01T21:47:09.312Z",
  actor: "asha.patil@example.com",
  user_type: "plant-admin",
  action: "update",
  entity_type: "monitor",
  entity_id: "1a2b3c4d-5e6f-4a8b-9c0d-1e2f3a4b5c6d",
  site_id: "5d0c4e8a-3f2b-4b7e-9a61-1c2d3e4f5a6b",
  plant_id: "8a7b6c5d-4e3f-4a2b-8c1d-0e9f8a7b6c5d",
  request_id: "0b7e4f7c-2d7a-4c52-9d0e-6f1f2a3b4c5d",
  client: "10.20.4.17",
  changes: { "tags[0].thresholds.warning": ["7.1", "9"] },
};

export const AUDIT_SCHEMAS: Record<string, JsonSchema> = {
  AuditEntry: obj({
    id: { ...int, description: "the entry's place in the chain, from 1" },
    at: { ...str, format: "date-time", description: "when the change was made, ISO 8601 UTC" },
    actor: { ...nullable("string"), description: "who made it (the username a failed sign-in tried); null: the system" },
    user_type: { ...nullable("string"), description: "the actor's user type then" },
    action: { ...str, enum: [...AUDIT_ACTIONS], description: "what was done" },
    entity_type: { ...str, enum: [...AUDIT_ENTITY_TYPES], description: "what kind of record it was done to" },
    entity_id: { ...nullable("string"), description: "the record's id (a user's username)" },
    site_id: { ...nullable("string"), description: "the site the record is in" },
    plant_id: { ...nullable("string"), description: "the plant the record is in" },
    request_id: { ...nullable("string"), description: "the request's X-Request-Id" },
    client: { ...nullable("string"), description: "the caller's address as the gateway saw it" },
    changes: { type: "object", description: 'what changed, {field: [old, new]}; a secret (password, OTP, key, token) reads "***"' },
    via_token_of: {
      ...str,
      description: "present only when the change was made with an API token an admin issued for the actor: that admin's username",
      examples: ["admin@localhost"],
    },
  }),
  AuditVerify: obj({
    ok: { type: "boolean", description: "whether every entry's hash is that of its content and the entry before it" },
    entries: { ...int, description: "entries in the log" },
    first_bad_id: { ...nullable("integer"), description: "the first entry that does not match (changed, or after one removed); null when ok" },
  }),
};

const FILTER_FIELDS = {
  from: { description: "only entries at or after this instant, ISO 8601 (no offset: UTC)", example: "2026-02-01T00:00:00Z" },
  to: { description: "only entries at or before this instant, ISO 8601", example: "2026-02-02T00:00:00Z" },
  actor: { description: "only entries of this actor (username)", example: "asha.patil@example.com" },
  entity_type: { enum: [...AUDIT_ENTITY_TYPES], description: "only entries about records of this type", example: "monitor" },
  entity_id: { description: "only entries about this record (with entity_type, one record)", example: EXAMPLE_ENTRY.entity_id },
  limit: { description: `most entries in the answer, 1 to 1000 (default ${DEFAULT_LIMIT}); the total is in the X-Total-Count header`, example: 50 },
  offset: { description: "entries skipped before the first one answered (default 0)", example: 0 },
};

const instant = (value: string | undefined, field: "from" | "to"): number | null => {
  if (value === undefined || value === "") return null;
  const ms = parseIsoDate(value);
  if (ms === undefined) throw new DomainError(400, MSG.invalidDateFormat, field);
  return ms;
};

const lower = (value: string | undefined): string | null => (value === undefined || value === "" ? null : value.toLowerCase());

function userOf(ctx: Context<unknown, Partial<RequestMeta>>) {
  const user = ctx.meta.user;
  if (!user) throw new DomainError(401, MSG.invalidCredentials);
  return user;
}

export const auditActions: ConfigActions = {
  "audit.list": {
    http: {
      routes: ["GET /_config/audit"],
      group: "audit",
      summary: "Read the audit trail",
      description:
        "Every change made through the API (creates, updates, deletes, actions, acknowledgements, shelving, failed sign-ins, password resets, tokens), " +
        "newest first, with who made it, when, from where and what changed. A SaaS admin reads every entry, a site admin its site's; anyone else is refused.",
      fields: FILTER_FIELDS,
      answer: { schema: "$AuditEntry[]", example: [EXAMPLE_ENTRY] },
      errors: [[400, MSG.excessInputs], [400, MSG.invalidDateFormat], [400, MSG.invalidInput("<field>")], [403, MSG.unauthorizedOperation]],
    },
    params: {
      from: optText,
      to: optText,
      actor: optText,
      entity_type: optText,
      entity_id: optText,
      limit: { type: "number", integer: true, min: 1, max: 1000, convert: true, optional: true },
      offset: { type: "number", integer: true, min: 0, convert: true, optional: true },
      $$messages: list,
    },
    async handler(ctx: Context<ListParams, Partial<RequestMeta>>): Promise<AuditView[]> {
      const scope = auditScope(userOf(ctx));
      const p = ctx.params;
      const from = instant(p.from, "from");
      const to = instant(p.to, "to");
      if (from !== null && to !== null && from > to) throw new DomainError(400, MSG.invalidInput("from"), "from");
      const { total, rows } = await repo.listEntries(
        this.db,
        { from, to, actor: lower(p.actor), entity_type: lower(p.entity_type), entity_id: lower(p.entity_id), site_id: scope.site_id },
        { limit: p.limit ?? DEFAULT_LIMIT, offset: p.offset ?? 0 },
      );
      setTotal(ctx, total);
      return rows.map(auditView);
    },
  },

  "audit.verify": {
    http: {
      routes: ["GET /_config/audit/_verify"],
      group: "audit",
      summary: "Check the audit trail's hash chain",
      description:
        "Walks the whole log in order and checks that each entry's hash is that of its content and of the entry before it: " +
        "an entry changed or removed by hand in the database is found. SaaS admins only.",
      answer: { schema: "$AuditVerify", example: { ok: true, entries: 1284, first_bad_id: null } },
      errors: [[400, MSG.excessInputs], [403, MSG.unauthorizedOperation]],
    },
    params: { $$messages: list },
    async handler(ctx: Context<unknown, Partial<RequestMeta>>) {
      requireVerifier(userOf(ctx));
      let walk = startWalk();
      let after = 0;
      for (;;) {
        const rows = await repo.rowsAfter(this.db, after, VERIFY_BATCH);
        for (const row of rows) walk = walkRow(walk, row);
        if (rows.length < VERIFY_BATCH) break;
        after = Number(rows[rows.length - 1]!.id);
      }
      return { ok: walk.firstBadId === null, entries: walk.entries, first_bad_id: walk.firstBadId };
    },
  },
};

/**
 * Appends entries as they come, many in one transaction: the entries of one message (a drain's
 * batch) go in together, never split; a single entry (a message from before batches, or a test)
 * waits GATHER_MS for others; and whatever arrives while one append is being written waits for
 * the next, which takes it all (a message is acked only once its entries are in).
 */
export class AuditAppender {
  private queue: { entries: AuditEntry[]; done: (err?: unknown) => void }[] = [];
  private running = false;

  constructor(private readonly db: () => DataSource) {}

  append(entries: AuditEntry | AuditEntry[]): Promise<void> {
    const list = Array.isArray(entries) ? entries : [entries];
    return new Promise((resolve, reject) => {
      this.queue.push({ entries: list, done: (err) => (err === undefined ? resolve() : reject(err)) });
      if (!this.running) {
        this.running = true;
        setTimeout(() => void this.drain(), list.length > 1 ? 0 : GATHER_MS);
      }
    });
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length) {
        // Whole messages, at least one, up to APPEND_BATCH entries when there are several.
        let n = 0;
        let size = 0;
        do size += this.queue[n++]!.entries.length;
        while (n < this.queue.length && size + this.queue[n]!.entries.length <= APPEND_BATCH);
        const batch = this.queue.splice(0, n);
        try {
          await repo.appendEntries(this.db(), batch.flatMap((b) => b.entries));
          for (const b of batch) b.done();
        } catch (err) {
          for (const b of batch) b.done(err ?? new Error("audit append failed"));
        }
      }
    } finally {
      this.running = false;
    }
  }
}

/**
 * The `audit` stream, read by this service's replicas as the group "config". A message is a
 * producer's batch, the array of the entries one outbox drain took (lib/streams/outbox.ts,
 * batchMessages), under one key, so batches come one at a time in the order published; or one
 * entry, keyed by its entity, as producers published before batches. An entry is never given up
 * on (a lost entry would be a hole in the trail): a failing append is retried, holding its
 * partition back, until the database takes it. A batch delivered again appends nothing twice
 * (appendEntries passes over the entry ids it has).
 */
export const AUDIT_STREAM_CONSUMER: StreamConsumers<ConfigThis, AuditStreams> = {
  audit: {
    group: "config",
    concurrency: 16,
    maxDeliveries: Infinity,
    handler(data, message) {
      // Typed as one entry (what producers stage), delivered as an array when batched.
      const delivered: unknown = data;
      if (!Array.isArray(delivered)) return this.auditLog.append(normalizeEntry(delivered, message.id));
      return this.auditLog.append(delivered.map((d: unknown, i) => normalizeEntry(d, `${message.id}#${i}`)));
    },
  },
};
