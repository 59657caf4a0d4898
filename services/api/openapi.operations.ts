/**
 * What the OpenAPI document says of each operation beyond the route table: the spec's summary,
 * query and body fields, success answer and error messages (interface-spec.md, word for word).
 * Keyed by the spec's operation number; the ingestion routes (contract) by action name.
 *
 * Fields are written `name[?][:type]`: `?` optional; type `string` (default), `integer`,
 * `number`, `boolean`, `object`, `array`, `string[]`, `enum(a|b)`, `$Schema` or `$Schema[]`.
 */

export type Answer =
  | { text: string }
  | { schema: string; example?: unknown }
  | { id: true }
  | { status: string; message: string };

export interface OperationDoc {
  summary: string;
  query?: string[];
  body?: string[];
  answer: Answer;
  errors?: [number, string][];
}

const medium = "Please provide at least one notification medium (SMS, Email, or WhatsApp) for the selected user(s).";
const watcherBody = ["watcher_name", "function_id", "plant_id", "site_id", "gateway_id", "is_enabled:enum(1|0)", "triggers:$Trigger[]"];
const range = ["from?", "to?"];
const emsRange = ["from", "to"];
const pipelineBody = [
  "pipeline_name",
  "data_type:enum(Condition|Process|Energy|Production|Others)",
  "data_source",
  "data_source_subtype",
  "site_id?",
  "plant_id?",
  "function_id?",
  "settings:object",
  "tags:array",
  "registration?:array",
  "function_enabled_in_registration?:boolean",
];
const nameExists = (what: string, field: string) => `${what} with name <${field}> already exists`;

