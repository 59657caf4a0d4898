/**
 * The alert lifecycle of alarm management (docs/api-tour.md) as ISA-18.2 / IEC 62682 names its
 * states: the process state (active / returned to normal) and the operator's (unacknowledged /
 * acknowledged), with shelving and assignment beside them. Pure: no broker, no database.
 */
import { current, isShelved, mayShelve, transition, wantsAttention, type Actor, type LifecycleState } from "../../../services/alerting/lifecycle";

const NOW = Date.UTC(2026, 0, 31, 8, 0, 0);
const MIN = 60_000;
const operator: Actor = { username: "asha.patil", user_type: "general-user" };
const plantAdmin: Actor = { username: "ravi", user_type: "plant-admin" };

const fresh = (over: Partial<LifecycleState> = {}): LifecycleState => ({
  state: "active",
  ack_state: "unacknowledged",
  acked_by: null,
  acked_at: null,
  shelved_until: null,
  assignee: null,
  ...over,
});

function changed(t: ReturnType<typeof transition>) {
  if (t.kind !== "changed") throw new Error(`expected a change, got ${t.kind}`);
  return t;
}

describe("acknowledgement (ISA-18.2 states)", () => {
  it("active unacknowledged → active acknowledged, with who, when and the note", () => {
    const t = changed(transition(fresh(), { action: "acknowledge", note: "on it" }, operator, NOW));
    expect(t.state).toEqual(fresh({ ack_state: "acknowledged", acked_by: "asha.patil", acked_at: NOW }));
    expect(t.entry).toEqual({ at: NOW, by: "asha.patil", action: "acknowledged", detail: "on it" });
  });

  it("without a note the entry's detail is null", () => {
    expect(changed(transition(fresh(), { action: "acknowledge" }, operator, NOW)).entry.detail).toBeNull();
  });

  it("acknowledging an acknowledged alert changes nothing", () => {
    const acked = fresh({ ack_state: "acknowledged", acked_by: "x", acked_at: NOW - MIN });
    expect(transition(acked, { action: "acknowledge", note: "again" }, operator, NOW)).toEqual({ kind: "unchanged" });
  });

  it("active unacknowledged → returned to normal unacknowledged: closing keeps the alert unacknowledged", () => {
    const t = changed(transition(fresh(), { action: "close" }, null, NOW));
    expect(t.state).toEqual(fresh({ state: "closed" }));
    expect(t.entry).toEqual({ at: NOW, by: null, action: "closed", detail: null });
  });

  it("closed unacknowledged → then acknowledged: closed acknowledged", () => {
    const rtn = changed(transition(fresh(), { action: "close" }, null, NOW)).state;
    const t = changed(transition(rtn, { action: "acknowledge" }, operator, NOW + MIN));
    expect(t.state).toEqual(fresh({ state: "closed", ack_state: "acknowledged", acked_by: "asha.patil", acked_at: NOW + MIN }));
  });

  it("active acknowledged → closed: stays acknowledged (normal)", () => {
    const acked = changed(transition(fresh(), { action: "acknowledge" }, operator, NOW)).state;
    const t = changed(transition(acked, { action: "close" }, null, NOW + MIN));
    expect(t.state).toMatchObject({ state: "closed", ack_state: "acknowledged", acked_at: NOW });
  });

  it("closing a closed alert changes nothing", () => {
    expect(transition(fresh({ state: "closed" }), { action: "close" }, null, NOW)).toEqual({ kind: "unchanged" });
  });

  it("the system (no actor) may acknowledge; the entry names nobody", () => {
    expect(changed(transition(fresh(), { action: "acknowledge" }, null, NOW)).entry.by).toBeNull();
  });
});

