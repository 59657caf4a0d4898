import { OUTBOX_KEY_SQL, OUTBOX_SQL } from "../../lib/streams/outbox";
import { sqlMigration } from "../../mixins/db.mixin";
import { PipelinesSealSecrets1767250000000 } from "./settings";

export const migrations = [
  /*
   * Pipelines and what hangs off them. Site and plant are copied onto the pipeline (they belong to
   * the config service): scope checks and the retention job read them without a call.
   */
  sqlMigration("PipelinesInitial1764000000000", [
    `CREATE TABLE pipelines (
       pipeline_id          uuid PRIMARY KEY,
       kind                 text NOT NULL CHECK (kind IN ('thirdparty', 'edge')),
       pipeline_name        text NOT NULL,
       site_id              uuid NOT NULL,
       plant_id             uuid NOT NULL,
       function_id          uuid NULL,
       data_type            text NOT NULL,
       data_source          text NOT NULL,
       data_source_subtype  text NOT NULL,
       settings             jsonb NOT NULL DEFAULT '{}'::jsonb,
       tags                 jsonb NOT NULL DEFAULT '[]'::jsonb,
       registration         jsonb NOT NULL DEFAULT '[]'::jsonb,
       function_enabled_in_registration boolean NOT NULL DEFAULT false,
       gateway_firmware     jsonb NOT NULL DEFAULT '{}'::jsonb,
       firmware_update      integer NOT NULL DEFAULT 0,
       data_directory       text NOT NULL DEFAULT '',
       mac_address          text NOT NULL,
       status               text NOT NULL DEFAULT 'stopped',
       ingest_key_hash      bytea NOT NULL,
       heart_beats          jsonb NOT NULL DEFAULT '{}'::jsonb,
       total_events         bigint NOT NULL DEFAULT 0,
       latest_event         jsonb NOT NULL DEFAULT '[]'::jsonb,
       created_at           bigint NOT NULL
     )`,
    `CREATE UNIQUE INDEX pipelines_ingest_key ON pipelines (ingest_key_hash)`,
    // The spec's MAC message belongs to edge gateways: one physical gateway, one pipeline.
    `CREATE UNIQUE INDEX pipelines_edge_mac ON pipelines (lower(mac_address)) WHERE kind = 'edge'`,
    `CREATE INDEX pipelines_plant ON pipelines (plant_id)`,
    `CREATE INDEX pipelines_function ON pipelines (function_id)`,
    // A monitor is registered to one pipeline at most: the primary key decides a race of two creates.
    `CREATE TABLE registrations (
       monitor_id   uuid PRIMARY KEY,
       pipeline_id  uuid NOT NULL REFERENCES pipelines(pipeline_id) ON DELETE CASCADE,
       slave_id     text NULL
     )`,
    `CREATE INDEX registrations_pipeline ON registrations (pipeline_id)`,
    `CREATE TABLE pipeline_actions (
       action_id     uuid PRIMARY KEY,
       pipeline_id   uuid NOT NULL REFERENCES pipelines(pipeline_id) ON DELETE CASCADE,
       action        text NOT NULL CHECK (action IN ('start', 'stop')),
       status        text NOT NULL CHECK (status IN ('in_progress', 'completed', 'failed')),
       issued_at     bigint NOT NULL,
       completed_at  bigint NULL
     )`,
    `CREATE UNIQUE INDEX pipeline_actions_pending ON pipeline_actions (pipeline_id) WHERE status = 'in_progress'`,
    `CREATE INDEX pipeline_actions_recent ON pipeline_actions (pipeline_id, issued_at DESC)`,
    `CREATE INDEX pipeline_actions_due ON pipeline_actions (issued_at) WHERE status = 'in_progress'`,
    /*
     * Raw readings, partitioned by day (UTC). Partitions are made ahead by the daily job and on
     * demand for a backfilled day; retention drops whole days where every site allows it.
     */
    `CREATE TABLE readings (
       ts           timestamptz NOT NULL,
       pipeline_id  uuid NOT NULL,
       site_id      uuid NOT NULL,
       monitor_id   uuid NOT NULL,
       tag_id       text NOT NULL,
       value        double precision NOT NULL,
       batch_id     uuid NOT NULL,
       idx          integer NOT NULL
     ) PARTITION BY RANGE (ts)`,
    `CREATE INDEX readings_monitor_ts ON readings (monitor_id, ts)`,
    `CREATE TABLE waveforms (
       waveform_id     uuid PRIMARY KEY,
       pipeline_id     uuid NOT NULL,
       site_id         uuid NOT NULL,
       monitor_id      uuid NOT NULL,
       tag             text NOT NULL,
       axis            text NOT NULL,
       ts              bigint NOT NULL,
       sample_rate_hz  double precision NOT NULL,
       samples         float8[] NOT NULL,
       created_at      bigint NOT NULL
     )`,
    `CREATE INDEX waveforms_monitor_ts ON waveforms (monitor_id, ts)`,
    `CREATE INDEX waveforms_site_ts ON waveforms (site_id, ts)`,
    // Every site that ever had a pipeline: the retention job's list, kept when pipelines go.
    `CREATE TABLE retention_sites (site_id uuid PRIMARY KEY)`,
    // Once-a-day jobs claim their run with a guarded update of this row.
    `CREATE TABLE jobs (name text PRIMARY KEY, last_run bigint NOT NULL DEFAULT 0)`,
    `INSERT INTO jobs (name) VALUES ('retention')`,
    ...OUTBOX_SQL,
  ]),
  // Stream messages carry their pipeline as key: a pipeline's batches reach consumers in order.
  sqlMigration("PipelinesOutboxKey1765000000000", OUTBOX_KEY_SQL),
  // A tag's history at any zoom (history.ts): per tag, minute and hour, the readings' count, sum
  // and extremes. The readings stored before this migration are folded here, in one pass.
  sqlMigration("PipelinesHistoryRollups1766000000800", [
    ...["reading_minutes", "reading_hours"].flatMap((table) => [
      `CREATE TABLE ${table} (
         monitor_id  uuid    NOT NULL,
         tag_id      text    NOT NULL,
         start       bigint  NOT NULL,
         site_id     uuid    NOT NULL,
         n           integer NOT NULL,
         sum         double precision NOT NULL,
         min         double precision NOT NULL,
         max         double precision NOT NULL,
         PRIMARY KEY (monitor_id, tag_id, start)
       )`,
      `CREATE INDEX ${table}_site ON ${table} (site_id, start)`,
    ]),
    `CREATE TABLE rolled_batches (
       batch_id   uuid   PRIMARY KEY,
       rolled_at  bigint NOT NULL
     )`,
    `CREATE INDEX rolled_batches_at ON rolled_batches (rolled_at)`,
    ...[
      ["reading_minutes", 60000],
      ["reading_hours", 3600000],
    ].map(
      ([table, size]) =>
        `INSERT INTO ${table} (monitor_id, tag_id, start, site_id, n, sum, min, max)
         SELECT monitor_id, tag_id, t - t % ${size}, min(site_id::text)::uuid, count(*), sum(value), min(value), max(value)
           FROM (SELECT monitor_id, tag_id, site_id, value, round(extract(epoch FROM ts) * 1000)::bigint AS t FROM readings) r
          GROUP BY 1, 2, 3`,
    ),
    `INSERT INTO rolled_batches (batch_id, rolled_at)
     SELECT DISTINCT batch_id, (extract(epoch FROM now()) * 1000)::bigint FROM readings`,
  ]),
  // The rollups are written with the readings, in their transaction (repo.ts insertReadings), not
  // folded from the stream: no batch claims to keep.
  sqlMigration("PipelinesHistoryInline1766000001000", [`DROP TABLE rolled_batches`]),
  // A gateway's Idempotency-Key (idempotency.ts): written in the transaction of what the request
  // stored, with its answer, so a retry of a request committed but never answered stores nothing.
  sqlMigration("PipelinesIdempotencyKeys1767000000000", [
    `CREATE TABLE idempotency_keys (
       pipeline_id  uuid   NOT NULL REFERENCES pipelines(pipeline_id) ON DELETE CASCADE,
       key          text   NOT NULL,
       fingerprint  bytea  NOT NULL,
       answer       text   NOT NULL,
       created_at   bigint NOT NULL,
       PRIMARY KEY (pipeline_id, key)
     )`,
    `CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at)`,
  ]),
  // The rollups' share of a batch is staged with its readings, one row a batch (its per-minute
  // partial aggregates as arrays), and folded into the minute and hour rollups by a job every
  // second (history.repo.ts): a gateway of many tags no longer updates hundreds of rollup rows in
  // every request, each waiting on the row locks of the requests before it.
  sqlMigration("PipelinesRollupPending1767100000000", [
    `CREATE TABLE rollup_pending (
       batch_id     uuid    PRIMARY KEY,
       site_id      uuid    NOT NULL,
       monitor_ids  uuid[]  NOT NULL,
       tag_ids      text[]  NOT NULL,
       starts       bigint[] NOT NULL,
       ns           integer[] NOT NULL,
       sums         double precision[] NOT NULL,
       mins         double precision[] NOT NULL,
       maxes        double precision[] NOT NULL
     )`,
    // A row is read once and deleted within a second: compressing its arrays costs more CPU than it saves.
    `ALTER TABLE rollup_pending ${["monitor_ids", "tag_ids", "starts", "ns", "sums", "mins", "maxes"].map((c) => `ALTER COLUMN ${c} SET STORAGE EXTERNAL`).join(", ")}`,
  ]),
  // A pipeline's event counter in stripes (one per database backend, so per connection): every
  // request of a busy gateway used to update the one pipelines row and wait for the previous
  // request's commit to release it. The counter is the stripes' sum, the latest event the newest stripe's.
  sqlMigration("PipelinesEventStripes1767100000100", [
    `CREATE TABLE pipeline_events (
       pipeline_id   uuid     NOT NULL REFERENCES pipelines(pipeline_id) ON DELETE CASCADE,
       stripe        smallint NOT NULL,
       total_events  bigint   NOT NULL,
       latest_event  jsonb    NOT NULL,
       latest_at     timestamptz NOT NULL,
       PRIMARY KEY (pipeline_id, stripe)
     )`,
    `INSERT INTO pipeline_events (pipeline_id, stripe, total_events, latest_event, latest_at)
     SELECT pipeline_id, 0, total_events, latest_event, now() FROM pipelines WHERE total_events > 0 OR latest_event <> '[]'::jsonb`,
    `ALTER TABLE pipelines DROP COLUMN total_events, DROP COLUMN latest_event`,
  ]),
  // secrets in settings sealed (settings.ts), and an ingest key's rotation: the key it
  // replaced keeps working until previous_key_until (epoch ms, INGEST_KEY_GRACE_S after the rotation).
  PipelinesSealSecrets1767250000000,
  sqlMigration("PipelinesKeyRotation1767250000100", [
    `ALTER TABLE pipelines ADD COLUMN previous_key_hash bytea NULL, ADD COLUMN previous_key_until bigint NULL`,
    `CREATE INDEX pipelines_previous_key ON pipelines (previous_key_hash) WHERE previous_key_hash IS NOT NULL`,
  ]),
];
