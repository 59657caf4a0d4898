/**
 * notifier: every notification the service sends, recorded with its delivery status and
 * attempts. A send records the notification and returns; delivery starts at once, and a
 * transient failure is retried with exponential back-off by whichever replica claims it next.
 * Opened alerts arrive on alerting's alerts stream (alert-notifications.ts).
 */
import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import type { DataSource } from "typeorm";
import { config } from "../../lib/config";
import { conflict, notFound } from "../../lib/errors";
import { countDomain } from "../../lib/metrics";
import { MAX_TEXT } from "../../lib/validation";
import { settledWithin } from "../../lib/wait";
import { DbMixin } from "../../mixins/db.mixin";
import { StreamMixin, type StreamConsumers } from "../../mixins/stream.mixin";
import type { AlertingStreams } from "../alerting/contract";
import {
  afterAttempt,
  LISTED_STATUSES,
  MEDIA,
  retryRefusal,
  skipped,
  type Channel,
  type Medium,
  type NotificationRow,
  type RetryState,
  type SendResult,
} from "./delivery";
import { emailChannel } from "./email";
import { migrations } from "./migrations";
import { ALERTS_STREAM, alertsNotify, type NotifierThis } from "./alert-notifications";
import { twilioChannel } from "./twilio";
import { MSG } from "./messages";
import { claimDue, listNotifications, recordAttempt, recordNotification, requeue, retryStates, type NotificationView } from "./notifications.repo";
import type { EmailSendParams, NotificationsListParams, NotificationsRetryParams, RetryResult } from "./contract";

/** The most notifications one retry queues again; an operator asks again for more. */
const RETRY_BATCH = 100;
/** How long a retry waits for its deliveries before it answers (under the broker's request timeout); the rest go on behind. */
const RETRY_WAIT_MS = 5000;

/** Refuses a retry that names an unknown, a sent or a redacted notification, before anything is queued. */
function checkRetry(ids: string[], states: Map<string, RetryState>): void {
  for (const id of ids) {
    const refusal = retryRefusal(states.get(id));
    if (refusal === "unknown") throw notFound(MSG.notificationNotFound(id));
    if (refusal === "sent") throw conflict(MSG.alreadySent(id));
    if (refusal === "redacted") throw conflict(MSG.redacted(id));
  }
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
  deliverNow(ids: string[], waitMs: number): Promise<void>;
  attempt(row: NotificationRow): Promise<void>;
  later(delayMs: number, task: () => Promise<void>): void;
  track(task: Promise<void>): void;
}

const NotifierService: ServiceSchema<ServiceSettingSchema, NotifierMethods, NotifierLocals> & { streams: StreamConsumers<NotifierThis, AlertingStreams> } = {
  name: "notifier",
  // The stream mixin first: the database opens before the consumer starts and closes after it stops.
  mixins: [StreamMixin(), DbMixin({ schema: "notifier", migrations })],
  streams: ALERTS_STREAM,

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

    /** Operators (the REPL's `notifications`): the newest notifications first; a secret's body is shown redacted. */
    "notifications.list": {
      visibility: "public",
      params: {
        status: { type: "enum", values: [...LISTED_STATUSES], optional: true },
        medium: { type: "enum", values: [...MEDIA], optional: true },
        alert_id: { type: "uuid", optional: true },
        limit: { type: "number", integer: true, min: 1, max: 1000, optional: true, default: 50 },
      },
      // The params' default fills `limit`.
      handler(ctx: Context<NotificationsListParams & { limit: number }>): Promise<NotificationView[]> {
        const p = ctx.params;
        return listNotifications(this.db, Date.now(), { ...p, alert_id: p.alert_id?.toLowerCase() });
      },
    },

    /**
     * Operators (the REPL's `notifications-retry`): queues notifications again with their attempts
     * counted afresh and delivers them now through the same path as every delivery. A sent or a
     * redacted one is refused. Answers what became of them within RETRY_WAIT_MS.
     */
    "notifications.retry": {
      visibility: "public",
      params: {
        notification_ids: { type: "array", items: { type: "uuid" }, min: 1, max: RETRY_BATCH, optional: true },
      },
      async handler(ctx: Context<NotificationsRetryParams>): Promise<RetryResult> {
        const ids = ctx.params.notification_ids?.map((id) => id.toLowerCase());
        if (ids) checkRetry(ids, await retryStates(this.db, ids));
        const requeued = await requeue(this.db, Date.now(), { notification_ids: ids, limit: RETRY_BATCH });
        await this.deliverNow(requeued, RETRY_WAIT_MS);
        const shown = ids ?? requeued;
        const notifications = shown.length ? await listNotifications(this.db, Date.now(), { notification_ids: shown, limit: RETRY_BATCH }) : [];
        return { retried: requeued.length, notifications };
      },
    },
  },

  methods: {
    /** Claims and attempts one due notification, or a batch of the oldest due ones. */
    async deliverDue(id?: string) {
      if (this.stopping) return;
      const rows = await claimDue(this.db, Date.now(), { id, limit: id ? 1 : SWEEP_BATCH });
      for (const row of rows) await this.attempt(row);
    },

    /** Delivers these due notifications one after another, as the sweep does; waits for them at most `waitMs`. */
    async deliverNow(ids: string[], waitMs: number) {
      if (ids.length === 0) return;
      const run = (async () => {
        for (const id of ids) await this.deliverDue(id);
      })();
      this.track(run);
      await settledWithin(run, waitMs);
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
      if (result.status !== "queued") countDomain(this.broker, `notifications.${result.status}`, { medium: row.medium });
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
