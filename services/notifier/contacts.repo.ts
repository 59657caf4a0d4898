/**
 * The SQL of the notifier's copy of the users' contacts (tables `contacts` and
 * `contacts_coverage`, migrations/0003-contacts.ts).
 */
import type { DataSource, EntityManager } from "typeorm";
import { removeUnlisted, type AnnouncedRange, type CopyTable } from "../../lib/announcements";
import type { UserContact } from "../auth/contract";

type Queryable = DataSource | EntityManager;

const CONTACTS: CopyTable = { table: "contacts", key: "username", type: "text" };

/** A contact as kept: lower-case name, the time of what told it. */
export interface ContactRow extends UserContact {
  at: number;
}

/** A contact as read, or the mark of a removed user. */
export type KeptContact = (UserContact & { deleted: false }) | { deleted: true };

/**
 * Each row is kept unless what is kept is newer: a later record of the name (greater
 * `created_at`) wins, and for one record the later `at`; a removed record stays removed.
 */
async function put(db: Queryable, contacts: ContactRow[]): Promise<void> {
  if (contacts.length === 0) return;
  const column = <K extends keyof ContactRow>(k: K) => contacts.map((c) => c[k]);
  await db.query(
    `INSERT INTO contacts AS c (username, user_type, site_id, plant_id, mobile_number, country_code, created_at, at)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bigint[], $8::bigint[])
     ON CONFLICT (username) DO UPDATE SET
       user_type = excluded.user_type, site_id = excluded.site_id, plant_id = excluded.plant_id,
       mobile_number = excluded.mobile_number, country_code = excluded.country_code,
       created_at = excluded.created_at, at = excluded.at, deleted = false
      WHERE c.created_at < excluded.created_at OR (NOT c.deleted AND c.created_at = excluded.created_at AND c.at <= excluded.at)`,
    [
      column("username"),
      column("user_type"),
      column("site_id"),
      column("plant_id"),
      column("mobile_number"),
      column("country_code"),
      column("created_at"),
      column("at"),
    ],
  );
}

/** `auth.user.created|updated`. */
export const changed = (db: Queryable, contact: ContactRow): Promise<void> => put(db, [contact]);

/** `auth.user.removed`: that record (or an older one of the name) is marked removed, known or not, so that its late events are refused. */
export async function removed(db: Queryable, r: Pick<ContactRow, "username" | "user_type" | "created_at" | "at">): Promise<void> {
  await db.query(
    `INSERT INTO contacts AS c (username, user_type, mobile_number, country_code, created_at, at, deleted) VALUES ($1, $2, '', '', $3, $4, true)
     ON CONFLICT (username) DO UPDATE SET deleted = true, created_at = excluded.created_at, at = greatest(c.at, excluded.at)
      WHERE c.created_at <= excluded.created_at`,
    [r.username, r.user_type, r.created_at, r.at],
  );
}

/**
 * One part of auth's announcement: its contacts kept (unless something newer is), the names of
 * its range it does not list gone (lib/announcements.ts, `removeUnlisted`), and the coverage
 * moved on when the part follows the last one taken; the part with no upper bound completes it.
 */
export function announced(db: DataSource, range: AnnouncedRange, contacts: ContactRow[]): Promise<void> {
  return db.transaction(async (tx) => {
    await put(tx, contacts);
    await removeUnlisted(tx, CONTACTS, range, contacts.map((c) => c.username));
    await tx.query(
      `UPDATE contacts_coverage SET cursor = $2::text, in_run = $2::text IS NOT NULL, complete = complete OR $2::text IS NULL
        WHERE $1::text IS NULL OR (in_run AND cursor = $1::text)`,
      [range.after, range.through],
    );
  });
}

/** The contact kept under that name (removed: marked so), or null when the copy has none. */
export async function find(db: Queryable, username: string): Promise<KeptContact | null> {
  const rows = (await db.query(
    `SELECT username, user_type, site_id, plant_id, mobile_number, country_code, created_at::float8 AS created_at, deleted FROM contacts WHERE username = $1`,
    [username],
  )) as (UserContact & { deleted: boolean })[];
  const row = rows[0];
  if (!row) return null;
  return row.deleted ? { deleted: true } : { ...row, deleted: false };
}

/** True once a whole announcement has arrived since the table was made. */
export async function complete(db: Queryable): Promise<boolean> {
  const rows = (await db.query(`SELECT complete FROM contacts_coverage`)) as { complete: boolean }[];
  return rows[0]?.complete === true;
}
