import { sqlMigration } from "../../../mixins/db.mixin";

export const spectraLatestEvents = sqlMigration("CmSpectraLatestEvents1763810000000", [
  // One row a capture: the spectrum as float32 bytes, its peaks as found at ingestion.
  `CREATE TABLE spectra (
       monitor_id      uuid NOT NULL,
       tag             text NOT NULL,
       axis            text NOT NULL,
       ts              bigint NOT NULL,
       sample_rate_hz  double precision NOT NULL,
       samples         integer NOT NULL,
       df              double precision NOT NULL,
       amplitudes      bytea NOT NULL,
       peaks           jsonb NOT NULL,
       created_at      bigint NOT NULL,
       PRIMARY KEY (monitor_id, ts, tag, axis)
     )`,
  `CREATE INDEX spectra_latest ON spectra (monitor_id, tag, axis, ts DESC)`,
  // The latest value of each tag; asset_id is config's, kept to evaluate an asset's status.
  `CREATE TABLE latest_values (
       monitor_id  uuid NOT NULL,
       tag_id      text NOT NULL,
       ts          bigint NOT NULL,
       value       double precision NOT NULL,
       asset_id    uuid NULL,
       PRIMARY KEY (monitor_id, tag_id)
     )`,
  `CREATE INDEX latest_values_asset ON latest_values (asset_id)`,
  `CREATE TABLE events (
       event_id        uuid PRIMARY KEY,
       asset_id        uuid NOT NULL,
       event_start     bigint NOT NULL,
       event_severity  integer NOT NULL,
       event_status    text NOT NULL,
       event_label     text NOT NULL,
       event_assignee  text NOT NULL DEFAULT '',
       closed_at       bigint NULL
     )`,
  // At most one open event an asset, however many replicas evaluate it.
  `CREATE UNIQUE INDEX events_open_asset ON events (asset_id) WHERE closed_at IS NULL`,
]);
