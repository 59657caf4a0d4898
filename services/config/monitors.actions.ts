/** The monitor operations: create, delete, update, fetch, list, count. */
import type { Context } from "moleculer";
import type { FieldDoc } from "../../lib/operations";
import { PAGE_FIELDS } from "../../lib/paging";
import type { ConfigActions } from "./config.types";
import type { MonitorFilter } from "./contract";
import { MSG } from "./messages";
import * as monitors from "./monitors";
import { ID_FIELDS } from "./openapi";
import { id, list, name, optId, optText, page } from "./params";
import { DATA_TYPES, NUMERIC_TEXT } from "./rules";

const threshold = { type: "string", convert: true, max: 64, pattern: NUMERIC_TEXT, optional: true } as const;
const monitorTag = {
  type: "object",
  strict: true,
  props: {
    tag_id: optText,
    tag_name: name,
    tag_desc: optText,
    tag_unit: optText,
    thresholds: {
      type: "object",
      strict: true,
      optional: true,
      props: { caution: threshold, operational: threshold, warning: threshold },
    },
  },
} as const;
const tags = { type: "array", max: 1000, items: monitorTag } as const;
/** specs: only speed_type is known (spec: Monitor.specs); other keys are the client's. */
const specs = { type: "object", props: { speed_type: optText } } as const;
const freeObject = { type: "object" } as const;

const WRITE_FIELDS: Record<string, FieldDoc> = {
  monitor_name: { description: "unique within its function, case-insensitively", example: "Pump DE Bearing" },
  monitor_type: { description: "e.g. condition-monitor, process-monitor, energy-monitor", example: "condition-monitor" },
  tags: {
    type: "$MonitorTag[]",
    description: "what the monitor measures; a tag without tag_id gets one; thresholds are numbers written as text",
    example: [{ tag_name: "Velocity RMS", tag_desc: "DE bearing, horizontal", tag_unit: "mm/s", thresholds: { operational: "2.8", caution: "4.5", warning: "7.1" } }],
  },
  specs: { description: "configuration data; speed_type is the one key the service knows", example: { speed_type: "fixed" } },
  attributes: { description: "the client's own keys and values", example: { mount: "horizontal" } },
};

const FILTER_FIELDS: Record<string, FieldDoc> = {
  asset_id: { ...ID_FIELDS.asset_id, description: "only the asset's monitors" },
  function_id: { ...ID_FIELDS.function_id, description: "only the function's monitors (those on its assets included)" },
};

