import { sqlMigration } from "../../../mixins/db.mixin";

/*
 * The notifier's copy of the users' contacts, kept from auth's events and announcements
 * (contacts.ts), so that an alert's notice goes out while auth is away. A removed user stays as a
 * row marked deleted, with its record's `created_at`, so that a late event of that record cannot
 * bring it back while a later user of the same name can come. `contacts_coverage` (one row) says
 * whether a whole announcement has arrived since this table was made: until then a name the copy
 * does not know may be a user not yet told, and its notice waits.
 */
export const contacts = sqlMigration("NotifierContacts1767400000000", [
  `CREATE TABLE contacts (
       username       text PRIMARY KEY,
       user_type      text NOT NULL,
       site_id        text NULL,
       plant_id       text NULL,
       mobile_number  text NOT NULL,
       country_code   text NOT NULL,
       -- epoch ms: when auth made the user's record (with the name, it tells a user from a later one)
       created_at     bigint NOT NULL,
       -- epoch ms of the event or announcement (auth's clock): an older one never overwrites a newer
       at             bigint NOT NULL,
       deleted        boolean NOT NULL DEFAULT false
     )`,
  `CREATE TABLE contacts_coverage (
       one       boolean PRIMARY KEY DEFAULT true CHECK (one),
       -- the last part of the announcement under way taken in order (its "through")
       cursor    text NULL,
       in_run    boolean NOT NULL DEFAULT false,
       complete  boolean NOT NULL DEFAULT false
     )`,
  `INSERT INTO contacts_coverage DEFAULT VALUES`,
]);
