/** The primary host on the plant's broker (MQTT_URL): not built yet. */
import type { AppConfig } from "../../lib/config";
import type { MqttPort } from "./port";

export interface PrimaryHost {
  close(): Promise<void>;
}

export async function startHost(port: MqttPort, cfg: AppConfig): Promise<PrimaryHost | null> {
  port.log.warn(`MQTT_URL=${cfg.mqttUrl}: the Sparkplug host mode is not built yet`);
  return null;
}
