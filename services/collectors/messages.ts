/** The texts of the collectors service: the causes a pipeline's latest action shows, and its log lines (docs/collectors.md). */
export const MSG = {
  // Causes, in a failed collection's `last_actions` item (`error`)
  failedToConnect: "Failed to connect to DB",
  failedToRead: (why: string) => `Failed to read from DB: ${why}`,
  invalidSetting: (name: string) => `Invalid settings: ${name}`,

  // Log
  collecting: (pipeline_id: string, subtype: string) => `Collecting pipeline ${pipeline_id} (${subtype})`,
  letGo: (pipeline_id: string) => `Pipeline ${pipeline_id} let go`,
  sourceRefused: (pipeline_id: string, where: string, why: string) => `Pipeline ${pipeline_id}: source ${where} refused (${why})`,
  sourceFailed: (pipeline_id: string, where: string, code: string) => `Pipeline ${pipeline_id}: source ${where} failed (${code})`,
  notStored: (pipeline_id: string, why: string) => `Pipeline ${pipeline_id}: page not stored (${why}); read again shortly`,
  leasesNotTaken: (why: string) => `Collectors: pipelines not listed or leases not taken (${why}); tried again shortly`,
  heldDropped: (pipeline_id: string, count: number) => `Pipeline ${pipeline_id}: ${count} OPC-UA values not taken by the pipelines service for too long are dropped`,
  kindUnavailable: (subtype: string) => `Collectors: ${subtype} pipelines are not collected by this build`,
  noDatabase: "Collectors: no DATABASE_URL to hold the pipelines' leases on; nothing is collected by this process",
} as const;