export const monitorActions: ConfigActions = {
  "monitors.create": {
    http: {
      op: 17,
      routes: ["POST /_config/monitors"],
      group: "monitors",
      summary: "Create a monitor",
      description: "On a function, or on an asset (then on the asset's function). The licence caps how many monitors exist.",
      fields: {
        ...WRITE_FIELDS,
        function_id: { ...ID_FIELDS.function_id, required: false, description: "the function the monitor is on; required when asset_id is absent" },
        // No example: the request example hangs the monitor on a function; an asset of another function is refused.
        asset_id: { required: false, description: "the asset the monitor is on (an id); required when function_id is absent" },
      },
      answer: { id: true },
      errors: [
        [400, MSG.insufficientInputs],
        [400, MSG.monitorCreateError],
        [400, MSG.monitorLimit],
        [400, MSG.invalidKey],
        [400, MSG.monitorExists("<monitor_name>")],
        [400, MSG.invalidInput("<field>")],
        [403, MSG.unauthorizedOperation],
      ],
    },
    params: {
      monitor_name: name,
      monitor_type: name,
      function_id: optId,
      asset_id: optId,
      tags: { ...tags, optional: true },
      specs: { ...specs, optional: true },
      attributes: { ...freeObject, optional: true },
      $$messages: { unknown: MSG.invalidKey },
    },
    handler(ctx: Context<monitors.MonitorCreate>) {
      return monitors.createMonitor(this.use(ctx), ctx.params);
    },
  },

  "monitors.remove": {
    http: {
      op: 18,
      routes: ["DELETE /_config/monitors/:monitor_id"],
      group: "monitors",
      summary: "Delete a monitor",
      description: "A monitor registered to a pipeline is kept.",
      fields: { monitor_id: ID_FIELDS.monitor_id },
      answer: { text: MSG.monitorDeleted },
      errors: [[400, MSG.monitorRegistered], [400, MSG.invalidMonitorId("<monitor_id>")], [403, MSG.unauthorizedOperation]],
    },
    params: { monitor_id: id },
    handler(ctx: Context<{ monitor_id: string }>) {
      return monitors.removeMonitor(this.use(ctx), ctx.params.monitor_id);
    },
  },

  "monitors.update": {
    http: {
      op: 19,
      routes: ["PUT /_config/monitors/:monitor_id"],
      group: "monitors",
      summary: "Update a monitor",
      description: "Every field is required and replaces the stored one; any other key is refused.",
      fields: { monitor_id: ID_FIELDS.monitor_id, ...WRITE_FIELDS },
      answer: { text: MSG.monitorUpdated },
      errors: [
        [400, MSG.invalidMonitorId("<monitor_id>")],
        [400, MSG.invalidKey],
        [400, MSG.monitorExists("<monitor_name>")],
        [400, MSG.invalidInput("<field>")],
        [403, MSG.unauthorizedOperation],
      ],
    },
    params: {
      monitor_id: id,
      monitor_name: name,
      monitor_type: name,
      tags,
      specs,
      attributes: freeObject,
      // The update lists its body and names `Invalid key` for any other key: a fetched monitor's
      // function_id, created_at and gateway are not taken back.
      $$messages: { unknown: MSG.invalidKey },
    },
    handler(ctx: Context<monitors.MonitorUpdate>) {
      return monitors.updateMonitor(this.use(ctx), ctx.params);
    },
  },

  "monitors.get": {
    http: {
      op: 20,
      routes: ["GET /_config/monitors/:monitor_id"],
      group: "monitors",
      summary: "Fetch a monitor",
      description: "gateway is the pipeline the monitor is registered to, an empty object while it is not registered.",
      fields: { monitor_id: ID_FIELDS.monitor_id },
      answer: { schema: "$Monitor" },
      errors: [[400, MSG.invalidMonitorId("<monitor_id>")], [405, MSG.methodNotAllowed]],
    },
    params: { monitor_id: id },
    handler(ctx: Context<{ monitor_id: string }>) {
      return monitors.getMonitor(this.use(ctx), ctx.params.monitor_id);
    },
  },

  "monitors.list": {
    http: {
      op: 21,
      routes: ["GET /_config/monitors/_list"],
      group: "monitors",
      summary: "List monitors",
      description: "The monitors the caller may see, filtered by the query.",
      fields: {
        ...FILTER_FIELDS,
        pipeline_id: { ...ID_FIELDS.pipeline_id, description: "only the monitors the pipeline (gateway) registered" },
        is_registered: { enum: ["yes", "no"], description: "only registered (yes) or unregistered (no) monitors, any case" },
        data_type: {
          enum: [...DATA_TYPES],
          description: "the registering pipeline's data type; an unregistered monitor matches by its monitor_type (energy: energy-monitor, …); any case",
        },
        ...PAGE_FIELDS,
      },
      answer: { schema: "$MonitorListItem[]" },
      errors: [
        [400, MSG.invalidIsRegistered],
        [400, MSG.invalidPipelineId("<pipeline_id>")],
        [400, MSG.excessInputs],
        [400, MSG.invalidDataType],
        [400, MSG.invalidInput("<field>")],
      ],
    },
    params: {
      asset_id: optId,
      function_id: optId,
      pipeline_id: optId,
      is_registered: optText,
      data_type: optText,
      ...page,
      $$messages: list,
    },
    handler(ctx: Context<MonitorFilter>) {
      return monitors.listMonitors(this.use(ctx), ctx.params);
    },
  },

  "monitors.count": {
    http: {
      op: 22,
      routes: ["GET /_config/monitors/_count"],
      group: "monitors",
      summary: "Count monitors",
      description: "How many monitors the caller may see on the asset or function.",
      fields: FILTER_FIELDS,
      answer: { schema: "integer", example: 7 },
      errors: [[400, MSG.excessInputs]],
    },
    params: { asset_id: optId, function_id: optId, $$messages: list },
    handler(ctx: Context<{ asset_id?: string; function_id?: string }>) {
      return monitors.countMonitors(this.use(ctx), ctx.params);
    },
  },
};
