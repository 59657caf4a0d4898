/**
 * SMS and WhatsApp through Twilio's Messages API, with the `twilio` package. Without an account
 * SID, auth token and the medium's sender number the channel is not configured, and its
 * notifications are recorded as skipped (never silently dropped).
 *
 * `apiBase` (TWILIO_API_BASE, tests only) points the real client at another address: a request
 * client that rewrites the scheme and host of every Twilio URL and leaves the rest of the
 * request (path, form body, Basic credentials) exactly as the client made it.
 */
import twilio from "twilio";
import { DeliveryError, type Channel, type Medium, type NotificationRow } from "./delivery";

export interface TwilioSettings {
  accountSid: string | undefined;
  authToken: string | undefined;
  smsFrom: string | undefined;
  whatsappFrom: string | undefined;
  apiBase: string | undefined;
}

type RequestOptions<T> = Parameters<twilio.RequestClient["request"]>[0] & { data?: T };

const TWILIO_HOST = /^https:\/\/[a-z0-9.-]+\.twilio\.com/i;

class RebasedRequestClient extends twilio.RequestClient {
  constructor(private readonly base: string) {
    super({ timeout: 15_000 });
  }

  override request<T>(opts: RequestOptions<T>) {
    return super.request<T>({ ...opts, uri: opts.uri.replace(TWILIO_HOST, this.base.replace(/\/+$/, "")) });
  }
}

/** `+91` and `98765 43210` to `+919876543210`; empty when the user has no number. */
export function phoneNumber(countryCode: string | null | undefined, mobile: string | null | undefined): string {
  const digits = (s: string | null | undefined) => (s ?? "").replace(/[^\d]/g, "");
  const m = digits(mobile);
  if (!m) return "";
  if ((mobile ?? "").trim().startsWith("+")) return `+${m}`;
  const cc = digits(countryCode);
  return `+${cc}${m}`;
}

/** Twilio's answer to a failed request: 429 and 5xx may pass, other 4xx will not; no answer at all may. */
export function isTransientTwilioError(err: unknown): boolean {
  const status = (err as { status?: unknown })?.status;
  if (typeof status !== "number") return true;
  return status === 429 || status >= 500;
}

export function twilioChannel(medium: Extract<Medium, "sms" | "whatsapp">, s: TwilioSettings): Channel {
  const from = medium === "sms" ? s.smsFrom : s.whatsappFrom;
  if (!s.accountSid || !s.authToken || !from) {
    return { configured: false, send: async () => undefined };
  }
  const client = twilio(s.accountSid, s.authToken, s.apiBase ? { httpClient: new RebasedRequestClient(s.apiBase) } : {});
  const address = (n: string) => (medium === "whatsapp" ? `whatsapp:${n.replace(/^whatsapp:/, "")}` : n);
  return {
    configured: true,
    async send(n: NotificationRow) {
      if (!n.recipient) throw new DeliveryError("the user has no mobile number", false);
      try {
        await client.messages.create({ from: address(from), to: address(n.recipient), body: n.body });
      } catch (err) {
        const e = err as { message?: string; status?: number; code?: number };
        const detail = [e.status, e.code].filter((x) => x !== undefined).join("/");
        throw new DeliveryError(`twilio${detail ? ` ${detail}` : ""}: ${e.message ?? String(err)}`, isTransientTwilioError(err));
      }
    },
  };
}
