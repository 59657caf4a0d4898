/** The spec's texts for the alerting service, word for word (watchers, alerts, errors). */
export const MSG = {
  // Watchers (ops 1-6)
  watcherCreated: (id: string) => `Successfully created watcher with ID ${id}.`,
  watcherDeleted: (id: string) => `Successfully deleted watcher with ID ${id}.`,
  watcherUpdated: (id: string) => `Successfully updated watcher with ID ${id}.`,
  // The create and update texts differ in the spec; both are kept as written.
  watcherExistsOnCreate: "Watcher already exists for a given Gateway",
  watcherExistsOnUpdate: "Watcher already exists for given IoT Gateway",
  noMedium: "Please provide at least one notification medium (SMS, Email, or WhatsApp) for the selected user(s).",
  noUserOnCreate: "Select at least one user to notify",
  noUserOnUpdate: "Please select at least one user to notify",
  invalidWatcherId: "Invalid Watcher ID",
  invalidFunctionId: "Invalid function_id",

  // Alerts (ops 7-10)
  functionDoesNotExist: "Function does not exist",
  errorOccurred: "Error occurred",
  noteAdded: "Note added",
  // Add note's only error in the spec; also what an unknown (or out-of-scope) alert answers.
  somethingWentWrong: "Something went wrong",

  // Alarm KPIs (docs/api-tour.md, "Alarm management"): a plant or site unknown or outside the
  // caller's scope, in the words of the function's text (ours; the alert list and count answer the
  // same).
  plantDoesNotExist: "Plant does not exist",
  siteDoesNotExist: "Site does not exist",
  invalidDateFormat: "Invalid date format",

  // Alarm management (docs/api-tour.md): the alert lifecycle
  invalidAlertId: (id: string) => `Invalid Alert ID: ${id}`,
  invalidUser: (username: string) => `Invalid user: ${username}`,
  alertAcknowledged: "Alert acknowledged",
  alertShelved: "Alert shelved",
  alertUnshelved: "Alert unshelved",
  alertAssigned: "Alert assigned",

  // Alarm management (docs/api-tour.md): maintenance windows of a watcher
  invalidSuppressionId: (id: string) => `Invalid Suppression ID: ${id}`,
  suppressionRemoved: "Suppression removed",

  // Common
  // A call without a signed-in user on an operation of one (the gateway's own words).
  invalidCredentials: "Invalid credentials",
  insufficientInputs: "Insufficient inputs",
  excessInputs: "Excess inputs",
  unauthorizedOperation: "Unauthorized operation",
  invalidInput: (field: string) => `Invalid input: ${field}`,
} as const;
