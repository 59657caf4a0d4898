/** The server's clock (op 78): the one operation of the config service that reads no record. */
import type { ConfigActions } from "./config.types";

export const serverTimeActions: ConfigActions = {
  serverTime: {
    http: {
      op: 78,
      routes: ["GET /_config/server-time"],
      // Under /_config, so behind the Configuration module like the rest of the group.
      group: "utility",
      summary: "Server time",
      description: "The server's clock: UTC seconds since the epoch, with a fraction (seconds, not milliseconds).",
      answer: { schema: "number", example: 1767225600.123 },
    },
    params: {},
    handler() {
      return Date.now() / 1000;
    },
  },
};
