/**
 * notifier: every notification the service sends, recorded with its delivery status and
 * attempts. A send records the notification and returns; delivery starts at once, and a
 * transient failure is retried with exponential back-off by whichever replica claims it next
 * (notifications.ts). Opened alerts arrive on alerting's alerts stream (alerts.actions.ts).
 */
import type { ServiceSchema, ServiceSettingSchema } from "moleculer";
import { config } from "../../lib/config";
import { DbMixin } from "../../mixins/db.mixin";
import { StreamMixin, type StreamConsumers } from "../../mixins/stream.mixin";
import type { AlertingStreams } from "../alerting/contract";
import { ALERTS_STREAM, alertsActions } from "./alerts.actions";
import { openChannels } from "./channels";
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
