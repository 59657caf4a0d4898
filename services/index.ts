/** The services this code base serves, by the name `SERVICES` uses: the gateway and those behind it. */
import type { ServiceSchema } from "moleculer";
import ApiService from "./api/api.service";
import { DOMAIN_SERVICE_SCHEMAS } from "./domain-services";
import CollectorsService from "./collectors/collectors.service";
import MqttService from "./mqtt/mqtt.service";

export const SERVICE_SCHEMAS: Record<string, ServiceSchema> = {
  api: ApiService as unknown as ServiceSchema,
  ...DOMAIN_SERVICE_SCHEMAS,
  // Behind no route: its door is MQTT (docs/sparkplug.md).
  mqtt: MqttService as unknown as ServiceSchema,
  // Behind no route: it reads the sources of the pipelines it collects (docs/collectors.md).
  collectors: CollectorsService as unknown as ServiceSchema,
};