export const OPERATION_DOCS: Record<number | string, OperationDoc> = {
  1: {
    summary: "Create a watcher",
    query: ["pipeline_id?", "is_hidden?:integer"],
    body: watcherBody,
    answer: { text: "Successfully created watcher with ID <watcher_id>." },
    errors: [[400, "Watcher already exists for a given Gateway"], [400, medium], [400, "Select at least one user to notify"]],
  },
  2: { summary: "Delete a watcher", answer: { text: "Successfully deleted watcher with ID <watcher_id>." }, errors: [[400, "Invalid Watcher ID"]] },
  3: {
    summary: "Update a watcher",
    query: ["pipeline_id?", "monitor_id?", "is_hidden?:integer"],
    body: watcherBody,
    answer: { text: "Successfully updated watcher with ID <watcher_id>." },
    errors: [[400, "Watcher already exists for given IoT Gateway"], [400, medium], [400, "Please select at least one user to notify"]],
  },
  4: { summary: "Fetch a watcher", answer: { schema: "$Watcher" } },
  5: { summary: "List the watchers of a function", query: ["function_id"], answer: { schema: "$Watcher[]" }, errors: [[400, "Invalid function_id"]] },
  6: { summary: "Count the watchers of a function", query: ["function_id"], answer: { schema: "integer", example: 3 }, errors: [[400, "Invalid function_id"]] },
  7: {
    summary: "Count alerts by severity",
    query: ["function_id", ...range],
    answer: { schema: "$AlertCount" },
    errors: [[400, "Function does not exist"], [500, "Error occurred"]],
  },
  8: {
    summary: "List alerts",
    query: ["function_id", "asset_id?", "is_hidden:integer", ...range],
    answer: { schema: "$Alert[]" },
    errors: [[400, "Function does not exist"]],
  },
  9: {
    summary: "Alert trend by severity",
    query: ["function_id?", "trigger_id?", ...range],
    answer: { schema: "$AlertTrend" },
    errors: [[400, "Function does not exist"], [500, "Error occurred"]],
  },
  10: { summary: "Add a note to an alert", body: ["note"], answer: { text: "Note added" }, errors: [[500, "Something went wrong"]] },

  11: {
    summary: "Create an asset",
    body: ["asset_name", "function_id", "plant_id?", "site_id?", "asset_category", "is_critical?:enum(yes|no)", "attributes?:$AssetAttributes"],
    answer: { id: true },
    errors: [[400, "Invalid Asset data"], [400, nameExists("Asset", "asset_name")]],
  },
  12: { summary: "Delete an asset", answer: { text: "Asset deleted successfully" }, errors: [[400, "Cannot delete the Asset as Monitors are attached"]] },
  13: {
    summary: "Update an asset",
    body: ["asset_name", "function_id", "plant_id?", "site_id?", "asset_category", "is_critical:enum(yes|no)", "attributes?:$AssetAttributes"],
    answer: { text: "Asset updated successfully" },
    errors: [[400, "Invalid Asset ID: <asset_id>"], [400, nameExists("Asset", "asset_name")]],
  },
  14: { summary: "Fetch an asset", answer: { schema: "$Asset" }, errors: [[400, "Invalid Asset ID: <asset_id>"]] },
  15: { summary: "List assets", query: ["function_id?", "asset_category?", "is_critical?:enum(Yes|No)"], answer: { schema: "$AssetListItem[]" } },
  16: { summary: "Count assets", query: ["function_id?", "asset_category?", "is_critical?:enum(Yes|No)"], answer: { schema: "integer", example: 12 } },

  17: {
    summary: "Create a monitor",
    body: ["monitor_name", "monitor_type", "function_id?", "asset_id?"],
    answer: { id: true },
    errors: [
      [400, "Error creating Monitor"],
      [400, "Monitor creation limit reached. Verify your license status."],
      [400, "Invalid key"],
      [400, nameExists("Monitor", "monitor_name")],
    ],
  },
  18: {
    summary: "Delete a monitor",
    answer: { text: "Monitor deleted successfully" },
    errors: [[400, "Cannot delete Monitor as it is registered to a Pipeline"], [400, "Invalid Monitor ID: <monitor_id>"]],
  },
  19: {
    summary: "Update a monitor",
    body: ["monitor_name", "monitor_type", "tags:$MonitorTag[]", "specs:object", "attributes:object"],
    answer: { text: "Monitor updated successfully" },
    errors: [[400, "Invalid Monitor ID: <monitor_id>"], [400, "Invalid key"], [400, nameExists("Monitor", "monitor_name")]],
  },
  20: { summary: "Fetch a monitor", answer: { schema: "$Monitor" }, errors: [[400, "Invalid Monitor ID: <monitor_id>"], [405, "This method is not allowed"]] },
  21: {
    summary: "List monitors",
    query: ["asset_id?", "function_id?", "pipeline_id?", "is_registered?:enum(yes|no)", "data_type?:enum(all|energy|condition|process)"],
    answer: { schema: "$MonitorListItem[]" },
    errors: [
      [400, "Invalid value for is_registered"],
      [400, "Invalid Pipeline ID: <pipeline_id>"],
      [400, "Excess inputs"],
      [400, "Invalid data_type parameter"],
    ],
  },
  22: { summary: "Count monitors", query: ["asset_id?", "function_id?"], answer: { schema: "integer", example: 7 }, errors: [[400, "Excess inputs"]] },

  23: {
    summary: "Create a function",
    body: ["function_name", "plant_id", "site_id?"],
    answer: { id: true },
    errors: [[400, "Invalid Plant ID: <plant_id>"], [400, nameExists("Function", "function_name")]],
  },
  24: {
    summary: "Delete a function",
    answer: { text: "Function deleted successfully" },
    errors: [
      [400, "Invalid Function ID: <function_id>"],
      [400, "Cannot delete Function as Monitors are attached"],
      [400, "Cannot delete Function as Assets are attached"],
      [400, "Cannot delete Function as Monitors and Assets are attached"],
    ],
  },
  25: {
    summary: "Update a function",
    body: ["function_name", "plant_id"],
    answer: { text: "Function updated successfully" },
    errors: [[404, "Invalid Function"], [400, nameExists("Function", "function_name")]],
  },
  26: { summary: "Fetch a function", answer: { schema: "$Function" }, errors: [[404, "Data not found"], [405, "This method is not allowed"]] },
  27: { summary: "List the functions of a plant", query: ["plant_id"], answer: { schema: "$FunctionListItem[]" } },

  28: {
    summary: "Create a site",
    body: ["site_name", "location", "edge_firmware:$Firmware", "timezone", "latitude?", "longitude?", "retention_period?:integer"],
    answer: { id: true },
    errors: [
      [400, "Site with name <site_name> already exists. Please choose a different name."],
      [400, "Error occurred during Site creation"],
      [400, "Either of latitude or longitude has to be specified"],
    ],
  },
  29: {
    summary: "Delete a site",
    answer: { text: "Site deleted successfully" },
    errors: [[400, "Invalid Site ID: <site_id>"], [400, "Cannot delete Site as Plants exist on it"]],
  },
  30: {
    summary: "Update a site",
    body: ["location", "retention_period:integer", "timezone?", "edge_firmware?:$Firmware", "latitude?", "longitude?", "site_name?"],
    answer: { text: "Site updated successfully" },
    errors: [[400, "Invalid Site"]],
  },
  31: { summary: "Fetch a site", answer: { schema: "$Site" }, errors: [[400, "Invalid Site ID: <site_id>"], [405, "This method is not allowed"]] },
  32: { summary: "List the sites", answer: { schema: "$Site[]" } },

  33: {
    summary: "Create a plant",
    body: ["plant_name", "site_id"],
    answer: { id: true },
    errors: [[400, "Invalid Site ID: <site_id>"], [400, "Plant with name <plant_name> already exists."]],
  },
  34: {
    summary: "Delete a plant",
    answer: { text: "Plant deleted successfully" },
    errors: [
      [400, "Cannot delete Plant as Events exist on it"],
      [400, "Cannot delete Plant as Pipelines exist on it"],
      [400, "Cannot delete Plant as Assets exist on it"],
      [400, "Cannot delete Plant as Functions exist on it"],
    ],
  },
  35: {
    summary: "Update a plant",
    body: ["plant_name", "site_id"],
    answer: { text: "Plant updated successfully" },
    errors: [[400, "Invalid Plant ID: <plant_id>"], [400, "Plant with name <plant_name> already exists."]],
  },
  36: { summary: "Fetch a plant", answer: { schema: "$Plant" }, errors: [[400, "Invalid Plant ID: <plant_id>"], [405, "This method is not allowed"]] },
  37: { summary: "List the plants of a site", query: ["site_id"], answer: { schema: "$PlantListItem[]" } },

  38: {
    summary: "Create a user",
    body: [
      "username",
      "mobile_number",
      "country_code",
      "user_type:enum(saas-admin|support-analyst|site-admin|plant-admin|general-user)",
      "plant_id?",
      "site_id?",
      "password?",
      "modules?:string[]",
    ],
    answer: { status: "CREATED", message: "User created successfully" },
    errors: [
      [403, "Unauthorized operation!, can't create user"],
      [403, "Unauthorized operation! Support Analyst can't create User"],
      [409, "User already exists"],
      [409, "Error in mapping role!"],
      [409, "Error in creating role!"],
      [400, "Weak password: Password must be at least 9 characters long and include a mix of uppercase, lowercase, and numbers."],
      [401, "Unauthorized operation! plant-admin can't create another plant-admin"],
      [401, "Unauthorized operation! site-admin can't create another site-admin"],
    ],
  },
  39: {
    summary: "Delete a user",
    answer: { status: "OK", message: "User deleted successfully" },
    errors: [
      [404, "User not found!"],
      [400, "Invalid Operation, can't delete user"],
      [400, "Something went wrong!"],
      [403, "Unauthorized operation!, can't delete user"],
    ],
  },
  40: {
    summary: "Update a user",
    body: [
      "username",
      "mobile_number",
      "country_code",
      "user_type:enum(saas-admin|support-analyst|site-admin|plant-admin|general-user)",
      "password",
      "plant_id?",
      "site_id?",
      "modules?:string[]",
    ],
    answer: { status: "OK", message: "User updated successfully" },
    errors: [
      [403, "Unauthorized operation!, can't update User"],
      [403, "Unauthorized operation! Support Analyst can't update User"],
      [404, "User not found"],
      [401, "Unauthorized operation! plant-admin can't update another plant-admin"],
      [401, "Unauthorized operation! site-admin can't update another site-admin"],
      [400, "Weak password: Password must be at least 9 characters long and include a mix of uppercase, lowercase, and numbers."],
    ],
  },
  41: { summary: "Fetch a user", answer: { schema: "$UserFetch" }, errors: [[404, "User not found!"]] },
  42: { summary: "List users", query: ["plant_id?", "site_id?"], answer: { schema: "$User[]" } },
  43: {
    summary: "Email a one-time password for a password reset",
    body: ["email"],
    answer: { text: "An OTP has been sent to your email address" },
    errors: [[409, "User Doesn't Exists"], [500, "Something went wrong."]],
  },
  44: {
    summary: "Check a one-time password",
    body: ["email", "otp"],
    answer: { text: "OTP verified successfully" },
    errors: [
      [400, "Invalid request body"],
      [401, "Invalid OTP"],
      [404, "Invalid OTP"],
      [409, "OTP has expired, please request a new one"],
      [409, "User Doesn't Exists"],
    ],
  },
  45: {
    summary: "Set a new password with a one-time password",
    body: ["email", "otp", "new_password"],
    answer: { text: "Password updated successfully" },
    errors: [
      [400, "Invalid request body"],
      [404, "Please request a new one OTP"],
      [409, "OTP has expired, please request a new one"],
      [409, "User Doesn't Exists"],
      [500, "Failed to update password"],
    ],
  },

  46: {
    summary: "Create a third-party pipeline",
    body: pipelineBody,
    answer: { schema: "$PipelineCreated" },
    errors: [[400, "Invalid Plant ID: <plant_id>"], [500, "Error occurred while creating the Pipeline"]],
  },
  47: {
    summary: "Delete a third-party pipeline",
    answer: { text: "Pipeline deleted successfully" },
    errors: [[400, "Invalid Pipeline ID: <pipeline_id>"], [500, "Error occurred while deleting the Pipeline"]],
  },
  48: {
    summary: "Update a third-party pipeline",
    body: ["pipeline_name?", "settings?:object", "tags:array", "registration?:array", "function_enabled_in_registration?:boolean"],
    answer: { text: "Pipeline updated successfully" },
    errors: [[400, "Invalid Pipeline ID: <pipeline_id>"], [500, "Error occurred while updating the Pipeline"]],
  },
  49: {
    summary: "Fetch a third-party pipeline",
    query: ["mac_ids?:string[]"],
    answer: { schema: "$Pipeline" },
    errors: [[400, "Invalid Pipeline ID: <pipeline_id>"], [500, "Error occurred while fetching the Pipeline details"]],
  },
  50: {
    summary: "Create an edge-server pipeline (gateway)",
    body: [...pipelineBody, "gateway_firmware:$Firmware"],
    answer: { schema: "$PipelineCreated" },
    errors: [
      [400, "This MAC address is already registered with another gateway (ID: <pipeline_id>)"],
      [400, "Monitor already registered in another gateway"],
      [400, "Invalid input key"],
      [400, "Insufficient input: <key>"],
      [400, "Error creating gateway"],
      [400, "SQL gateway only supports Production data type"],
      [404, "Invalid input registration"],
    ],
  },
  51: { summary: "Delete an edge-server pipeline", answer: { text: "Gateway deleted successfully" }, errors: [[400, "Invalid Gateway ID: <pipeline_id>"]] },
  52: {
    summary: "Update an edge-server pipeline",
    body: ["function_id?", "plant_id?", "pipeline_name", "settings:object", "tags:array", "registration?:array"],
    answer: { text: "Gateway updated successfully" },
    errors: [[400, "Invalid Gateway ID: <pipeline_id>"]],
  },
  53: { summary: "Fetch an edge-server pipeline", answer: { schema: "$Pipeline" }, errors: [[400, "Invalid Gateway ID: <pipeline_id>"]] },
  54: { summary: "List pipelines", query: ["function_id?", "plant_id?"], answer: { schema: "$PipelineListItem[]" } },
  55: { summary: "Count pipelines", query: ["plant_id?", "function_id?", "status?"], answer: { schema: "integer", example: 2 }, errors: [[400, "Excess inputs"]] },
  56: {
    summary: "Start or stop pipelines",
    body: ["pipeline_id:string[]", "action:enum(start|stop)"],
    answer: { text: "Action is being queued" },
    errors: [[400, "Invalid Gateway ID: <pipeline_id>"], [400, "Something went wrong"]],
  },
  57: {
    summary: "Introspect an SQL server (databases, tables, columns)",
    query: ["database?", "table?", "time_field?", "return_data_types?:enum(true|false)", "ignore_type?:string[]"],
    body: ["server_address", "port:integer", "username", "password", "dialect?:enum(postgres|mysql|mssql)"],
    answer: { schema: "string[]", example: ["plant_data", "erp"] },
    errors: [[400, "Missing parameters: <param1>, <param2>"], [400, "Failed to connect to DB"], [400, "ignore_type must be a list"]],
  },

  58: {
    summary: "Create a notebook",
    answer: { schema: "$NotebookCreated" },
    errors: [
      [400, "Error occurred while creating the notebook file: <detail>"],
      [400, "Error occurred while setting ownership of the notebook file: <detail>"],
    ],
  },
  59: {
    summary: "Delete notebooks",
    body: ["nbk_ids:string[]"],
    answer: { text: "Success" },
    errors: [
      [400, "Notebook IDs are required"],
      [400, "Error occurred while deleting the notebook file: <detail>"],
      [400, "Error occurred during notebook deletion: <detail>"],
      [200, "No notebooks deleted"],
    ],
  },
  60: {
    summary: "Rename a notebook",
    body: ["notebook_name"],
    answer: { text: "Rename Successful" },
    errors: [
      [400, "No Notebook found"],
      [400, "Missing new name"],
      [400, "Notebook ID is missing"],
      [404, "Error occurred while renaming the notebook file: <detail>"],
    ],
  },
  61: {
    summary: "Fetch a notebook",
    answer: { schema: "$Notebook" },
    errors: [[400, "Notebook ID invalid."], [400, "Error occurred during notebook retrieval: <detail>"]],
  },
  62: { summary: "List notebooks", answer: { schema: "$Notebook[]" }, errors: [[400, "Error occurred while retrieving notebook information: <detail>"]] },
  63: { summary: "Count notebooks", answer: { schema: "$NotebookCount" }, errors: [[400, "Error occurred while retrieving notebook metrics: <detail>"]] },
  64: {
    summary: "Run notebooks",
    body: ["nbkIds:string[]", "module"],
    answer: { schema: "object", example: {} },
    errors: [
      [400, "Notebook ID(s) are required"],
      [400, "Error occurred during notebook execution: <detail>"],
      [500, "Error occurred during request processing: <detail>"],
    ],
  },
  65: {
    summary: "Schedule notebooks",
    body: ["nbk_ids:string[]", "until", "period?", "time?"],
    answer: { text: "Success" },
    errors: [[400, "Error occurred during request processing: <detail>"]],
  },
  66: { summary: "Unschedule notebooks", body: ["nbk_ids:string[]"], answer: { text: "Success" }, errors: [[500, "Error occurred during request processing: <detail>"]] },

  67: {
    summary: "FFT peaks of a capture",
    query: ["monitor_id", "tag", "axis", "timestamp"],
    answer: { schema: "$FftPeak[]" },
    errors: [[400, "Invalid Monitor Id"], [400, "Invalid Asset Id"]],
  },
  68: { summary: "Fault summary of an asset", query: ["asset_id"], answer: { schema: "object[]" }, errors: [[400, "Invalid Asset Id"]] },
  69: { summary: "FFT spectrum of a capture", query: ["monitor_id", "tag", "axis", "timestamp"], answer: { schema: "$SpectrumPoint[]" }, errors: [[400, "Invalid Monitor Id"]] },
  70: { summary: "Timestamps of a monitor's spectra", query: ["monitor_id"], answer: { schema: "integer[]", example: [1767225600000] }, errors: [[400, "Invalid Monitor Id"]] },
  71: { summary: "Latest tag values of a monitor", answer: { schema: "object", example: { timestamp: 1767225600000, vel_x: 2.1 } }, errors: [[400, "Invalid Monitor Id"]] },
  72: { summary: "Latest values of an asset's monitors", query: ["asset_id", "from?", "to?"], answer: { schema: "object[]" }, errors: [[400, "Invalid Asset Id"]] },
  73: { summary: "Condition of an asset", answer: { schema: "$CmAsset" }, errors: [[400, "Excess Inputs"]] },
  74: { summary: "Condition of a function's assets", query: ["function_id"], answer: { schema: "$CmAsset[]" }, errors: [[400, "Excess Inputs"], [400, "Invalid Function Id"]] },

  75: {
    summary: "Energy metrics of a monitor",
    query: emsRange,
    answer: { schema: "$EnergyMetrics" },
    errors: [[400, "Monitor id not given"], [400, "Monitor id is invalid"], [400, "Insufficient date inputs"], [400, "Invalid date format"]],
  },
  76: {
    summary: "Energy metrics of a function's or asset's monitors",
    query: ["function_id", ...emsRange, "label:enum(function|asset)"],
    answer: { schema: "$EnergyMetrics[]" },
    errors: [
      [400, "Function or Asset id not given"],
      [400, "Function details not found"],
      [400, "Insufficient date inputs"],
      [400, "Invalid date format"],
      [400, "Excess inputs"],
    ],
  },
  77: {
    summary: "Energy trend of a monitor",
    query: [...emsRange, "metric", "interval:enum(hourly|daily|weekly|monthly|month)"],
    answer: { schema: "$EnergyTrendPoint[]" },
    errors: [
      [400, "Monitor id not given"],
      [400, "Metric not given"],
      [400, "Monitor details not found"],
      [400, "Insufficient date inputs"],
      [400, "Invalid date format"],
      [400, "Insufficient inputs"],
      [400, "Energy data not available"],
    ],
  },
  78: { summary: "Server time (UTC seconds with a fraction)", answer: { schema: "number", example: 1767225600.123 } },

  "pipelines.ingest.readings": {
    summary: "Send readings (up to 10,000 a request)",
    body: ["readings:$Reading[]"],
    answer: { schema: "$IngestAnswer" },
  },
  "pipelines.ingest.waveform": {
    summary: "Send a vibration capture",
    body: ["monitor_id", "tag", "axis:enum(x|y|z)", "ts:integer", "sample_rate_hz:number", "samples:array"],
    answer: { schema: "object" },
  },
  "pipelines.ingest.heartbeat": {
    summary: "Report a component's heartbeat",
    body: ["component:enum(log_parser|producer|gateway|stasher)", "ts:integer"],
    answer: { schema: "object" },
  },
  "pipelines.ingest.config": {
    summary: "The gateway's own configuration: its pipeline, mapped monitors and tags (fetched at start-up)",
    answer: { schema: "object" },
  },
  "pipelines.ingest.actions": { summary: "Pending start/stop actions of the pipeline", answer: { schema: "$PipelineAction[]" } },
  "notebooks.content": {
    summary: "A notebook's cells (the executed copy with executed=true)",
    query: ["executed?:enum(true|false)"],
    answer: { schema: "object" },
    errors: [[400, "Notebook ID invalid."]],
  },
  "notebooks.saveContent": {
    summary: "Replace a notebook's cells",
    body: ["cells:array"],
    answer: { schema: "object" },
    errors: [[400, "Notebook ID invalid."]],
  },
  "pipelines.ingest.ack": {
    summary: "Acknowledge an action",
    body: ["status:enum(completed|failed)"],
    answer: { schema: "object" },
  },
};
