/**
 * mqtt: Sparkplug B gateways (docs/sparkplug.md), two ways in to the pipelines' one ingestion:
 * the service's own MQTT front door (an embedded broker on MQTT_PORT, each connection its
 * pipeline by its ingest key), and a primary host on the plant's broker (MQTT_URL), each edge
 * node held by one replica at a time. Stores nothing itself: births, aliases and `seq` are
 * sessions in memory, readings and statuses are the pipelines service's (sparkplug.actions.ts there).
 */
import type { ServiceSchema, ServiceSettingSchema } from "moleculer";
import { config } from "../../lib/config";
import { Presence } from "../../lib/presence";
import { SPARKPLUG_PRESENCE, sparkplugClient } from "../pipelines/contract";
import { openFrontDoor } from "./front-door";
import { startHost } from "./host";
import type { MqttLocals, MqttMethods } from "./mqtt.types";
import type { MqttPort } from "./port";

const MqttService: ServiceSchema<ServiceSettingSchema, MqttMethods, MqttLocals> = {
  name: "mqtt",
  // A gateway's CONNECT is checked by pipelines: the door opens once pipelines is on the bus.
  dependencies: ["pipelines"],

  methods: {
    system(): MqttPort {
      const broker = this.broker;
      return {
        connect: (pipeline_id, ingest_key) => sparkplugClient.call(broker, "sparkplug.connect", { pipeline_id, ingest_key }),
        nodeOf: (edge_node) => sparkplugClient.call(broker, "sparkplug.node", { edge_node, site_ids: config().mqttSites }),
        readings: (pipeline_id, messages) => sparkplugClient.call(broker, "sparkplug.readings", { pipeline_id, messages }),
        birth: async (pipeline_id, ts) => void (await sparkplugClient.call(broker, "sparkplug.birth", { pipeline_id, ts })),
        death: async (pipeline_id, ts) => void (await sparkplugClient.call(broker, "sparkplug.death", { pipeline_id, ts })),
        release: async (pipeline_id) => void (await sparkplugClient.call(broker, "sparkplug.release", { pipeline_id })),
        heard: async (pipeline_id, ts) => void (await sparkplugClient.call(broker, "sparkplug.heard", { pipeline_id, ts })),
        present: async (pipeline_id) => this.presence?.enter(pipeline_id),
        absent: async (pipeline_id) => this.presence?.leave(pipeline_id),
        log: { info: (m) => this.logger.info(m), warn: (m) => this.logger.warn(m) },
      };
    },
  },

  async started() {
    const cfg = config();
    this.presence = cfg.databaseUrl ? new Presence({ databaseUrl: cfg.databaseUrl, scope: SPARKPLUG_PRESENCE }) : null;
    this.frontDoor = cfg.mqttPort > 0 ? await openFrontDoor(this.system(), { port: cfg.mqttPort, hostId: cfg.mqttHostId, maxPacketBytes: cfg.mqttMaxPacketBytes }) : null;
    this.host = cfg.mqttUrl ? await startHost(this.system(), cfg) : null;
  },

  async stopped() {
    await this.host?.close();
    await this.frontDoor?.close();
    await this.presence?.close();
  },
};

export default MqttService;
