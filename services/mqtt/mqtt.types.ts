/** The mqtt service as its lifecycle sees it (`this`): its locals and methods, typed once here. */
import type { Service, ServiceSettingSchema } from "moleculer";
import type { Presence } from "../../lib/presence";
import type { FrontDoor } from "./front-door";
import type { PrimaryHost } from "./host";
import type { MqttPort } from "./port";

export interface MqttLocals {
  /** The embedded broker, when MQTT_PORT is set and free. */
  frontDoor: FrontDoor | null;
  /** The primary host on the plant's broker, when MQTT_URL is set. */
  host: PrimaryHost | null;
  /** Which nodes are connected to this replica, as the pipelines service sees it (lib/presence.ts); null without DATABASE_URL. */
  presence: Presence | null;
}

export interface MqttMethods {
  /** The port the service's domain modules work with (port.ts): not per request, a session outlives any. */
  system(): MqttPort;
}

export type MqttThis = Service<ServiceSettingSchema> & MqttLocals & MqttMethods;
