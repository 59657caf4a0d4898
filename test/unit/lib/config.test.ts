/** What production refuses to start without: readConfig is the one place settings are read. */
import { readConfig } from "../../../lib/config";

const production = { NODE_ENV: "production", ADMIN_PASSWORD: "Str0ng-Passw0rd!", DATABASE_URL: "postgres://ims@db/ims" };

describe("readConfig in production", () => {
  it("starts with a database and an admin password", () => {
    expect(readConfig(production).databaseUrl).toBe("postgres://ims@db/ims");
  });

  it("refuses to start a service with a database without DATABASE_URL (no private embedded PostgreSQL per pod)", () => {
    const { DATABASE_URL: _omitted, ...env } = production;
    expect(() => readConfig({ ...env, SERVICES: "config" })).toThrow("DATABASE_URL is required when NODE_ENV=production");
  });

  it("lets the api gateway alone run without a database", () => {
    const { DATABASE_URL: _omitted, ...env } = production;
    expect(readConfig({ ...env, SERVICES: "api" }).databaseUrl).toBeUndefined();
  });

  it("refuses to start auth without ADMIN_PASSWORD", () => {
    const { ADMIN_PASSWORD: _omitted, ...env } = production;
    expect(() => readConfig(env)).toThrow("ADMIN_PASSWORD is required when NODE_ENV=production");
  });

  it("uses the embedded defaults outside production", () => {
    expect(readConfig({}).databaseUrl).toBeUndefined();
  });
});
