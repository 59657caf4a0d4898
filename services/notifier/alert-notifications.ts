/**
 * What an opened alert asks for: one notification per user in `notifyTo.users` and per medium set
 * true, each keyed `alert:<alert_id>:<user>:<medium>`, so the same alert handed over again (the
 * alerts stream redelivering after a crash or a timeout, a tool calling the action) sends nothing
 * twice. Email goes to the username (an email address), SMS and WhatsApp to country_code +
 * mobile_number, as the notifier's copy of the contacts has them (contacts.ts). Alerts arrive on the alerts stream (alerts.actions.ts, ALERTS_STREAM, the durable
 * group "notifier"); `notifier.alerts.notify` does the same for tools and tests.
 */
import type { AlertOpened } from "../alerting/contract";
import type { UserContact } from "../auth/contract";
import { inScope, scopeOf, type Principal } from "../../lib/access";
import { config } from "../../lib/config";
import { contactOf } from "./contacts";
import type { Medium, SendResult } from "./delivery";
import { localIso } from "./local-time";
import { startDelivery } from "./notifications";
import { claimDue, recordAttempt, recordNotification } from "./notifications.repo";
import type { NotifierPort } from "./port";
import { phoneNumber } from "./twilio";

const fmt = (v: number | null): string => (v === null ? "n/a" : String(Math.round(v * 1000) / 1000));

/** How a follow-up's subject starts, so that it is not read as a new alert. */
const FOLLOWUP_PREFIX: Record<string, string> = { renotify: "Reminder: ", escalation: "Escalation: ", shelf: "Shelf ended: " };

export function alertSubject(a: AlertOpened): string {
  const prefix = a.followup ? (FOLLOWUP_PREFIX[a.followup.split(":")[0]] ?? "") : "";
  return `${prefix}[${a.severity}] ${a.trigger_name}: ${a.asset || a.monitor} at ${a.plant}, ${a.site}`;
}

/** How an alert's message reads for its people: the site's time zone, and where the console is. */
export interface AlertContent {
  /** IANA zone of the alert's site; undefined: UTC. */
  timeZone: string | undefined;
  /** The service's public base URL (PUBLIC_URL), no trailing slash. */
  publicUrl: string;
}

const defaultContent = (a: AlertOpened): AlertContent => ({ timeZone: a.timezone, publicUrl: config().publicUrl });

/** The console's page of the alert, where it is acknowledged (the link format is fixed: docs/architecture.md §1). */
export const alertLink = (publicUrl: string, alert_id: string): string => `${publicUrl}/#/alerts/${alert_id}`;

/** The start as the site reads it: local time with its offset, and the zone's name. */
function started(a: AlertOpened, content: AlertContent): string {
  const zone = content.timeZone ? ` (${content.timeZone})` : "";
  return `${localIso(a.start_ts, content.timeZone)}${zone}`;
}

/**
 * Names the site, plant, asset, monitor, tag, value, threshold, severity and start time (in the
 * site's time zone), and says what to do: look, then acknowledge at the console's link.
 */
export function alertText(a: AlertOpened, content: AlertContent = defaultContent(a)): string {
  const unit = a.unit ? ` ${a.unit}` : "";
  const lines = [
    `Alert: ${a.trigger_name} (watcher ${a.watcher_name})`,
    `Severity: ${a.severity}`,
    `Site: ${a.site}`,
    `Plant: ${a.plant}`,
    `Asset: ${a.asset}`,
    `Monitor: ${a.monitor}`,
    `Tag: ${a.tag}`,
    a.reason === "no_data" ? `No data: no reading for ${a.no_data} while the gateway runs` : `Value: ${fmt(a.value)}${unit} (threshold ${a.comparison} ${fmt(a.threshold)}${unit})`,
    `Started: ${started(a, content)}`,
  ];
  for (const c of a.conditions.slice(1)) {
    if (a.reason === "no_data") lines.push(`Also no data: ${c.monitor} ${c.tag}`);
    else lines.push(`Also: ${c.monitor} ${c.tag} = ${fmt(c.value)}${c.tag_unit ? ` ${c.tag_unit}` : ""} (threshold ${c.comparison} ${fmt(c.threshold)})`);
  }
  lines.push(`Alert ID: ${a.alert_id}`);
  lines.push(
    "",
    "What to do: check the asset now, then acknowledge the alert so that the team knows it is being handled",
    "(unacknowledged alerts may be escalated):",
    `Acknowledge: ${alertLink(content.publicUrl, a.alert_id)}`,
  );
  return lines.join("\n");
}

