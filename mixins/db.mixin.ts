/**
 * The database mixin: one TypeORM DataSource per service, on the service's own PostgreSQL
 * schema, opened in `started` and closed in `stopped`. Migrations run on start under an
 * advisory lock, so replicas starting together never race a schema change.
 */
import type { ServiceSchema } from "moleculer";
import { DataSource, type EntitySchema, type MigrationInterface, type QueryRunner } from "typeorm";
import { config } from "../lib/config";

export interface DbMixinOptions {
  /** The PostgreSQL schema this service owns; no other service reads it. */
  schema: string;
  entities?: EntitySchema[];
  migrations: (new () => MigrationInterface)[];
  poolSize?: number;
}

/** A migration written as plain SQL statements, run in order inside the migration's transaction. */
export function sqlMigration(name: string, up: string[], down: string[] = []): new () => MigrationInterface {
  return class implements MigrationInterface {
    name = name;
    async up(qr: QueryRunner): Promise<void> {
      for (const statement of up) await qr.query(statement);
    }
    async down(qr: QueryRunner): Promise<void> {
      for (const statement of down) await qr.query(statement);
    }
  };
}

/** Creates the schema and runs its pending migrations, under the advisory lock. */
export async function migrateSchema(opts: DbMixinOptions, url = config().databaseUrl): Promise<void> {
  if (!url) throw new Error("DATABASE_URL is not set and no embedded PostgreSQL was started");
  const bootstrap = new DataSource({ type: "postgres", url, extra: { max: 1 } });
  await bootstrap.initialize();
  try {
    await bootstrap.query(`SELECT pg_advisory_lock(hashtext($1))`, [`ims:migrate:${opts.schema}`]);
    try {
      await bootstrap.query(`CREATE SCHEMA IF NOT EXISTS "${opts.schema}"`);
      const migrator = new DataSource({
        type: "postgres",
        url,
        schema: opts.schema,
        migrations: opts.migrations,
        migrationsTableName: "migrations",
        extra: { max: 1, options: `-c search_path=${opts.schema}` },
      });
      await migrator.initialize();
      try {
        await migrator.runMigrations({ transaction: "each" });
      } finally {
        await migrator.destroy();
      }
    } finally {
      await bootstrap.query(`SELECT pg_advisory_unlock(hashtext($1))`, [`ims:migrate:${opts.schema}`]);
    }
  } finally {
    await bootstrap.destroy();
  }
}

export async function openDataSource(opts: DbMixinOptions, url = config().databaseUrl): Promise<DataSource> {
  await migrateSchema(opts, url);
  const ds = new DataSource({
    type: "postgres",
    url,
    schema: opts.schema,
    entities: opts.entities ?? [],
    // Unqualified names in hand-written SQL resolve to the service's own schema.
    extra: { max: opts.poolSize ?? 10, options: `-c search_path=${opts.schema}` },
  });
  await ds.initialize();
  return ds;
}

/** Each mixin's options, so a migration-only run (MIGRATE_ONLY=1) finds a service's schema without starting it. */
const MIXIN_OPTIONS = new WeakMap<object, DbMixinOptions>();

/** The DbMixin options of a service schema (through its mixins), or undefined when it stores nothing. */
export function dbOptionsOf(schema: Partial<ServiceSchema>): DbMixinOptions | undefined {
  const own = MIXIN_OPTIONS.get(schema);
  if (own) return own;
  for (const mixin of (schema.mixins ?? []) as Partial<ServiceSchema>[]) {
    const found = dbOptionsOf(mixin);
    if (found) return found;
  }
  return undefined;
}

export function DbMixin(opts: DbMixinOptions): Partial<ServiceSchema> {
  const mixin: Partial<ServiceSchema> = {
    async started() {
      this.db = await openDataSource(opts);
    },
    async stopped() {
      const db = this.db as DataSource | undefined;
      if (db?.isInitialized) await db.destroy();
    },
  };
  MIXIN_OPTIONS.set(mixin, opts);
  return mixin;
}
