/**
 * The due-time rules of an alert's follow-ups (services/alerting/followups.ts): what a due
 * re-notification, escalation tier or shelf end does for an alert as it now stands.
 */
import { decide, followupRule, nextPeriod, openingFollowups } from "../../../services/alerting/followups";
import type { AlertStanding, Followup } from "../../../services/alerting/followups.repo";

const T = 1_700_000_000_000;
const active: AlertStanding = { state: "active", ack_state: "unacknowledged", shelved_until: null, suppressed: false };
const tier = { email: true, sms: false, whatsapp: false, users: ["lead@example.com"] };
const renotify: Followup = { alert_id: "a", kind: "renotify", tier: 0, due_at: T, every_ms: 60_000, notify_to: null, sent: 0 };
const escalation: Followup = { alert_id: "a", kind: "escalation", tier: 2, due_at: T, every_ms: null, notify_to: tier, sent: 0 };
const shelfEnd: Followup = { alert_id: "a", kind: "shelf", tier: 0, due_at: T, every_ms: null, notify_to: null, sent: 0 };

describe("follow-ups when an alert opens", () => {
  it("none for a trigger without renotify_every or escalation", () => {
    expect(openingFollowups("a", T, followupRule({}))).toEqual([]);
  });

  it("a renotify due one period after the start, and each tier `after` the start, tiers numbered from 1", () => {
    const rule = followupRule({ renotify_every: "5m", escalation: [{ after: "15m", users: ["x"], email: true }, { after: "1h", users: ["y"], sms: true }] });
    expect(openingFollowups("a", T, rule)).toEqual([
      { alert_id: "a", kind: "renotify", tier: 0, due_at: T + 300_000, every_ms: 300_000, notify_to: null, sent: 0 },
      { alert_id: "a", kind: "escalation", tier: 1, due_at: T + 900_000, every_ms: null, notify_to: { email: true, sms: false, whatsapp: false, users: ["x"] }, sent: 0 },
      { alert_id: "a", kind: "escalation", tier: 2, due_at: T + 3_600_000, every_ms: null, notify_to: { email: false, sms: true, whatsapp: false, users: ["y"] }, sent: 0 },
    ]);
  });
});

describe("a due re-notification", () => {
  it("sends while active, unacknowledged and not shelved, numbered, and is due again one period later", () => {
    expect(decide(renotify, active, T)).toEqual({ kind: "send", followup: "renotify:1", history: "notified", next_due: T + 60_000 });
    expect(decide({ ...renotify, sent: 4 }, active, T + 10)).toMatchObject({ followup: "renotify:5", next_due: T + 60_000 });
  });

  it("after a pause (a process down) sends once and resumes at the next period, not a burst", () => {
    expect(decide(renotify, active, T + 185_000)).toMatchObject({ kind: "send", next_due: T + 240_000 });
    expect(nextPeriod(T, 60_000, T + 60_000)).toBe(T + 120_000);
  });

  it("stops once acknowledged, closed or suppressed", () => {
    expect(decide(renotify, { ...active, ack_state: "acknowledged" }, T)).toEqual({ kind: "done" });
    expect(decide(renotify, { ...active, state: "closed" }, T)).toEqual({ kind: "done" });
    expect(decide(renotify, { ...active, suppressed: true }, T)).toEqual({ kind: "done" });
  });

  it("pauses while shelved, resuming at its first period after the shelf", () => {
    expect(decide(renotify, { ...active, shelved_until: T + 150_000 }, T)).toEqual({ kind: "wait", next_due: T + 180_000 });
    // A shelf that has ended is no shelf.
    expect(decide(renotify, { ...active, shelved_until: T - 1 }, T)).toMatchObject({ kind: "send" });
  });
});

describe("a due escalation tier", () => {
  it("sends once, as its tier", () => {
    expect(decide(escalation, active, T)).toEqual({ kind: "send", followup: "escalation:2", history: "escalated", next_due: null });
  });

  it("does not send when the alert was acknowledged in time, closed or suppressed", () => {
    expect(decide(escalation, { ...active, ack_state: "acknowledged" }, T)).toEqual({ kind: "done" });
    expect(decide(escalation, { ...active, state: "closed" }, T)).toEqual({ kind: "done" });
    expect(decide(escalation, { ...active, suppressed: true }, T)).toEqual({ kind: "done" });
  });

  it("waits for the end of a shelf", () => {
    expect(decide(escalation, { ...active, shelved_until: T + 5000 }, T)).toEqual({ kind: "wait", next_due: T + 5000 });
  });
});

describe("the end of a shelf", () => {
  it("notifies an alert still active, once", () => {
    expect(decide(shelfEnd, { ...active, shelved_until: T }, T)).toEqual({ kind: "send", followup: "shelf:1", history: "notified", next_due: null });
    expect(decide({ ...shelfEnd, sent: 1 }, active, T)).toMatchObject({ followup: "shelf:2" });
  });

  it("notifies nothing for an alert closed meanwhile or suppressed", () => {
    expect(decide(shelfEnd, { ...active, state: "closed" }, T)).toEqual({ kind: "done" });
    expect(decide(shelfEnd, { ...active, suppressed: true }, T)).toEqual({ kind: "done" });
  });

  it("waits for a shelf that was replaced by a longer one", () => {
    expect(decide(shelfEnd, { ...active, shelved_until: T + 60_000 }, T)).toEqual({ kind: "wait", next_due: T + 60_000 });
  });
});
