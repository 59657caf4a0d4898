/** What production refuses to start without: readConfig is the one place settings are read. */
import { readConfig } from "../../../lib/config";

const production = { NODE_ENV: "production", ADMIN_PASSWORD: "Str0ng-Passw0rd!", DATABASE_URL: "postgres://ims@db/ims", SECRETS_KEY: "ab".repeat(32) };

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

  it("refuses to start pipelines without SECRETS_KEY (replicas must open each other's secrets), and takes only a 32-byte key", () => {
    const { SECRETS_KEY: _omitted, ...env } = production;
    expect(() => readConfig(env)).toThrow("SECRETS_KEY is required when NODE_ENV=production");
    expect(readConfig({ ...env, SERVICES: "api,auth,config" }).secretsKey).toBeUndefined();
    expect(() => readConfig({ SECRETS_KEY: "too-short" })).toThrow("SECRETS_KEY must be 32 bytes, as base64 or 64 hex digits");
  });

  it("reads SOURCE_ALLOW and INGEST_KEY_GRACE_S, refusing a malformed entry", () => {
    expect(readConfig({}).sourceAllow).toBe("");
    expect(readConfig({}).ingestKeyGraceS).toBe(3600);
    expect(readConfig({ SOURCE_ALLOW: "127.0.0.1:3306,10.0.0.0/8", INGEST_KEY_GRACE_S: "5" })).toMatchObject({ sourceAllow: "127.0.0.1:3306,10.0.0.0/8", ingestKeyGraceS: 5 });
    expect(() => readConfig({ SOURCE_ALLOW: "10.0.0.0/99" })).toThrow(/SOURCE_ALLOW/);
  });

  it("uses the embedded defaults outside production", () => {
    expect(readConfig({}).databaseUrl).toBeUndefined();
  });
});

describe("readConfig of the stream replicas", () => {
  it("keeps one copy of each stream unless told, and takes 1 to 5", () => {
    expect(readConfig({}).streamReplicas).toBe(1);
    expect(readConfig({ STREAM_REPLICAS: "3" }).streamReplicas).toBe(3);
    expect(readConfig({ STREAM_REPLICAS: "5" }).streamReplicas).toBe(5);
  });

  it("refuses a count JetStream does not take", () => {
    for (const bad of ["0", "6", "1.5", "three"]) {
      expect(() => readConfig({ STREAM_REPLICAS: bad })).toThrow(`STREAM_REPLICAS must be an integer from 1 to 5, got "${bad}"`);
    }
  });
});

describe("readConfig of the stream partitions", () => {
  it("keeps 16 partitions unless told, and takes 1 to 1024", () => {
    expect(readConfig({}).streamPartitions).toBe(16);
    expect(readConfig({ STREAM_PARTITIONS: "1" }).streamPartitions).toBe(1);
    expect(readConfig({ STREAM_PARTITIONS: "1024" }).streamPartitions).toBe(1024);
  });

  it("refuses a count that every process could not agree on sensibly", () => {
    for (const bad of ["0", "1025", "2.5", "many"]) {
      expect(() => readConfig({ STREAM_PARTITIONS: bad })).toThrow(`STREAM_PARTITIONS must be an integer from 1 to 1024, got "${bad}"`);
    }
  });

  it("matches bearing frequencies within 3% unless BEARING_MATCH_TOLERANCE says otherwise (0.1 to 20 percent)", () => {
    expect(readConfig({}).bearingMatchTolerancePct).toBe(3);
    expect(readConfig({ BEARING_MATCH_TOLERANCE: "4.5" }).bearingMatchTolerancePct).toBe(4.5);
    for (const bad of ["0", "25", "wide"]) {
      expect(() => readConfig({ BEARING_MATCH_TOLERANCE: bad })).toThrow(`BEARING_MATCH_TOLERANCE must be a number from 0.1 to 20, got "${bad}"`);
    }
  });
});
