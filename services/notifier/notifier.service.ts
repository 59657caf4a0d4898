/**
 * notifier: every notification the service sends, recorded with its delivery status and
 * attempts. A send records the notification and returns; delivery starts at once, and a
 * transient failure is retried with exponential back-off by whichever replica claims it next.
 */
import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import type { DataSource } from "typeorm";
import { config } from "../../lib/config";
import { countDomain } from "../../lib/metrics";
import { MAX_TEXT } from "../../lib/validation";
import { DbMixin } from "../../mixins/db.mixin";
import { afterAttempt, skipped, type Channel, type Medium, type NotificationRow, type SendResult } from "./delivery";
import { emailChannel } from "./email";
import { migrations } from "./migrations";
import { alertsNotify } from "./alert-notifications";
import { twilioChannel } from "./twilio";
import { claimDue, recordAttempt, recordNotification } from "./notifications.repo";

export type { SendResult } from "./delivery";

/** Params of `notifier.email.send`. */
export interface EmailSendParams {
  to: string;
  subject: string;
  text: string;
  /** The same key twice is one notification: a caller's retry never sends a second email. */
  idempotency_key?: string;
  /** The body holds a secret (OTP, password): it is redacted once the notification is final. */
  sensitive?: boolean;
}

/** How often a replica looks for due retries that no timer of its own is waiting for (another replica's, a crashed one's). */
const SWEEP_INTERVAL_MS = 5000;
const SWEEP_BATCH = 20;

interface NotifierLocals {
  db: DataSource;
  channels: Partial<Record<Medium, Channel>>;
  timers: Set<NodeJS.Timeout>;
  inflight: Set<Promise<void>>;
  stopping: boolean;
}

interface NotifierMethods {
  deliverDue(id?: string): Promise<void>;
  attempt(row: NotificationRow): Promise<void>;
  later(delayMs: number, task: () => Promise<void>): void;
  track(task: Promise<void>): void;
}

const NotifierService: ServiceSchema<ServiceSettingSchema, NotifierMethods, NotifierLocals> = {
  name: "notifier",
  mixins: [DbMixin({ schema: "notifier", migrations })],

  actions: {
    /** Internal: records an email and starts its delivery. Answers `{notification_id, status}`. */
    "email.send": {
      visibility: "public",
      params: {
        to: { type: "string", max: 320, pattern: /^[^\s@]+@[^\s@]+$/ },
        subject: { type: "string", max: 998 },
        text: { type: "string", max: 100_000 },
        idempotency_key: { type: "string", max: MAX_TEXT, optional: true },
        sensitive: { type: "boolean", optional: true },
      },
      async handler(ctx: Context<EmailSendParams>): Promise<SendResult> {
        const p = ctx.params;
        const { row, created } = await recordNotification(
          this.db,
          {
            medium: "email",
            recipient: p.to,
            subject: p.subject,
            body: p.text,
            idempotency_key: p.idempotency_key ?? null,
            sensitive: p.sensitive ?? false,
          },
          Date.now(),
        );
        if (created) this.track(this.deliverDue(row.notification_id));
        return { notification_id: row.notification_id, status: row.status };
      },
    },

    /** Internal: the notifications an opened alert asks for (alert-notifications.ts). */
    "alerts.notify": alertsNotify,
  },

  methods: {
    /** Claims and attempts one due notification, or a batch of the oldest due ones. */
    async deliverDue(id?: string) {
      if (this.stopping) return;
      const rows = await claimDue(this.db, Date.now(), { id, limit: id ? 1 : SWEEP_BATCH });
      for (const row of rows) await this.attempt(row);
    },

    async attempt(row: NotificationRow) {
      const channel = this.channels[row.medium];
      const attempt = row.attempts + 1;
      let failure: unknown;
      if (channel?.configured) {
        try {
          await channel.send(row);
        } catch (err) {
          failure = err ?? new Error("delivery failed");
        }
      }
      const now = Date.now();
      const result = channel?.configured ? afterAttempt(row, attempt, now, failure) : skipped(row);
      await recordAttempt(this.db, row, attempt, now, result);
      if (result.status === "sent") countDomain(this.broker, "notifications.sent", { medium: row.medium });
      if (result.status === "failed") countDomain(this.broker, "notifications.failed", { medium: row.medium });
      if (result.status === "queued" && result.nextAttemptAt !== null) {
        this.logger.warn(`notification ${row.notification_id}: attempt ${attempt} failed (${result.error}); retrying`);
        this.later(result.nextAttemptAt - now, () => this.deliverDue(row.notification_id));
      } else if (result.status === "failed") {
        this.logger.error(`notification ${row.notification_id}: given up after attempt ${attempt}: ${result.error}`);
      }
    },

    later(delayMs: number, task: () => Promise<void>) {
      if (this.stopping) return;
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        this.track(task());
      }, delayMs);
      timer.unref();
      this.timers.add(timer);
    },

    /** Background work is awaited on stop, so the database is not closed under a delivery. */
    track(task: Promise<void>) {
      const settled = task.catch((err) => this.logger.error("notification delivery failed", err));
      this.inflight.add(settled);
      void settled.finally(() => this.inflight.delete(settled));
    },
  },

  created() {
    const cfg = config();
    const twilioSettings = {
      accountSid: cfg.twilioAccountSid,
      authToken: cfg.twilioAuthToken,
      smsFrom: cfg.twilioSmsFrom,
      whatsappFrom: cfg.twilioWhatsappFrom,
      apiBase: cfg.twilioApiBase,
    };
    this.channels = {
      email: emailChannel({ smtpUrl: cfg.smtpUrl, from: cfg.mailFrom, outboxDir: cfg.outboxDir }),
      sms: twilioChannel("sms", twilioSettings),
      whatsapp: twilioChannel("whatsapp", twilioSettings),
    };
    this.timers = new Set();
    this.inflight = new Set();
    this.stopping = false;
  },

  started() {
    const sweep = () => {
      this.track(this.deliverDue());
      this.later(SWEEP_INTERVAL_MS, async () => sweep());
    };
    this.later(0, async () => sweep());
  },

  async stopped() {
    this.stopping = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    await Promise.all([...this.inflight]);
    for (const channel of Object.values(this.channels)) channel?.close?.();
  },
};

export default NotifierService;
