/**
 * The spec's texts for the config service, word for word (the interface's text, Endpoints and
 * Errors). A text with a value in it is a function of that value.
 */
export const MSG = {
  // Sites (ops 28-32)
  siteDeleted: "Site deleted successfully",
  siteUpdated: "Site updated successfully",
  siteExists: (name: string) => `Site with name ${name} already exists. Please choose a different name.`,
  siteCreateError: "Error occurred during Site creation",
  siteLatLong: "Either of latitude or longitude has to be specified",
  invalidSiteId: (id: string) => `Invalid Site ID: ${id}`,
  siteHasPlants: "Cannot delete Site as Plants exist on it",
  invalidSite: "Invalid Site",

  // Plants (ops 33-37)
  plantDeleted: "Plant deleted successfully",
  plantUpdated: "Plant updated successfully",
  plantExists: (name: string) => `Plant with name ${name} already exists.`,
  invalidPlantId: (id: string) => `Invalid Plant ID: ${id}`,
  plantHasEvents: "Cannot delete Plant as Events exist on it",
  plantHasPipelines: "Cannot delete Plant as Pipelines exist on it",
  plantHasAssets: "Cannot delete Plant as Assets exist on it",
  plantHasFunctions: "Cannot delete Plant as Functions exist on it",

  // Functions (ops 23-27)
  functionDeleted: "Function deleted successfully",
  functionUpdated: "Function updated successfully",
  functionExists: (name: string) => `Function with name ${name} already exists`,
  invalidFunctionId: (id: string) => `Invalid Function ID: ${id}`,
  invalidFunction: "Invalid Function",
  functionNotFound: "Data not found",
  functionHasMonitors: "Cannot delete Function as Monitors are attached",
  functionHasAssets: "Cannot delete Function as Assets are attached",
  functionHasBoth: "Cannot delete Function as Monitors and Assets are attached",

  // Assets (ops 11-16)
  assetDeleted: "Asset deleted successfully",
  assetUpdated: "Asset updated successfully",
  invalidAssetData: "Invalid Asset data",
  assetExists: (name: string) => `Asset with name ${name} already exists`,
  invalidAssetId: (id: string) => `Invalid Asset ID: ${id}`,
  assetHasMonitors: "Cannot delete the Asset as Monitors are attached",

  // Monitors (ops 17-22)
  monitorDeleted: "Monitor deleted successfully",
  monitorUpdated: "Monitor updated successfully",
  monitorCreateError: "Error creating Monitor",
  monitorLimit: "Monitor creation limit reached. Verify your license status.",
  invalidKey: "Invalid key",
  monitorExists: (name: string) => `Monitor with name ${name} already exists`,
  invalidMonitorId: (id: string) => `Invalid Monitor ID: ${id}`,
  monitorRegistered: "Cannot delete Monitor as it is registered to a Pipeline",
  invalidIsRegistered: "Invalid value for is_registered",
  invalidPipelineId: (id: string) => `Invalid Pipeline ID: ${id}`,
  invalidDataType: "Invalid data_type parameter",

  // Common
  excessInputs: "Excess inputs",
  insufficientInputs: "Insufficient inputs",
  invalidInput: (field: string) => `Invalid input: ${field}`,
  unauthorizedOperation: "Unauthorized operation",
  invalidCredentials: "Invalid credentials",
  /** docs/architecture.md, Decisions: a from/to that does not parse (the audit trail). */
  invalidDateFormat: "Invalid date format",
  /** The gateway's answer to a method a path does not serve; the spec lists it for the fetches of a monitor, function, site and plant. */
  methodNotAllowed: "This method is not allowed",
} as const;
