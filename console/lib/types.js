// @ts-check
// The API's answers as the console reads them, declared once for every page (JSDoc only: this
// module exports nothing at run time). Each shape holds the fields the console uses; the API's
// reference (/docs) has them all.
export {};

// ------------------------------------------------------------------ places

/**
 * A site of `GET /_config/sites/_list`; `retention_period` in days, coordinates as texts ("" for none).
 * @typedef {object} Site
 * @property {string} site_id
 * @property {string} site_name
 * @property {string} location
 * @property {string} latitude
 * @property {string} longitude
 * @property {string} timezone
 * @property {number} retention_period
 * @property {{ current_version: string, previous_version: string, latest_version?: string }} edge_firmware
 */

/**
 * A plant of `GET /_config/plants/_list`.
 * @typedef {{ plant_id: string, plant_name: string, site_id: string }} Plant
 */

/**
 * A plant as its list shows it in Settings: its site's name and how many functions and pipelines it has.
 * @typedef {Plant & { site_name: string, function_count: number, pipeline_count: number }} PlantRow
 */

/**
 * A plant with its site's name and time zone (the plant choice of Pipelines and Energy).
 * @typedef {Plant & { site_name: string, timezone: string }} PlantOfSite
 */

/**
 * A function of `GET /_config/functions/_list`.
 * @typedef {{ function_id: string, function_name: string, plant_id: string }} PlantFunction
 */

/**
 * A function as its list shows it in Settings: its plant's and site's names, how many monitors it has.
 * @typedef {PlantFunction & { plant_name: string, site_name: string, monitor_count: number }} FunctionRow
 */

/**
 * The caller's sites with their plants and the plants' functions (the alert views' filters).
 * @typedef {{ site_id: string, site_name: string, plants: PlacePlant[] }} PlaceSite
 * @typedef {{ plant_id: string, plant_name: string, site_id: string, functions: PlantFunction[] }} PlacePlant
 */

/**
 * The ids of a place; an empty text is "none chosen".
 * @typedef {{ site_id?: string, plant_id?: string, function_id?: string, asset_id?: string }} PlaceIds
 */

/**
 * A monitor tag's threshold levels (texts of numbers, in the tag's unit).
 * @typedef {{ operational?: string, caution?: string, warning?: string }} Thresholds
 */

/**
 * A tag of a monitor.
 * @typedef {{ tag_id: string, tag_name: string, tag_desc: string, tag_unit: string, thresholds: Thresholds }} MonitorTag
 */

/**
 * A monitor of `GET /_config/monitors/_list` with what `GET /_config/monitors/{id}` adds: its
 * place, tags, specs and attributes.
 * @typedef {object} Monitor
 * @property {string} monitor_id
 * @property {string} monitor_name
 * @property {string} monitor_type
 * @property {number | string} created_at
 * @property {boolean} device_registered
 * @property {string} function_id
 * @property {string} function_name
 * @property {string | null} asset_id
 * @property {string | null} asset_name
 * @property {string} plant_id
 * @property {string} plant_name
 * @property {string} site_id
 * @property {string} site_name
 * @property {string} timezone
 * @property {MonitorTag[]} tags
 * @property {Record<string, unknown>} specs
 * @property {Record<string, unknown>} attributes
 * @property {string | null} pipeline_id
 * @property {MonitorGateway | null} [gateway]
 */

/**
 * The pipeline a monitor is registered to (`GET /_config/monitors/{id}`); empty while unregistered.
 * @typedef {{ pipeline_id?: string, data_source?: string, data_source_subtype?: string, slave_id?: number | string | null }} MonitorGateway
 */

// ------------------------------------------------------------------ pipelines

/**
 * An action asked of a pipeline's gateway (times epoch ms).
 * `error`: why a collected pipeline's source failed (docs/collectors.md), on its latest start.
 * @typedef {{ action_id: string, action: string, status: string, issued_at: number, completed_at: number | null, error?: string }} PipelineAction
 */

/**
 * A reading (or waveform) a pipeline received, as its list shows the last few: `ts` epoch ms,
 * `value` in the tag's unit, `samples` a waveform's length.
 * @typedef {{ ts?: number, monitor_id?: string, tag_id?: string, tag?: string, value?: number, samples?: number }} PipelineEvent
 */

/**
 * A pipeline of `GET /_config/pipelines/_list`: heartbeats epoch ms by component (null: never).
 * @typedef {object} Pipeline
 * @property {string} pipeline_id
 * @property {string} pipeline_name
 * @property {string | null} function_id
 * @property {string} plant_id
 * @property {string} site_id
 * @property {string} data_type
 * @property {string} data_source
 * @property {string} data_source_subtype
 * @property {string} status
 * @property {number} created_at
 * @property {string} plant_name
 * @property {string | null} function_name
 * @property {number} total_events
 * @property {PipelineEvent[]} latest_event
 * @property {Record<string, number | null>} heart_beats
 * @property {PipelineAction[]} last_actions
 * @property {number} [collected] readings a pipeline the service collects itself stored (docs/collectors.md)
 * @property {number} [rejected] and those it rejected
 */

