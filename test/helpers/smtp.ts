/**
 * A real SMTP server on loopback (the `smtp-server` package) that keeps what it receives, for
 * tests of the email path. `refuse` decides, per DATA command, whether to answer with an error
 * code instead of accepting: `(n) => (n === 1 ? 451 : null)` refuses the first message once.
 */
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
  /** The message as a reader sees it: the headers, then the body with its quoted-printable encoding undone. */
  text: string;
}

/** A plain-text message's body decoded as a mail client decodes it (nodemailer quotes lines over 76 characters). */
function readable(raw: string): string {
  const split = raw.search(/\r?\n\r?\n/);
  if (split < 0 || !/^Content-Transfer-Encoding: quoted-printable/im.test(raw.slice(0, split))) return raw;
  const body = raw
    .slice(split)
    .replace(/=\r?\n/g, "")
    .replace(/(?:=[0-9A-F]{2})+/g, (run) => Buffer.from(run.replace(/=/g, ""), "hex").toString("utf8"));
  return raw.slice(0, split) + body;
}

export interface TestSmtp {
  port: number;
  url: string;
  received: ReceivedMail[];
  /** How many DATA commands arrived, refused ones included. */
  dataCommands(): number;
  /** Resolves with the received mails once there are at least `count` (addressed to `to`, when given). */
  waitFor(count: number, opts?: { to?: string; timeoutMs?: number }): Promise<ReceivedMail[]>;
  stop(): Promise<void>;
}

export async function startSmtp(opts: { refuse?: (dataCommand: number) => number | null; port?: number } = {}): Promise<TestSmtp> {
  const received: ReceivedMail[] = [];
  let data = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        data += 1;
        const code = opts.refuse?.(data) ?? null;
        if (code !== null) {
          const err = Object.assign(new Error(`refused by test (${code})`), { responseCode: code });
          callback(err);
          return;
        }
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString("utf8"),
          text: readable(Buffer.concat(chunks).toString("utf8")),
        });
        callback(null);
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.server.once("error", reject);
    server.listen(opts.port ?? 0, "127.0.0.1", () => resolve());
  });
  const port = (server.server.address() as AddressInfo).port;

  const matching = (to?: string) => received.filter((m) => !to || m.to.includes(to));
  return {
    port,
    url: `smtp://127.0.0.1:${port}`,
    received,
    dataCommands: () => data,
    async waitFor(count, { to, timeoutMs = 15_000 } = {}) {
      const deadline = Date.now() + timeoutMs;
      while (matching(to).length < count) {
        if (Date.now() > deadline) throw new Error(`expected ${count} mail(s)${to ? ` to ${to}` : ""}, got ${matching(to).length}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      return matching(to);
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The six-digit code of an OTP email (the text reads "Your one-time password (OTP) is: 123456"). */
export function otpIn(mail: ReceivedMail): string {
  const m = /\(OTP\) is: (\d{6})/.exec(mail.raw);
  if (!m?.[1]) throw new Error(`no OTP in mail:\n${mail.raw}`);
  return m[1];
}

/** The password of an account email ("Password: ..."). */
export function passwordIn(mail: ReceivedMail): string {
  const m = /^Password: (\S+)$/m.exec(mail.raw);
  if (!m?.[1]) throw new Error(`no password in mail:\n${mail.raw}`);
  return m[1];
}
