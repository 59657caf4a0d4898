/** The channels that carry a notification, from the service's configuration (email.ts, twilio.ts). */
import type { AppConfig } from "../../lib/config";
import type { Channel, Medium } from "./delivery";
import { emailChannel } from "./email";
import { twilioChannel } from "./twilio";

export function openChannels(cfg: AppConfig): Partial<Record<Medium, Channel>> {
  const twilioSettings = {
    accountSid: cfg.twilioAccountSid,
    authToken: cfg.twilioAuthToken,
    smsFrom: cfg.twilioSmsFrom,
    whatsappFrom: cfg.twilioWhatsappFrom,
    apiBase: cfg.twilioApiBase,
  };
  return {
    email: emailChannel({ smtpUrl: cfg.smtpUrl, from: cfg.mailFrom, outboxDir: cfg.outboxDir }),
    sms: twilioChannel("sms", twilioSettings),
    whatsapp: twilioChannel("whatsapp", twilioSettings),
  };
}
