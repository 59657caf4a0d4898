/**
 * The follow-up job (followups.ts): every FOLLOWUP_MS, one transaction claims the due follow-ups
 * (FOR UPDATE SKIP LOCKED: a replica's claim is invisible to the others), decides each, stages
 * what it sends on the alerts stream with its history entry and marks it done or due again, all
 * committed together. A crash before the commit leaves the follow-up due (claimed again later);
 * after it, the outbox publishes the notice, and the notifier's key (alert, user, medium,
 * follow-up) makes a redelivery send nothing twice.
 */
import type { AlertingThis } from "./alerting.types";
import { STREAMS, type AlertOpened } from "./contract";
import { decide, reachesAnyone, type Decision } from "./followups";
import * as repo from "./followups.repo";
import { addHistory } from "./history.repo";

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

/** One run: answers how many follow-ups were sent. */
export async function sendDueFollowups(self: AlertingThis, now = Date.now()): Promise<number> {
  const sent = await self.tx().transaction(async (tx) => {
    let n = 0;
    for (const due of await repo.claimDueFollowups(tx, now, FOLLOWUP_BATCH)) {
      const d = decide(due.followup, due.alert, now);
      if (d.kind !== "send") {
        await repo.finishFollowup(tx, due.followup, d.kind === "wait" ? d.next_due : null, false);
        continue;
      }
      const notice: AlertOpened = { ...due.notice, notifyTo: due.followup.notify_to ?? due.notice.notifyTo, followup: d.followup };
      if (reachesAnyone(notice.notifyTo)) {
        await self.streams.stage(tx, STREAMS.alerts, `${due.followup.alert_id}:${d.followup}`, notice, due.watcher_id);
        n++;
      }
      await addHistory(tx, due.followup.alert_id, { at: now, by: null, action: d.history, detail: historyDetail(d, notice) });
      await repo.finishFollowup(tx, due.followup, d.next_due, true);
    }
    return n;
  });
  // Committed: publish now rather than at the outbox's next tick.
  if (sent) self.streams.flush();
  return sent;
}
