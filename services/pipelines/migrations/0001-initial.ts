import { OUTBOX_SQL } from "../../../lib/streams/outbox";
import { sqlMigration } from "../../../mixins/db.mixin";

/*
 * Pipelines and what hangs off them. Site and plant are copied onto the pipeline (they belong to
 * the config service): scope checks and the retention job read them without a call.
 */
export const initial = sqlMigration("PipelinesInitial1764000000000", [
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
]);
