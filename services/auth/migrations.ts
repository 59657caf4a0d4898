import { OUTBOX_KEY_SQL, OUTBOX_SQL } from "../../lib/streams/outbox";
import { sqlMigration } from "../../mixins/db.mixin";

export const migrations = [
  sqlMigration("AuthInit1763800000000", [
    `CREATE TABLE users (
       username       text PRIMARY KEY,
       password_hash  text NOT NULL,
       user_type      text NOT NULL,
       site_id        text NULL,
       plant_id       text NULL,
       mobile_number  text NOT NULL DEFAULT '',
       country_code   text NOT NULL DEFAULT '',
       modules        text[] NOT NULL DEFAULT '{}',
       created_at     bigint NOT NULL,
       last_login_time bigint NULL,
       reserved       boolean NOT NULL DEFAULT false,
       hidden         boolean NOT NULL DEFAULT false
     )`,
    `CREATE INDEX users_site_plant ON users (site_id, plant_id)`,
    `CREATE TABLE otps (
       username    text PRIMARY KEY REFERENCES users(username) ON DELETE CASCADE,
       otp_hash    text NOT NULL,
       expires_at  bigint NOT NULL,
       attempts    integer NOT NULL DEFAULT 0,
       verified    boolean NOT NULL DEFAULT false
     )`,
  ]),
  // API tokens: only the SHA-256 of a token is kept (tokens.ts says why not argon2); a user's tokens go with the user.
  sqlMigration("AuthTokensB1767000000200", [
    `CREATE TABLE tokens (
       token_id      uuid PRIMARY KEY,
       username      text NOT NULL REFERENCES users(username) ON DELETE CASCADE,
       name          text NOT NULL,
       scope         text NOT NULL CHECK (scope IN ('read', 'write')),
       token_hash    text NOT NULL UNIQUE,
       created_at    bigint NOT NULL,
       expires_at    bigint NOT NULL,
       last_used_at  bigint NULL
     )`,
    `CREATE INDEX tokens_username ON tokens (username, created_at)`,
  ]),
  // the audit trail: the outbox auth stages its audit entries in (lib/audit.ts).
  sqlMigration("AuthAuditOutbox1767000000300", [...OUTBOX_SQL, ...OUTBOX_KEY_SQL]),
  // who issued a token (an admin may issue one for another user): its actions are audited `via_token_of` them.
  sqlMigration("AuthTokenIssuer1767250000000", [`ALTER TABLE tokens ADD COLUMN issued_by text NULL`]),
  // Notebook runs read the API with a read token of their owner, made for the run (run-tokens.actions.ts); the list leaves them out.
  sqlMigration("AuthRunTokens1768000000100", [`ALTER TABLE tokens ADD COLUMN purpose text NULL`]),
];
