/**
 * A local HTTP server standing in for Twilio's Messages API: the real `twilio` client is pointed
 * at it (TWILIO_API_BASE) and it keeps each message it is asked to send, as Twilio would get it.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface TwilioMessage {
  path: string;
  /** `sid:token` from the Basic header. */
  credentials: string;
  From: string;
  To: string;
  Body: string;
}

export interface TwilioStandIn {
  base: string;
  messages: TwilioMessage[];
  requests(): number;
  waitFor(count: number, timeoutMs?: number): Promise<TwilioMessage[]>;
  stop(): Promise<void>;
}

/** `refuse(n)`: an HTTP status to answer the n-th request with instead of accepting it. */
export async function startTwilio(opts: { refuse?: (n: number) => number | null } = {}): Promise<TwilioStandIn> {
  const messages: TwilioMessage[] = [];
  let n = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      n += 1;
      const status = opts.refuse?.(n) ?? null;
      res.setHeader("content-type", "application/json");
      if (status !== null) {
        res.statusCode = status;
        res.end(JSON.stringify({ code: 20500, message: "stand-in refused", more_info: "", status }));
        return;
      }
      const form = new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
      const auth = Buffer.from(String(req.headers.authorization ?? "").replace(/^Basic /, ""), "base64").toString("utf8");
      const message = { path: req.url ?? "", credentials: auth, From: form.get("From") ?? "", To: form.get("To") ?? "", Body: form.get("Body") ?? "" };
      messages.push(message);
      res.statusCode = 201;
      res.end(JSON.stringify({ sid: `SM${String(n).padStart(32, "0")}`, status: "queued", to: message.To, from: message.From, body: message.Body }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const port = (server.address() as AddressInfo).port;
  return {
    base: `http://127.0.0.1:${port}`,
    messages,
    requests: () => n,
    async waitFor(count, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (messages.length < count) {
        if (Date.now() > deadline) throw new Error(`expected ${count} Twilio message(s), got ${messages.length}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      return messages;
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
