/**
 * An opened alert's follow-ups (docs/api-tour.md, "Alarm management"), pure: `renotify_every`
 * (notify again every period while active, unacknowledged and not shelved), `escalation` tiers
 * (still unacknowledged `after` the opening: notify the tier's people, once), and the end of a
 * shelf (an alert still active when its shelf ends is notified again, once). Each is a due time
 * kept in `alert_followups`, written when the alert opens (or is shelved) in that transaction, and
 * claimed by one replica's job when due (followups.repo.ts `claimDueFollowups`), so a restart forgets none
 * and two replicas send none twice. This module decides what a due follow-up does.
 */
import { parseDuration } from "./duration";
import type { AlertStanding, Followup } from "./followups.repo";
import { isShelved } from "./lifecycle";
import type { NotifyTo } from "./contract";
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