describe("shelving", () => {
  it("shelves for the minutes asked, the reason as the entry's detail", () => {
    const t = changed(transition(fresh(), { action: "shelve", minutes: 30, reason: "sensor fault" }, plantAdmin, NOW));
    expect(t.state.shelved_until).toBe(NOW + 30 * MIN);
    expect(t.entry).toEqual({ at: NOW, by: "ravi", action: "shelved", detail: "sensor fault" });
    expect(isShelved(t.state, NOW + 30 * MIN - 1)).toBe(true);
  });

  it("is refused below plant-admin (general users, support analysts); allowed from plant-admin up", () => {
    for (const user_type of ["general-user", "support-analyst"] as const) {
      expect(transition(fresh(), { action: "shelve", minutes: 5, reason: "r" }, { username: "u", user_type }, NOW)).toEqual({ kind: "refused", why: "unauthorized" });
      expect(transition(fresh({ shelved_until: NOW + MIN }), { action: "unshelve" }, { username: "u", user_type }, NOW)).toEqual({
        kind: "refused",
        why: "unauthorized",
      });
    }
    for (const user_type of ["plant-admin", "site-admin", "saas-admin"] as const) expect(mayShelve({ username: "u", user_type })).toBe(true);
  });

  it("shelving a shelved alert replaces the shelf", () => {
    const shelved = fresh({ shelved_until: NOW + 60 * MIN });
    expect(changed(transition(shelved, { action: "shelve", minutes: 5, reason: "shorter" }, plantAdmin, NOW)).state.shelved_until).toBe(NOW + 5 * MIN);
  });

  it("a shelf expires by itself: at its end the alert reads as not shelved", () => {
    const shelved = fresh({ shelved_until: NOW + 10 * MIN });
    expect(isShelved(shelved, NOW + 10 * MIN)).toBe(false);
    expect(current(shelved, NOW + 10 * MIN).shelved_until).toBeNull();
    expect(current(shelved, NOW).shelved_until).toBe(NOW + 10 * MIN);
  });

  it("unshelve ends the shelf now", () => {
    const t = changed(transition(fresh({ shelved_until: NOW + MIN }), { action: "unshelve" }, plantAdmin, NOW));
    expect(t.state.shelved_until).toBeNull();
    expect(t.entry).toEqual({ at: NOW, by: "ravi", action: "unshelved", detail: null });
  });

  it("unshelving an alert not shelved, or whose shelf has expired, changes nothing", () => {
    expect(transition(fresh(), { action: "unshelve" }, plantAdmin, NOW)).toEqual({ kind: "unchanged" });
    expect(transition(fresh({ shelved_until: NOW - 1 }), { action: "unshelve" }, plantAdmin, NOW)).toEqual({ kind: "unchanged" });
  });

  it("a shelf survives acknowledgement and return to normal", () => {
    const shelved = fresh({ shelved_until: NOW + 60 * MIN });
    const acked = changed(transition(shelved, { action: "acknowledge" }, operator, NOW)).state;
    expect(acked.shelved_until).toBe(NOW + 60 * MIN);
    expect(changed(transition(acked, { action: "close" }, null, NOW)).state.shelved_until).toBe(NOW + 60 * MIN);
  });

  it("an expired shelf is cleared by the next change", () => {
    const t = changed(transition(fresh({ shelved_until: NOW - MIN }), { action: "acknowledge" }, operator, NOW));
    expect(t.state.shelved_until).toBeNull();
  });
});

describe("assignment", () => {
  it("assigns, the assignee as the entry's detail", () => {
    const t = changed(transition(fresh(), { action: "assign", username: "ravi" }, operator, NOW));
    expect(t.state.assignee).toBe("ravi");
    expect(t.entry).toEqual({ at: NOW, by: "asha.patil", action: "assigned", detail: "ravi" });
  });

  it("re-assigning to another user changes; to the same user changes nothing", () => {
    const assigned = fresh({ assignee: "ravi" });
    expect(changed(transition(assigned, { action: "assign", username: "asha.patil" }, operator, NOW)).state.assignee).toBe("asha.patil");
    expect(transition(assigned, { action: "assign", username: "ravi" }, operator, NOW)).toEqual({ kind: "unchanged" });
  });

  it("assignment works on a closed alert too and leaves acknowledgement alone", () => {
    const t = changed(transition(fresh({ state: "closed" }), { action: "assign", username: "ravi" }, operator, NOW));
    expect(t.state).toMatchObject({ state: "closed", ack_state: "unacknowledged", assignee: "ravi" });
  });
});

describe("whether an alert still wants attention (re-notification, escalation)", () => {
  it("only while active, unacknowledged and not shelved", () => {
    expect(wantsAttention(fresh(), NOW)).toBe(true);
    expect(wantsAttention(fresh({ ack_state: "acknowledged" }), NOW)).toBe(false);
    expect(wantsAttention(fresh({ state: "closed" }), NOW)).toBe(false);
    expect(wantsAttention(fresh({ shelved_until: NOW + 1 }), NOW)).toBe(false);
    expect(wantsAttention(fresh({ shelved_until: NOW }), NOW)).toBe(true);
  });
});