/**
 * A pipeline as its fetch answers it (`GET /_config/pipelines/edge-server/{id}` or
 * `…/thirdparty/{id}`): besides the list's fields, its settings, tags and slave registration,
 * whose keys depend on the subtype (JSON the console shows or sends back as it is).
 * @typedef {Pipeline & { settings: Record<string, unknown>, tags: Record<string, unknown>[], registration: unknown[] }} PipelineDetail
 */

// ------------------------------------------------------------------ users

/**
 * A user of `GET /_config/users/_list`.
 * @typedef {object} UserRow
 * @property {string} username
 * @property {string} mobile_number
 * @property {string} country_code
 * @property {string} user_type
 * @property {string} site_id
 * @property {string} plant_id
 * @property {string | null} site_name
 * @property {string | null} plant_name
 * @property {string} created_at
 * @property {string | null} last_login_time
 * @property {string[]} modules
 */

/**
 * An asset of `GET /_config/assets/_list`.
 * @typedef {object} Asset
 * @property {string} asset_id
 * @property {string} asset_name
 * @property {"Yes" | "No"} is_critical
 * @property {string} asset_category
 * @property {string} function_name
 * @property {string} plant_name
 * @property {string} site_name
 * @property {number} monitor_count
 */

/**
 * The attributes of an asset the spec names, each optional: `rotating_speed` in rpm, `kw` in kW.
 * @typedef {{ machine_type?: string, rotating_speed?: number, manufacturer?: string, machine_model?: string, serial_no?: string, phases?: string, kw?: number, frequency?: number, volts?: number, amp?: number }} AssetAttributes
 */

/**
 * An asset of `GET /_config/assets/{id}`: the list's fields and its attributes (its place by name only).
 * @typedef {Asset & { attributes: AssetAttributes }} AssetDetail
 */

/**
 * A monitor as the asset page shows it: from the configuration (tags with units and thresholds),
 * or, for a user without the Configuration module, the names the latest values carry.
 * @typedef {{ monitor_id: string, monitor_name: string, monitor_type: string, tags: AssetTag[], gateway?: unknown, specs?: Record<string, unknown>, function_id?: string }} AssetMonitor
 * @typedef {{ tag_id?: string, tag_name: string, tag_desc?: string, tag_unit: string, thresholds: Thresholds }} AssetTag
 */

/**
 * A tag's latest value and its colour (green, yellow, orange, red; grey without limits).
 * @typedef {{ value: number | null, color: string }} TagValue
 */

/**
 * A monitor's latest values of `GET /_cm/monitors/_list` (op 72): each tag name holds a TagValue.
 * @typedef {{ monitor_id: string, monitor_name: string, timestamp: number | null, [tag: string]: unknown }} MonitorLatest
 */

/**
 * A monitor's fault summary of `GET /_cm/fft/_summary`: one line per fault.
 * @typedef {{ monitor_name: string, summary: string, Timestamp: string }} FaultSummary
 */

/**
 * An asset's condition of `GET /_cm/assets/_list`: `asset_status` "" while no event is open,
 * the event's fields "" likewise.
 * @typedef {object} AssetHealth
 * @property {string} asset_id
 * @property {string} asset_name
 * @property {string} asset_status
 * @property {string[]} asset_faults
 * @property {string} event_id
 * @property {string | number} event_start
 * @property {string} event_severity
 * @property {string} event_status
 * @property {string} event_label
 * @property {string} event_assignee
 */

/**
 * A bin of a spectrum (`GET /_cm/fft/_spectrum`): its frequency in Hz, its amplitude in the tag's
 * unit, and whether the service flagged it a peak.
 * @typedef {{ freq: number, tag_value: number, peak?: boolean }} SpectrumBin
 */

/**
 * A refined peak of `GET /_cm/fft/_peaks`: frequency in Hz, amplitude, and the running speed
 * (Hz) the orders are of.
 * @typedef {{ freq: number, tag_value: number, fundamental_freq?: number, bearing?: { defect: string, order: number, harmonic: number, sidebands: number[] } }} SpectrumPeak
 */

/**
 * An asset's ISO 20816-3 severity (`GET /_cm/assets/<asset_id>/_severity`): each velocity tag's
 * zone and the worst.
 * @typedef {{ monitor_id: string, tag: string, value: number | null, zone: string | null, timestamp: number | null }} VelocityZone
 * @typedef {{ standard: string, machine_group: number, foundation: string, boundaries: { ab: number, bc: number, cd: number }, tags: VelocityZone[], zone: string | null }} Severity
 */

