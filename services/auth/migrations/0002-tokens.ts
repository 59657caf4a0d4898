import { sqlMigration } from "../../../mixins/db.mixin";

// API tokens: only the SHA-256 of a token is kept (tokens.ts says why not argon2); a user's tokens go with the user.
export const tokens = sqlMigration("AuthTokensB1767000000200", [
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
]);
