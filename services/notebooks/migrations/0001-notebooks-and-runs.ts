import { sqlMigration } from "../../../mixins/db.mixin";

export const notebooksAndRuns = sqlMigration("NotebooksAndRuns1763900000000", [
  /*
   * owner is the username whose folder holds the file; site_id and plant_id are the owner's
   * scope at creation, so a site or plant admin sees the notebooks of its users without asking
   * auth on every read.
   */
  `CREATE TABLE notebooks (
       notebook_id     uuid PRIMARY KEY,
       owner           text NOT NULL,
       site_id         text NULL,
       plant_id        text NULL,
       notebook_name   text NOT NULL,
       created_at      bigint NOT NULL,
       updated_at      bigint NOT NULL,
       created_by      text NOT NULL,
       updated_by      text NOT NULL,
       schedule_period text NULL,
       schedule_time   text NULL,
       schedule_until  text NULL,
       until_at        bigint NULL,
       scheduled_at    bigint NULL
     )`,
  // Two creates or renames racing for one name: the index decides, not a read before the write.
  `CREATE UNIQUE INDEX notebooks_owner_name_key ON notebooks (owner, notebook_name)`,
  `CREATE INDEX notebooks_site_plant_idx ON notebooks (site_id, plant_id)`,
  `CREATE INDEX notebooks_until_idx ON notebooks (until_at) WHERE until_at IS NOT NULL`,
  /*
   * Runs are the queue too: a replica with a free slot claims the oldest queued run with
   * FOR UPDATE SKIP LOCKED. A scheduled run carries its slot; the unique key on
   * (notebook_id, slot_time) is the lock that makes a slot run once across replicas and
   * restarts (manual runs have no slot, and NULLs never collide).
   */
  `CREATE TABLE runs (
       run_id        uuid PRIMARY KEY,
       notebook_id   uuid NOT NULL REFERENCES notebooks(notebook_id) ON DELETE CASCADE,
       module        text NOT NULL,
       requested_by  text NULL,
       slot_time     bigint NULL,
       status        text NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed')),
       error         text NULL,
       queued_at     bigint NOT NULL,
       started_at    bigint NULL,
       ended_at      bigint NULL,
       node_id       text NULL
     )`,
  `CREATE UNIQUE INDEX runs_slot_key ON runs (notebook_id, slot_time)`,
  `CREATE INDEX runs_notebook_idx ON runs (notebook_id, queued_at DESC)`,
  `CREATE INDEX runs_queued_idx ON runs (queued_at) WHERE status = 'queued'`,
]);