// ------------------------------------------------------------------ alerts

/**
 * Active alerts by severity (`GET /_alerting/alerts/_count`).
 * @typedef {{ high: number, medium: number, low: number }} SeverityCounts
 */

/**
 * An alert of `GET /_alerting/alerts/_list` and `GET /_alerting/alerts/{id}`: times are ISO texts
 * with the offset, `duration` in seconds.
 * @typedef {object} Alert
 * @property {string} _id
 * @property {string} asset
 * @property {number} duration
 * @property {string} start_time
 * @property {string | null} end_time
 * @property {string} monitor
 * @property {string} monitor_id
 * @property {string} note
 * @property {string} severity
 * @property {string} state
 * @property {Record<string, string>} tag
 * @property {string} trigger_id
 * @property {string} trigger_name
 * @property {string} type_of_data
 * @property {string} watcher_id
 * @property {string} watcher_name
 * @property {string} ack_state
 * @property {string | null} acked_by
 * @property {string | null} acked_at
 * @property {string | null} shelved_until
 * @property {string | null} assignee
 * @property {boolean} suppressed
 * @property {string} reason
 */

/**
 * An active alert as `GET /_alerting/alerts/_active` lists it: the alert and where it stands.
 * @typedef {Alert & { asset_id: string | null, function_id: string | null, plant_id: string, site_id: string }} PlacedAlert
 */

/**
 * The alarm summary of the caller's scope (`GET /_alerting/alerts/_active`): the active alerts by
 * severity (shelved apart), those unacknowledged, the shelved count, the active alerts newest first.
 * @typedef {{ unacknowledged: SeverityCounts, active: SeverityCounts, shelved: number, alerts: PlacedAlert[] }} ActiveAlerts
 */

/**
 * An entry of an alert's history, oldest first: when (epoch ms or an ISO time), who (none: the system), the
 * action's word, its detail.
 * @typedef {{ at: string | number, by: string | null, action: string, detail: string | null }} AlertHistoryEntry
 */

/**
 * One alert as `GET /_alerting/alerts/{id}` answers it: the list's fields and its history.
 * @typedef {Alert & { history: AlertHistoryEntry[] }} AlertDetail
 */

/**
 * The alarm system's performance of `GET /_alerting/alerts/_kpi` (docs/api-tour.md, "Alarm
 * management"): ISO range, percentages, durations in seconds.
 * @typedef {object} Kpi
 * @property {string} from
 * @property {string} to
 * @property {number} alerts
 * @property {number} per_10min_avg
 * @property {number} per_10min_peak
 * @property {number} flood_percent
 * @property {{ high: number, medium: number, low: number }} priority_distribution
 * @property {KpiTrigger[]} top_triggers
 * @property {KpiChattering[]} chattering
 * @property {KpiStale[]} stale
 * @property {number | null} mean_time_to_ack_s
 * @property {number | null} mean_time_to_close_s
 * @property {number} unacknowledged_active
 */
/**
 * A bad actor: a trigger with the alerts it opened and their share.
 * @typedef {{ trigger_id: string, trigger_name: string, watcher_id: string, count: number, percent: number }} KpiTrigger
 */
/**
 * A chattering trigger: its alerts opened within 60 s of each other.
 * @typedef {{ trigger_id: string, trigger_name: string, count: number }} KpiChattering
 */
/**
 * A stale alert: active for more than 24 h.
 * @typedef {{ alert_id: string, trigger_name: string, active_hours: number }} KpiStale
 */

// ------------------------------------------------------------------ watchers

/**
 * Whom a trigger notifies and by which media.
 * @typedef {{ email: boolean, sms: boolean, whatsapp: boolean, users: string[] }} NotifyTo
 */

/**
 * A trigger's condition: a tag of a monitor compared with a threshold (a number as text).
 * @typedef {{ comparison: string, monitor_id: string, tag_id: string, threshold: string | number }} Condition
 */

/**
 * An escalation tier: whom to tell, and by which media, once the alert is still unacknowledged `after` its opening.
 * @typedef {{ after: string, users: string[], email?: boolean, sms?: boolean, whatsapp?: boolean }} EscalationTier
 */

/**
 * A trigger of a watcher: durations are texts such as `5m`; the alarm-management fields are
 * absent when not set (docs/api-tour.md, "Alarm management").
 * @typedef {object} Trigger
 * @property {string} id
 * @property {string} name
 * @property {string} minimum_duration
 * @property {Condition[]} [condition]
 * @property {NotifyTo} notifyTo
 * @property {number} severity
 * @property {string} trigger_relation
 * @property {string} [deadband]
 * @property {string} [clear_delay]
 * @property {string} [no_data]
 * @property {string} [renotify_every]
 * @property {EscalationTier[]} [escalation]
 */

