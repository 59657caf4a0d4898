/** The spec's texts for the notebooks service, word for word (operations 58-66 of the interface and their errors). */
export const MSG = {
  success: "Success",
  renamed: "Rename Successful",
  saved: "Notebook saved",
  createFileError: (detail: string) => `Error occurred while creating the notebook file: ${detail}`,
  /** The spec's second create error; files here belong to the service's own user, so nothing sets ownership. */
  ownershipError: (detail: string) => `Error occurred while setting ownership of the notebook file: ${detail}`,
  idsRequired: "Notebook IDs are required",
  deleteFileError: (detail: string) => `Error occurred while deleting the notebook file: ${detail}`,
  deleteError: (detail: string) => `Error occurred during notebook deletion: ${detail}`,
  noneDeleted: "No notebooks deleted",
  notFound: "No Notebook found",
  missingNewName: "Missing new name",
  idMissing: "Notebook ID is missing",
  renameFileError: (detail: string) => `Error occurred while renaming the notebook file: ${detail}`,
  invalidId: "Notebook ID invalid.",
  retrievalError: (detail: string) => `Error occurred during notebook retrieval: ${detail}`,
  listError: (detail: string) => `Error occurred while retrieving notebook information: ${detail}`,
  countError: (detail: string) => `Error occurred while retrieving notebook metrics: ${detail}`,
  runIdsRequired: "Notebook ID(s) are required",
  executionError: (detail: string) => `Error occurred during notebook execution: ${detail}`,
  requestError: (detail: string) => `Error occurred during request processing: ${detail}`,
  excessInputs: "Excess inputs",
  /** Contract: a required input missing where the spec names no message of its own (run's `module`). */
  insufficientInputs: "Insufficient inputs",
  /** Contract: a value of the wrong type or outside its enumeration. */
  invalidInput: (field: string) => `Invalid input: ${field}`,
  /** Contract: run without a kernel on the machine, 500. */
  runtimeMissing: "Jupyter runtime not available",
  /** A machine that cannot sandbox a run never runs it unconfined (docs/security.md, Notebooks): 500. */
  sandboxMissing: "sandbox not available",
  /** An HTTP operation reached without a caller (the gateway always sends one). */
  invalidCredentials: "Invalid credentials",
} as const;

/** Details of our own inside the spec's `<detail>` slots. */
export const DETAIL = {
  notFound: (id: string) => `Notebook ${id} not found`,
  nameExists: (name: string) => `A notebook named ${name} already exists`,
  badUntil: "until must be a date and time YYYY-MM-DD HH:MM (UTC)",
  badTime: "time must be HH:MM (UTC)",
  badPeriod: "period must be a day of the week",
  timeLimit: (s: number) => `time limit of ${s} s exceeded`,
  memoryLimit: (mb: number) => `memory limit of ${mb} MB exceeded`,
  ownerGone: "The notebook's owner no longer exists",
  interrupted: "The run was interrupted: the replica running it stopped",
} as const;
