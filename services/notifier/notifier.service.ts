/**
 * notifier: every notification the service sends, recorded with its delivery status and
 * attempts. A send records the notification and returns; delivery starts at once, and a
 * transient failure is retried with exponential back-off by whichever replica claims it next
 * (notifications.ts). Opened alerts arrive on alerting's alerts stream (alerts.actions.ts); their
 * users' contacts come from the notifier's copy, kept from auth's events (contacts.ts).
 */
import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import { config } from "../../lib/config";
import { DbMixin } from "../../mixins/db.mixin";
import { StreamMixin, type StreamConsumers } from "../../mixins/stream.mixin";
import type { AlertingStreams } from "../alerting/contract";
import type { UserChanged, UserRemoved, UsersAnnounced } from "../auth/contract";
import { ALERTS_STREAM, alertsActions } from "./alerts.actions";
import { openChannels } from "./channels";
import * as contacts from "./contacts";
import { migrations } from "./migrations";
import { startSweeping } from "./notifications";
import { notificationsActions } from "./notifications.actions";
import type { NotifierLocals, NotifierMethods, NotifierThis } from "./notifier.types";
import { stopBackground, systemPort } from "./port";

const NotifierService: ServiceSchema<ServiceSettingSchema, NotifierMethods, NotifierLocals> & { streams: StreamConsumers<NotifierThis, AlertingStreams> } = {
  name: "notifier",
  // The stream mixin first: the database opens before the consumer starts and closes after it stops.
  mixins: [StreamMixin(), DbMixin({ schema: "notifier", migrations })],
  streams: ALERTS_STREAM,

  actions: {
    // email.send (internal: auth's emails); notifications.list, notifications.retry (operators)
    ...notificationsActions,
    // alerts.notify (internal: what the alerts stream delivers, for tools and tests)
    ...alertsActions,
  },

  events: {
    // The notifier's copy of the users' contacts (contacts.ts).
    "auth.user.created"(ctx: Context<UserChanged>) {
      return contacts.userChanged(this.system(ctx), ctx.params);
    },
    "auth.user.updated"(ctx: Context<UserChanged>) {
      return contacts.userChanged(this.system(ctx), ctx.params);
    },
    "auth.user.removed"(ctx: Context<UserRemoved>) {
      return contacts.userRemoved(this.system(ctx), ctx.params);
    },
    "auth.users.announced"(ctx: Context<UsersAnnounced>) {
      return contacts.usersAnnounced(this.system(ctx), ctx.params);
    },
  },

  methods: {
    system(ctx) {
      return systemPort(this, ctx);
    },
  },

  created() {
    this.channels = openChannels(config());
    this.timers = new Set();
    this.inflight = new Set();
    this.stopping = false;
  },

  started() {
    startSweeping(this.system(this.broker));
  },

  async stopped() {
    await stopBackground(this);
  },
};

export default NotifierService;