/**
 * A watcher of `GET /_alerting/watchers/_list` and `GET /_alerting/watchers/{id}` (times epoch
 * ms); the fetch adds its maintenance windows.
 * @typedef {object} Watcher
 * @property {string} watcher_id
 * @property {string} watcher_name
 * @property {string | null} function_id
 * @property {string} plant_id
 * @property {string} site_id
 * @property {string} gateway_id
 * @property {string} gateway_name
 * @property {number} is_enabled
 * @property {number} is_hidden
 * @property {number} created_at_time
 * @property {number} last_update_time
 * @property {number | null} latest_alert_date
 * @property {number} total_alerts
 * @property {Trigger[]} triggers
 * @property {Suppression[]} [suppressions]
 */

/**
 * A maintenance window of a watcher: ISO times.
 * @typedef {{ id: string, from: string, to: string, reason: string, created_by: string | null }} Suppression
 */

// ------------------------------------------------------------------ history

/**
 * A bucket of a history answer: its time (epoch ms), mean, min and max.
 * @typedef {{ timestamp: number, value: number, min: number, max: number }} HistoryPoint
 */

/**
 * A tag's history (docs/api-tour.md, "Looking back"), one bucket per point; `bucket_ms` none
 * (or 0) for raw readings.
 * @typedef {{ points: HistoryPoint[], bucket_ms?: number | null, tag_unit?: string }} History
 */

// ------------------------------------------------------------------ energy

/**
 * An energy meter's figures over a range (`GET /_ems/monitor/_all`, op 76): consumption in MWh,
 * its share (%) of its function's, and the means of power, voltage and current.
 * @typedef {object} EnergyMeter
 * @property {string} monitor_id
 * @property {string} monitor_name
 * @property {string} function_id
 * @property {string} function_name
 * @property {number} total_consumption
 * @property {number} percent_of_total
 * @property {number} total_energy
 * @property {string} energy_unit
 * @property {number} Power
 * @property {string} power_unit
 * @property {number} Voltage
 * @property {string} voltage_unit
 * @property {number} Current
 * @property {string} current_unit
 */

/**
 * A bucket of a meter's trend (`GET /_ems/monitor/_trend/{id}`, op 77): its start (ISO, the
 * site's offset), its value in `unit` (null without readings).
 * @typedef {{ Date: string, Energy: number | null, unit: string }} EnergyPoint
 */

// ------------------------------------------------------------------ notebooks

/**
 * A notebook of `GET /_notebooks/notebooks/_all`: times epoch ms, `last_run` an ISO time, the
 * schedule's `until` and `time` in UTC (`YYYY-MM-DD HH:MM`, `HH:MM`), `period` a weekday or none (daily).
 * @typedef {object} Notebook
 * @property {string} notebook_id
 * @property {string} notebook_name
 * @property {string} status
 * @property {{ period: string | null, time: string | null, until: string | null }} schedule
 * @property {number} no_of_runs
 * @property {string | null} last_run
 * @property {number} created_at
 * @property {string} created_by
 * @property {number} updated_at
 * @property {string} updated_by
 * @property {{ path: string, executed_path: string | null, last_run_status: string | null, last_run_error: string | null }} attributes
 */

/**
 * A notebook's content (`GET /_notebooks/notebooks/{id}/_content`), in Jupyter's format.
 * @typedef {{ cells?: NotebookCell[] }} NotebookContent
 * @typedef {{ cell_type: string, source: string | string[], execution_count?: number | null, outputs?: CellOutput[] }} NotebookCell
 */

/**
 * An output of an executed cell (Jupyter's format): a stream's text, an error, or data by MIME type.
 * @typedef {object} CellOutput
 * @property {string} output_type
 * @property {string} [name]
 * @property {string | string[]} [text]
 * @property {string} [ename]
 * @property {string} [evalue]
 * @property {string[]} [traceback]
 * @property {Record<string, string | string[]>} [data]
 */

// ------------------------------------------------------------------ the page's own

/**
 * A section of an area's page, a module of its own: `#/<area>/<route>`, its tab's name, the
 * module and the export that draws it.
 * @typedef {{ route: string, name: string, load: () => Promise<Record<string, unknown>>, part: string }} Section
 */

/**
 * What app.js gives the view of a route: the record id of a `:<name>` page, the signed-in user,
 * the hash route, the area's sections.
 * @typedef {{ id?: string, user: import("./api.js").User, route: import("./ui.js").Route, sections?: Section[] }} PageProps
 */

/**
 * An event of a form control (input, change, submit), its element as `currentTarget`.
 * @template {EventTarget} T
 * @typedef {Event & { currentTarget: T }} ControlEvent
 */
