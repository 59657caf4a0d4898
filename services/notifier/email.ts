/**
 * The email channel, over nodemailer. With SMTP_URL it speaks SMTP; without it each email is
 * rendered by nodemailer's stream transport and written to OUTBOX_DIR as an .eml file, so a
 * person trying the service locally can read the OTP it sent.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import nodemailer from "nodemailer";
import { DeliveryError, type Channel, type NotificationRow } from "./delivery";

export interface EmailSettings {
  smtpUrl: string | undefined;
  from: string;
  outboxDir: string;
}

/** Failures that trying again will not cure: refused credentials, a bad configuration, an address the message cannot have. */
const PERMANENT_CODES = new Set(["EAUTH", "ENOAUTH", "EOAUTH2", "ECONFIG", "EENVELOPE", "EMESSAGE"]);

/** RFC 5321: a 4yz reply is transient, a 5yz permanent (but 503, a session in the wrong state). Connection faults are transient. */
export function isTransientMailError(err: unknown): boolean {
  const e = (err ?? {}) as { permanent?: unknown; responseCode?: unknown; code?: unknown };
  if (typeof e.permanent === "boolean") return !e.permanent;
  if (typeof e.responseCode === "number") return !(e.responseCode >= 500 && e.responseCode !== 503);
  return !(typeof e.code === "string" && PERMANENT_CODES.has(e.code));
}

function deliveryError(err: unknown): DeliveryError {
  const e = err as { message?: string; response?: string };
  return new DeliveryError(e?.response ?? e?.message ?? String(err), isTransientMailError(err));
}

export function emailChannel(settings: EmailSettings): Channel {
  const message = (n: NotificationRow) => ({ from: settings.from, to: n.recipient, subject: n.subject ?? "", text: n.body });

  if (settings.smtpUrl) {
    const transport = nodemailer.createTransport({
      url: settings.smtpUrl,
      // Bounded, so a stuck server fails an attempt (and is retried) rather than holding it forever.
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 30_000,
    });
    return {
      configured: true,
      async send(n) {
        try {
          await transport.sendMail(message(n));
        } catch (err) {
          throw deliveryError(err);
        }
      },
      close: () => transport.close(),
    };
  }

  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: "unix" });
  return {
    configured: true,
    async send(n) {
      try {
        const info = await transport.sendMail(message(n));
        await mkdir(settings.outboxDir, { recursive: true });
        const stamp = new Date().toISOString().replace(/[:.]/g, "-");
        await writeFile(path.join(settings.outboxDir, `${stamp}-${n.notification_id}.eml`), info.message as Buffer);
      } catch (err) {
        throw new DeliveryError(`outbox: ${(err as Error).message}`, true);
      }
    },
  };
}
