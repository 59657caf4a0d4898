/**
 * An alert's life as ISA-18.2 / IEC 62682 sees it (docs/api-tour.md, "Alarm management"), pure:
 * (the alert's lifecycle state, an action, who acts, now) → the new state and the history entry it
 * writes, nothing (the action changes nothing: acknowledging twice, unshelving what is not
 * shelved), or a refusal. The process state (`active`/`closed`) is the evaluator's; acknowledgement
 * is the operator's, so the two are independent: an alert that returns to normal unacknowledged
 * stays unacknowledged until someone acknowledges it.
 */
import type { UserType } from "../../lib/access";
import { MINUTE_MS } from "../../lib/time";

export type AckState = "unacknowledged" | "acknowledged";

export const HISTORY_ACTIONS = ["opened", "notified", "acknowledged", "assigned", "shelved", "unshelved", "escalated", "noted", "closed"] as const;
export type HistoryAction = (typeof HISTORY_ACTIONS)[number];

export interface LifecycleState {
  state: "active" | "closed";
  ack_state: AckState;
  acked_by: string | null;
  /** Epoch ms. */
  acked_at: number | null;
  /** Epoch ms; a time in the past means the shelf has expired (see `isShelved`). */
  shelved_until: number | null;
  assignee: string | null;
}

/** Who acts: a user, or the system (null) for what the evaluator does. */
export interface Actor {
  username: string;
  user_type: UserType;
}

export type LifecycleAction =
  | { action: "acknowledge"; note?: string }
  | { action: "shelve"; minutes: number; reason: string }
  | { action: "unshelve" }
  | { action: "assign"; username: string }
  | { action: "close" };

export interface HistoryEntry {
  at: number;
  /** The username, or null for the system. */
  by: string | null;
  action: HistoryAction;
  detail: string | null;
}

export type Transition =
  | { kind: "changed"; state: LifecycleState; entry: HistoryEntry }
  | { kind: "unchanged" }
  | { kind: "refused"; why: "unauthorized" };

export { MINUTE_MS };
export const SHELVE_MAX_MINUTES = 10_080;
export const SHELVE_REASON_MAX = 500;

/** Shelving silences an alarm: plant-admin and above (a support analyst reads, it does not silence). */
const SHELVERS: readonly UserType[] = ["saas-admin", "site-admin", "plant-admin"];

export function mayShelve(actor: Actor | null): boolean {
  return actor === null || SHELVERS.includes(actor.user_type);
}

/** A shelf ends by itself: once `shelved_until` has passed the alert is no longer shelved. */
export function isShelved(s: Pick<LifecycleState, "shelved_until">, now: number): boolean {
  return s.shelved_until !== null && s.shelved_until > now;
}

/** The state as it reads at `now`: an expired shelf is no shelf. */
export function current(s: LifecycleState, now: number): LifecycleState {
  return isShelved(s, now) || s.shelved_until === null ? s : { ...s, shelved_until: null };
}

/** Whether the alert should still be notified (re-notifications, escalations): active, unacknowledged, not shelved. */
export function wantsAttention(s: LifecycleState, now: number): boolean {
  return s.state === "active" && s.ack_state === "unacknowledged" && !isShelved(s, now);
}

export function transition(before: LifecycleState, a: LifecycleAction, actor: Actor | null, now: number): Transition {
  const s = current(before, now);
  const by = actor?.username ?? null;
  const changed = (state: LifecycleState, action: HistoryAction, detail: string | null = null): Transition => ({
    kind: "changed",
    state,
    entry: { at: now, by, action, detail },
  });
  switch (a.action) {
    case "acknowledge":
      // ISA-18.2: acknowledging is possible while active and after return to normal; a second one changes nothing.
      if (s.ack_state === "acknowledged") return { kind: "unchanged" };
      return changed({ ...s, ack_state: "acknowledged", acked_by: by, acked_at: now }, "acknowledged", a.note ?? null);
    case "shelve":
      if (!mayShelve(actor)) return { kind: "refused", why: "unauthorized" };
      // Shelving again replaces the shelf (longer or shorter): the newest decision holds.
      return changed({ ...s, shelved_until: now + a.minutes * MINUTE_MS }, "shelved", a.reason);
    case "unshelve":
      if (!mayShelve(actor)) return { kind: "refused", why: "unauthorized" };
      if (!isShelved(s, now)) return { kind: "unchanged" };
      return changed({ ...s, shelved_until: null }, "unshelved");
    case "assign":
      if (s.assignee === a.username) return { kind: "unchanged" };
      return changed({ ...s, assignee: a.username }, "assigned", a.username);
    case "close":
      // Return to normal: acknowledgement and shelf are left as they are ("returned to normal, unacknowledged").
      if (s.state === "closed") return { kind: "unchanged" };
      return changed({ ...s, state: "closed" }, "closed");
  }
}
