/** The spec's texts for the pipelines service, word for word (the interface's text ops 46-57, Errors), and the ingestion API's own. */
export const MSG = {
  // Third-party pipelines (ops 46-49)
  pipelineDeleted: "Pipeline deleted successfully",
  pipelineUpdated: "Pipeline updated successfully",
  invalidPipelineId: (id: string) => `Invalid Pipeline ID: ${id}`,
  pipelineCreateError: "Error occurred while creating the Pipeline",
  pipelineDeleteError: "Error occurred while deleting the Pipeline",
  pipelineUpdateError: "Error occurred while updating the Pipeline",
  pipelineFetchError: "Error occurred while fetching the Pipeline details",

  // Edge-server pipelines (ops 50-53)
  gatewayDeleted: "Gateway deleted successfully",
  gatewayUpdated: "Gateway updated successfully",
  invalidGatewayId: (id: string) => `Invalid Gateway ID: ${id}`,
  macInUse: (id: string) => `This MAC address is already registered with another gateway (ID: ${id})`,
  monitorInAnotherGateway: "Monitor already registered in another gateway",
  invalidInputKey: "Invalid input key",
  insufficientInput: (key: string) => `Insufficient input: ${key}`,
  gatewayCreateError: "Error creating gateway",
  sqlOnlyProduction: "SQL gateway only supports Production data type",
  invalidRegistration: "Invalid input registration",

  // Both kinds
  invalidPlantId: (id: string) => `Invalid Plant ID: ${id}`,
  invalidFunctionId: (id: string) => `Invalid Function ID: ${id}`,
  invalidInput: (field: string) => `Invalid input: ${field}`,
  invalidSiteId: (id: string) => `Invalid Site ID: ${id}`,
  insufficientInputs: "Insufficient inputs",

  // A tag's history and export (docs/api-tour.md, "Looking back"), with the CM operations' own texts
  invalidMonitorId: "Invalid Monitor Id",
  invalidTag: "Invalid tag",
  insufficientDates: "Insufficient date inputs",
  invalidDateFormat: "Invalid date format",
  excessInputs: "Excess inputs",
  /** What an edge pipeline's update, delete or fetch answers on a fault (the spec names none). */
  internalError: "Internal error",
  unauthorizedOperation: "Unauthorized operation",
  // A call without a signed-in caller (the gateway's text; its routes always sign one in).
  invalidCredentials: "Invalid credentials",

  // Actions (op 56)
  actionQueued: "Action is being queued",
  somethingWentWrong: "Something went wrong",

  // SQL connect (op 57)
  missingParameters: (names: string[]) => `Missing parameters: ${names.join(", ")}`,
  failedToConnect: "Failed to connect to DB",
  ignoreTypeNotList: "ignore_type must be a list",

  // Ingestion API
  invalidIngestKey: "Invalid ingest key",
  heartbeatRecorded: "Heartbeat recorded",
  actionAcknowledged: "Action acknowledged",
  invalidActionId: (id: string) => `Invalid Action ID: ${id}`,
  actionNotPending: "Action is not in progress",
  monitorNotMapped: "Monitor not mapped to this pipeline",
  tagNotMapped: "Tag not mapped to this monitor",
  readingTooOld: "Reading older than the site's retention period",
  readingInFuture: "Reading time is in the future",
  waveformInFuture: "Waveform time is in the future",
  heartbeatInFuture: "Heartbeat time is in the future",
  tooManyReadings: "Too many readings: at most 10000 a request",

  // Idempotent ingestion (docs/api-tour.md, "Retries"); a key that is not 1-255 printable characters is `Invalid input: Idempotency-Key`
  idempotencyKeyReused: "Idempotency key reused with a different body",
  idempotencyInProgress: "Request with this Idempotency-Key is in progress",

  // Collections (docs/collectors.md): a page whose position another collector or a user moved
  collectionMoved: "Collection position moved",
} as const;
