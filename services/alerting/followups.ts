/**
 * An opened alert's follow-ups (docs/api-tour.md, "Alarm management"), pure: `renotify_every`
 * (notify again every period while active, unacknowledged and not shelved), `escalation` tiers
 * (still unacknowledged `after` the opening: notify the tier's people, once), and the end of a
 * shelf (an alert still active when its shelf ends is notified again, once). Each is a due time
 * kept in `alert_followups`, written when the alert opens (or is shelved) in that transaction, and
 * claimed by one replica's job when due (followups.repo.ts `claimDueFollowups`), so a restart forgets none
 * and two replicas send none twice. This module decides what a due follow-up does, and runs the job.
 *
 * The job (`sendDueFollowups`): every FOLLOWUP_MS, one transaction claims the due follow-ups (FOR
 * UPDATE SKIP LOCKED: a replica's claim is invisible to the others), decides each, stages what it
 * sends on the alerts stream with its history entry and marks it done or due again, all committed
 * together. A crash before the commit leaves the follow-up due (claimed again later); after it,
 * the outbox publishes the notice, and the notifier's key (alert, user, medium, follow-up) makes
 * a redelivery send nothing twice.
 */
import { parseDuration } from "./duration";
import type { AlertOpened, NotifyTo } from "./contract";
import * as repo from "./followups.repo";
import type { AlertStanding, Followup } from "./followups.repo";
import { addHistory } from "./history.repo";
import { isShelved } from "./lifecycle";
import type { AlertingPort } from "./port";
import type { TriggerBody } from "./triggers";

export type Decision =
  /** Send now: `followup` is the notice's key part (the notifier's idempotency key), `next_due` null when done. */
  | { kind: "send"; followup: string; history: "notified" | "escalated"; next_due: number | null }
  /** Paused by a shelf: due again at `next_due`. */
  | { kind: "wait"; next_due: number }
  /** Nothing more to do: closed, suppressed, or acknowledged. */
  | { kind: "done" };

/** The first `due + k·every` (k ≥ 1) after `now`: a process that was down does not send the missed periods in a burst. */
export function nextPeriod(due: number, every: number, now: number): number {
  return due + every * (Math.floor(Math.max(0, now - due) / every) + 1);
}

/**
 * A due follow-up at `now`. Suppressed and closed alerts send nothing; an acknowledged one no
 * re-notification or escalation; a shelf pauses them (a renotify resumes at its next period after
 * the shelf, an escalation when the shelf ends). The end of a shelf notifies an alert still active.
 */
export function decide(f: Followup, a: AlertStanding, now: number): Decision {
  if (a.suppressed || a.state !== "active") return { kind: "done" };
  const shelved = isShelved(a, now);
  if (f.kind === "shelf") {
    // Shelved again meanwhile: the new shelf's end is the one that counts.
    if (shelved) return { kind: "wait", next_due: a.shelved_until as number };
    return { kind: "send", followup: `shelf:${f.sent + 1}`, history: "notified", next_due: null };
  }
  if (a.ack_state === "acknowledged") return { kind: "done" };
  if (f.kind === "escalation") {
    if (shelved) return { kind: "wait", next_due: a.shelved_until as number };
    return { kind: "send", followup: `escalation:${f.tier}`, history: "escalated", next_due: null };
  }
  const every = f.every_ms ?? 0;
  if (every <= 0) return { kind: "done" };
  if (shelved) return { kind: "wait", next_due: nextPeriod(f.due_at, every, a.shelved_until as number) };
  return { kind: "send", followup: `renotify:${f.sent + 1}`, history: "notified", next_due: nextPeriod(f.due_at, every, now) };
}

/** A trigger's follow-up settings, compiled (durations in ms). */
export interface FollowupRule {
  renotifyMs: number | null;
  escalation: { afterMs: number; notifyTo: NotifyTo }[];
}

export function followupRule(t: Pick<TriggerBody, "renotify_every" | "escalation">): FollowupRule {
  return {
    renotifyMs: t.renotify_every !== undefined ? parseDuration(t.renotify_every) : null,
    escalation: (t.escalation ?? []).map((e) => ({
      afterMs: parseDuration(e.after) ?? 0,
      notifyTo: { email: e.email ?? false, sms: e.sms ?? false, whatsapp: e.whatsapp ?? false, users: e.users },
    })),
  };
}

/** The follow-ups an alert opening at `start` gets from its trigger's rule. */
export function openingFollowups(alert_id: string, start: number, rule: FollowupRule): Followup[] {
  const out: Followup[] = [];
  if (rule.renotifyMs) out.push({ alert_id, kind: "renotify", tier: 0, due_at: start + rule.renotifyMs, every_ms: rule.renotifyMs, notify_to: null, sent: 0 });
  rule.escalation.forEach((e, i) =>
    out.push({ alert_id, kind: "escalation", tier: i + 1, due_at: start + e.afterMs, every_ms: null, notify_to: e.notifyTo, sent: 0 }),
  );
  return out;
}

/** Whether a follow-up's recipients would receive anything at all. */
export const reachesAnyone = (n: NotifyTo): boolean => n.users.length > 0 && (n.email || n.sms || n.whatsapp);

/** How often due follow-ups are looked for: a renotify or escalation is sent at most this late. */
export const FOLLOWUP_MS = 1000;
/** The most follow-ups one run claims; the rest wait for the next tick. */
const FOLLOWUP_BATCH = 200;

const historyDetail = (d: Extract<Decision, { kind: "send" }>, notice: AlertOpened): string => {
  const [kind, n] = d.followup.split(":");
  if (kind === "escalation") return `tier ${n}: ${notice.notifyTo.users.join(", ")}`;
  if (kind === "shelf") return "shelf ended while active";
  return `re-notification ${n}`;
};

/** One run of the job: answers how many follow-ups were sent. */
export async function sendDueFollowups(port: AlertingPort, now = Date.now()): Promise<number> {
  const sent = await port.db.transaction(async (tx) => {
    let n = 0;
    for (const due of await repo.claimDueFollowups(tx, now, FOLLOWUP_BATCH)) {
      const d = decide(due.followup, due.alert, now);
      if (d.kind !== "send") {
        await repo.finishFollowup(tx, due.followup, d.kind === "wait" ? d.next_due : null, false);
        continue;
      }
      const notice: AlertOpened = { ...due.notice, notifyTo: due.followup.notify_to ?? due.notice.notifyTo, followup: d.followup };
      if (reachesAnyone(notice.notifyTo)) {
        await port.stageNotice(tx, `${due.followup.alert_id}:${d.followup}`, notice);
        n++;
      }
      await addHistory(tx, due.followup.alert_id, { at: now, by: null, action: d.history, detail: historyDetail(d, notice) });
      await repo.finishFollowup(tx, due.followup, d.next_due, true);
    }
    return n;
  });
  // Committed: publish now rather than at the outbox's next tick.
  if (sent) port.flushNotices();
  return sent;
}
