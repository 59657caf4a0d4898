import { sqlMigration } from "../../../mixins/db.mixin";

export const init = sqlMigration("AuthInit1763800000000", [
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
]);
