/** An opened alert's follow-ups (`alert_followups`) and the notice they send again (`alert_notices`). */
import type { AlertOpened, NotifyTo } from "./contract";
import type { AckState } from "./lifecycle";
import { rows, type Queryable } from "./sql";

export type FollowupKind = "renotify" | "escalation" | "shelf";

/** A follow-up as stored. `sent`: how many times it was sent already. */
export interface Followup {
  alert_id: string;
  kind: FollowupKind;
  /** 0 for renotify and shelf; the escalation tier, from 1. */
  tier: number;
  due_at: number;
  /** renotify: its period. */
  every_ms: number | null;
  /** escalation: the tier's people and media; otherwise the trigger's (the opening notice's). */
  notify_to: NotifyTo | null;
  sent: number;
}

/** What a follow-up needs to know of its alert when it is due. */
export interface AlertStanding {
  state: "active" | "closed";
  ack_state: "unacknowledged" | "acknowledged";
  shelved_until: number | null;
  suppressed: boolean;
}

/**
 * Keeps an opened alert's notice and its follow-ups, in the transaction that opens it. The notice
 * is kept whether or not the trigger has follow-ups: the end of a shelf sends it again.
 */
export async function insertFollowups(tx: Queryable, alert_id: string, notice: object, followups: Followup[]): Promise<void> {
  await tx.query(
    `WITH kept AS (INSERT INTO alert_notices (alert_id, notice) VALUES ($1::uuid, $2::jsonb) ON CONFLICT DO NOTHING)
     INSERT INTO alert_followups (alert_id, kind, tier, due_at, every_ms, notify_to)
     SELECT $1::uuid, * FROM unnest($3::text[], $4::int[], $5::bigint[], $6::bigint[], $7::jsonb[])
     ON CONFLICT DO NOTHING`,
    [
      alert_id,
      JSON.stringify(notice),
      followups.map((f) => f.kind),
      followups.map((f) => f.tier),
      followups.map((f) => f.due_at),
      followups.map((f) => f.every_ms),
      followups.map((f) => (f.notify_to ? JSON.stringify(f.notify_to) : null)),
    ],
  );
}

/**
 * A shelf set (`until` epoch ms) or ended by hand (`until` null), in the transaction of the change:
 * the shelf's end is due then (a shelf replaced moves it); unshelving cancels it. Only alerts that
 * notify someone (a kept notice) get one.
 */
export async function scheduleShelfEnd(tx: Queryable, alert_id: string, until: number | null): Promise<void> {
  if (until === null) {
    await tx.query(`UPDATE alert_followups SET done = true WHERE alert_id = $1 AND kind = 'shelf' AND NOT done`, [alert_id]);
    return;
  }
  await tx.query(
    `INSERT INTO alert_followups (alert_id, kind, tier, due_at) SELECT alert_id, 'shelf', 0, $2 FROM alert_notices WHERE alert_id = $1
     ON CONFLICT (alert_id, kind, tier) DO UPDATE SET due_at = EXCLUDED.due_at, done = false`,
    [alert_id, until],
  );
}

/** A due follow-up, claimed, with what its alert now is and the notice it sends again. */
export interface DueFollowup {
  followup: Followup;
  alert: AlertStanding;
  watcher_id: string;
  notice: AlertOpened;
}

/**
 * Claims up to `limit` due follow-ups for the caller's transaction: locked, and skipped by every
 * other replica's claim (SKIP LOCKED) until that transaction ends, so each is handled once.
 */
export async function claimDueFollowups(tx: Queryable, now: number, limit: number): Promise<DueFollowup[]> {
  const found = await rows<{
    alert_id: string;
    kind: FollowupKind;
    tier: number;
    due_at: string;
    every_ms: string | null;
    notify_to: NotifyTo | null;
    sent: number;
    state: "active" | "closed";
    ack_state: AckState;
    shelved_until: string | null;
    suppressed: boolean;
    watcher_id: string;
    notice: AlertOpened;
  }>(
    tx,
    `SELECT f.alert_id, f.kind, f.tier, f.due_at, f.every_ms, f.notify_to, f.sent,
            a.state, a.ack_state, a.shelved_until, a.suppressed, a.watcher_id, n.notice
       FROM alert_followups f
       JOIN alerts a USING (alert_id)
       JOIN alert_notices n USING (alert_id)
      WHERE NOT f.done AND f.due_at <= $1
      ORDER BY f.due_at
      LIMIT $2
        FOR UPDATE OF f SKIP LOCKED`,
    [now, limit],
  );
  return found.map((r) => ({
    followup: {
      alert_id: r.alert_id,
      kind: r.kind,
      tier: r.tier,
      due_at: Number(r.due_at),
      every_ms: r.every_ms === null ? null : Number(r.every_ms),
      notify_to: r.notify_to,
      sent: r.sent,
    },
    alert: { state: r.state, ack_state: r.ack_state, shelved_until: r.shelved_until === null ? null : Number(r.shelved_until), suppressed: r.suppressed },
    watcher_id: r.watcher_id,
    notice: r.notice,
  }));
}

/** A claimed follow-up handled: due again at `next_due`, or done (null); `sent` counts a sending. */
export async function finishFollowup(tx: Queryable, f: Followup, next_due: number | null, sent: boolean): Promise<void> {
  await tx.query(
    `UPDATE alert_followups SET due_at = COALESCE($4, due_at), done = ($4::bigint IS NULL), sent = sent + $5
      WHERE alert_id = $1 AND kind = $2 AND tier = $3`,
    [f.alert_id, f.kind, f.tier, next_due, sent ? 1 : 0],
  );
}