/** One line for a phone, with the link to acknowledge. */
export function alertShortText(a: AlertOpened, content: AlertContent = defaultContent(a)): string {
  const unit = a.unit ? ` ${a.unit}` : "";
  if (a.reason === "no_data") {
    return `${a.severity} alert: ${a.trigger_name}. ${a.site} / ${a.plant} / ${a.asset} / ${a.monitor}: no ${a.tag} reading for ${a.no_data} since ${localIso(a.start_ts, content.timeZone)}. Acknowledge: ${alertLink(content.publicUrl, a.alert_id)}`;
  }
  return `${a.severity} alert: ${a.trigger_name}. ${a.site} / ${a.plant} / ${a.asset} / ${a.monitor}: ${a.tag} ${fmt(a.value)}${unit} (threshold ${a.comparison} ${fmt(a.threshold)}${unit}) since ${localIso(a.start_ts, content.timeZone)}. Acknowledge: ${alertLink(content.publicUrl, a.alert_id)}`;
}

/**
 * The site's zone: the notice's own, else config's (a notice staged before notices carried it);
 * undefined (UTC) when neither can say.
 */
async function siteZone(port: NotifierPort, a: AlertOpened): Promise<string | undefined> {
  if (a.timezone) return a.timezone;
  if (!a.site_id) return undefined;
  const site = await port.resolveSite(a.site_id);
  return site?.timezone || undefined;
}

const MEDIA: Medium[] = ["email", "sms", "whatsapp"];

/** A contact's place as a principal's: scope is decided by type and place, never by modules. */
const contactScope = (c: UserContact): Principal => ({ username: c.username, user_type: c.user_type, site_id: c.site_id, plant_id: c.plant_id, modules: [] });

/** The notifications an opened alert asks for, recorded and started. */
export async function notifyAlert(port: NotifierPort, a: AlertOpened): Promise<SendResult[]> {
  const media = MEDIA.filter((m) => a.notifyTo[m]);
  // From the notifier's copy (contacts.ts): a null is a user known to be unknown; a name the copy
  // cannot yet tell of throws, before anything is recorded, so the alert is handed over again.
  const contacts = await Promise.all(a.notifyTo.users.map((username) => contactOf(port, username)));
  const content: AlertContent = { timeZone: await siteZone(port, a), publicUrl: config().publicUrl };
  const results: SendResult[] = [];
  for (const [i, username] of a.notifyTo.users.entries()) {
    const found = contacts[i] ?? null;
    // A watcher may name anyone; another tenant's user must not read this plant's alert.
    const outside = found !== null && a.site_id !== undefined && !inScope(scopeOf(contactScope(found)), { site_id: a.site_id, plant_id: a.plant_id ?? null });
    const contact = outside ? null : found;
    for (const medium of media) {
      const recipient = !contact ? "" : medium === "email" ? contact.username : phoneNumber(contact.country_code, contact.mobile_number);
      const { row, created } = await recordNotification(
        port.db,
        {
          medium,
          recipient,
          subject: medium === "email" ? alertSubject(a) : null,
          body: medium === "email" ? alertText(a, content) : alertShortText(a, content),
          // A follow-up is a notification of its own, once: its key part follows the opening's key.
          idempotency_key: `alert:${a.alert_id}:${username.toLowerCase()}:${medium}${a.followup ? `:${a.followup}` : ""}`,
          sensitive: false,
        },
        Date.now(),
      );
      // Recorded, not dropped: nobody by that name to deliver to. Claimed first, so no sweep tries it meanwhile.
      const [claimed] = created && !contact ? await claimDue(port.db, Date.now(), { id: row.notification_id, limit: 1 }) : [];
      if (claimed) {
        await recordAttempt(port.db, claimed, 1, Date.now(), {
          outcome: "permanent",
          status: "failed",
          nextAttemptAt: null,
          error: outside ? `user ${username} is outside the alert's site or plant` : `unknown user ${username}`,
          redact: false,
        });
        port.countFinal("failed", medium);
        results.push({ notification_id: row.notification_id, status: "failed" });
        continue;
      }
      if (created) startDelivery(port, row.notification_id);
      results.push({ notification_id: row.notification_id, status: row.status });
    }
  }
  return results;
}
