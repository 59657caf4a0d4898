/**
 * The gateway's part of a graceful stop (SIGTERM, bin/runtime.ts): from `begin` on, every
 * answer closes its connection, so that clients reconnect to another replica while the load
 * balancer catches up; `finish` then takes no new connection and lets the requests in flight
 * complete.
 */
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { Server as NetServer } from "node:net";
import type { ServiceBroker } from "moleculer";
import { settledWithin } from "../../lib/wait";

export class Drain {
  private draining = false;

  constructor(
    private readonly server: Server | undefined,
    private readonly logger: ServiceBroker["logger"],
  ) {
    // Before moleculer-web's own listener: every answer, whoever makes it.
    server?.prependListener("request", (_req: IncomingMessage, res: ServerResponse) => {
      if (this.draining) res.setHeader("Connection", "close");
    });
  }

  /** SIGTERM: still serving, but no connection is kept open for more. */
  begin(): void {
    this.draining = true;
  }

  /**
   * After the grace: no new connection; the requests in flight complete (their answers close
   * their connections) and idle keep-alive connections end at their keep-alive timeout, which
   * clients know from the `Keep-Alive` header and do not reuse a connection close to. Closing
   * them at once (http's `server.close()` does) races a client writing its next request on one:
   * ECONNRESET. Whatever is still open after `timeoutMs` is cut. moleculer-web's own stop then
   * finds the server closed.
   */
  async finish(timeoutMs: number): Promise<void> {
    this.draining = true;
    const server = this.server;
    if (!server?.listening) return;
    // net's close: the listening socket only; 'close' comes once every connection has ended.
    const closed = new Promise<void>((resolve) => server.once("close", () => resolve()));
    NetServer.prototype.close.call(server);
    if (!(await settledWithin(closed, timeoutMs))) {
      this.logger.warn(`requests still in flight after ${timeoutMs} ms of draining: their connections are closed`);
      server.closeAllConnections();
      await closed;
    }
  }
}
