/**
 * Users for tests that need callers of every type (the cross-tenant matrix). Written straight
 * into the auth service's table of the test database, with a real argon2 hash, so the gateway
 * authenticates them exactly as it does users created through the API.
 */
import argon2 from "argon2";
import { Client } from "pg";
import type { ModuleName, UserType } from "../../lib/access";

export interface TestUser {
  username: string;
  password: string;
  user_type: UserType;
  site_id?: string | null;
  plant_id?: string | null;
  modules?: ModuleName[];
}

export const ALL_MODULES: ModuleName[] = ["Configuration", "Alerting", "Condition Monitoring", "Energy Monitoring", "Notebooks"];

export async function insertUsers(databaseUrl: string, users: TestUser[]): Promise<void> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    for (const u of users) {
      await client.query(
        `INSERT INTO auth.users (username, password_hash, user_type, site_id, plant_id, mobile_number, country_code, modules, created_at)
         VALUES ($1, $2, $3, $4, $5, '5550100', '+1', $6, $7)`,
        [
          u.username.toLowerCase(),
          await argon2.hash(u.password),
          u.user_type,
          u.site_id ?? null,
          u.user_type === "site-admin" ? "*" : (u.plant_id ?? null),
          u.modules ?? ALL_MODULES,
          Date.now(),
        ],
      );
    }
  } finally {
    await client.end();
  }
}
