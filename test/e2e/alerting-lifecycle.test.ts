/**
 * Alarm management over HTTP (docs/api-tour.md): the alert fetch with its history, acknowledge
 * (one and bulk), shelve and its expiry, unshelve, assign, and the list and count filters.
 * Alerts are opened and closed by the live evaluation (`alerting.evaluate`, as the readings
 * stream's consumer calls it), on the real PostgreSQL.
 */
import { randomUUID } from "node:crypto";
import { Client } from "pg";
import { envelope } from "../helpers/envelope";
import { startTestNode, type TestNode } from "../helpers/node";
import { idFrom, makePlace, makeUser, watcherBody, type Place } from "./alerting-fixtures";

let t: TestNode;
let place: Place;
let other: Place;
const T0 = Date.now() - 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "+00:00");
const ISO_OFFSET = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$/;

const err = (status: number, message: string, field?: string) => ({ status, body: envelope(status, message, field) });
const pick = (res: { status: number; body: unknown }) => ({ status: res.status, body: res.body });
const ok = (body: unknown) => ({ status: 200, body });

interface Alert {
  _id: string;
  state: string;
  severity: string;
  trigger_id: string;
  ack_state: string;
  acked_by: string | null;
  acked_at: string | null;
  shelved_until: string | null;
  assignee: string | null;
  suppressed: boolean;
  reason: string;
  history?: { at: string; by: string | null; action: string; detail: string | null }[];
}

type Who = { username: string; password: string };
let operator: Who; // general-user of the plant, with the Alerting module
let plantAdmin: Who;
let stranger: Who; // plant-admin of another site
let hot: Alert; // t1, high, stays active
let rough: Alert; // t2, medium, closes unacknowledged

function evaluate(readings: { monitor_id: string; tag_id: string; ts: number; value: number }[]) {
  return t.node.broker.call<{ opened: number; closed: number }, object>("alerting.evaluate", { readings });
}
const reading = (tag_id: string, ts: number, value: number, monitor_id = place.monitor_id) => ({ monitor_id, tag_id, ts, value });

/** An active alert's `duration` grows with the clock: "nothing changed" compares the rest. */
const stateOf = (a: Alert) => {
  const { duration: _duration, ...rest } = a as Alert & { duration?: number };
  return rest;
};

async function fetchAlert(id: string, auth?: Who): Promise<Alert> {
  const res = await t.http<Alert>("GET", `/_alerting/alerts/${id}`, auth ? { auth } : {});
  expect(res.status).toBe(200);
  return res.body;
}

async function sql(text: string, params: unknown[] = []): Promise<void> {
  const c = new Client({ connectionString: t.db.url });
  await c.connect();
  try {
    await c.query(`SET search_path TO alerting`);
    await c.query(text, params);
  } finally {
    await c.end();
  }
}

beforeAll(async () => {
  t = await startTestNode({ services: ["api", "auth", "config", "alerting"] });
  place = await makePlace(t.http, "l1");
  other = await makePlace(t.http, "l2");
  const body = watcherBody(place, randomUUID(), { watcher_name: "Pump watch" }, { minimum_duration: "0s" });
  body.triggers.push({
    ...body.triggers[0],
    id: "t2",
    name: "Running rough",
    condition: [{ comparison: ">", monitor_id: place.monitor_id, tag_id: "vib", threshold: "7.1" }],
    severity: 2,
  });
  idFrom((await t.http("POST", "/_alerting/watchers", { body })).body);
  operator = await makeUser(t.http, { username: "op-l1@example.com", user_type: "general-user", site_id: place.site_id, plant_id: place.plant_id, modules: ["Alerting"] });
  plantAdmin = await makeUser(t.http, { username: "padmin-l1@example.com", user_type: "plant-admin", site_id: place.site_id, plant_id: place.plant_id });
  stranger = await makeUser(t.http, { username: "padmin-l2@example.com", user_type: "plant-admin", site_id: other.site_id, plant_id: other.plant_id });

  expect(await evaluate([reading("temp", T0, 90), reading("vib", T0 + 1000, 9)])).toMatchObject({ opened: 2 });
  const list = (await t.http<Alert[]>("GET", `/_alerting/alerts/_list?function_id=${place.function_id}&is_hidden=0`)).body;
  hot = list.find((a) => a.trigger_id === "t1")!;
  rough = list.find((a) => a.trigger_id === "t2")!;
});
afterAll(async () => {
  await t?.stop();
});

describe("GET /_alerting/alerts/<alert_id>", () => {
  it("answers the alert as listed, with the new fields and its history oldest first", async () => {
    const a = await fetchAlert(hot._id);
    const { history, ...alert } = a;
    expect(alert).toEqual(hot);
    expect(alert).toMatchObject({ ack_state: "unacknowledged", acked_by: null, acked_at: null, shelved_until: null, assignee: null, suppressed: false, reason: "condition" });
    expect(history).toEqual([
      { at: iso(T0), by: null, action: "opened", detail: null },
      { at: iso(T0), by: null, action: "notified", detail: "opening: 1 recipient by email" },
    ]);
  });

  it("answers 400 Invalid Alert ID for an unknown, malformed or out-of-scope alert", async () => {
    const unknown = randomUUID();
    expect(pick(await t.http("GET", `/_alerting/alerts/${unknown}`))).toEqual(err(400, `Invalid Alert ID: ${unknown}`));
    expect(pick(await t.http("GET", `/_alerting/alerts/nope`))).toEqual(err(400, "Invalid Alert ID: nope"));
    expect(pick(await t.http("GET", `/_alerting/alerts/${hot._id}`, { auth: stranger }))).toEqual(err(400, `Invalid Alert ID: ${hot._id}`));
  });

  it("lets a plant user with the module read its plant's alert", async () => {
    expect((await fetchAlert(hot._id, operator))._id).toBe(hot._id);
  });
});

describe("acknowledge one alert", () => {
  it("closing unacknowledged keeps it unacknowledged (returned to normal, unacknowledged), with `closed` in its history", async () => {
    expect(await evaluate([reading("vib", T0 + 5000, 1)])).toMatchObject({ closed: 1 });
    const a = await fetchAlert(rough._id);
    expect(a).toMatchObject({ state: "closed", ack_state: "unacknowledged", acked_by: null });
    expect(a.history).toEqual([
      { at: iso(T0 + 1000), by: null, action: "opened", detail: null },
      { at: iso(T0 + 1000), by: null, action: "notified", detail: "opening: 1 recipient by email" },
      { at: iso(T0 + 5000), by: null, action: "closed", detail: null },
    ]);
  });

  it("acknowledges a closed alert, with the note as the entry's detail", async () => {
    const before = Date.now();
    expect(pick(await t.http("POST", `/_alerting/alerts/${rough._id}/_ack`, { body: { note: "Seen, was a loose mount" }, auth: operator }))).toEqual(
      ok("Alert acknowledged"),
    );
    const a = await fetchAlert(rough._id);
    expect(a).toMatchObject({ state: "closed", ack_state: "acknowledged", acked_by: operator.username });
    expect(a.acked_at).toMatch(ISO_OFFSET);
    expect(Date.parse(a.acked_at!)).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
    expect(a.history!.at(-1)).toEqual({ at: a.acked_at, by: operator.username, action: "acknowledged", detail: "Seen, was a loose mount" });
  });

  it("again: the same answer, and nothing changes", async () => {
    const before = await fetchAlert(rough._id);
    expect(pick(await t.http("POST", `/_alerting/alerts/${rough._id}/_ack`, { body: { note: "again" } }))).toEqual(ok("Alert acknowledged"));
    expect(stateOf(await fetchAlert(rough._id))).toEqual(stateOf(before));
  });

  it("acknowledges without a body", async () => {
    expect(pick(await t.http("POST", `/_alerting/alerts/${hot._id}/_ack`))).toEqual(ok("Alert acknowledged"));
    const a = await fetchAlert(hot._id);
    expect(a).toMatchObject({ state: "active", ack_state: "acknowledged", acked_by: "admin@localhost" });
    expect(a.history!.at(-1)).toMatchObject({ action: "acknowledged", detail: null });
    // Undo for the later tests, as a fresh alert would be.
    await sql(`UPDATE alerts SET ack_state = 'unacknowledged', acked_by = NULL, acked_at = NULL WHERE alert_id = $1`, [hot._id]);
  });

  it("answers 400 Invalid Alert ID for unknown and out-of-scope alerts, and Invalid input for a bad note", async () => {
    const unknown = randomUUID();
    expect(pick(await t.http("POST", `/_alerting/alerts/${unknown}/_ack`))).toEqual(err(400, `Invalid Alert ID: ${unknown}`));
    expect(pick(await t.http("POST", `/_alerting/alerts/${hot._id}/_ack`, { auth: stranger }))).toEqual(err(400, `Invalid Alert ID: ${hot._id}`));
    expect(pick(await t.http("POST", `/_alerting/alerts/${hot._id}/_ack`, { body: { note: 5 } }))).toEqual(err(400, "Invalid input: note", "note"));
    expect(pick(await t.http("POST", `/_alerting/alerts/${hot._id}/_ack`, { body: { x: 1 } }))).toEqual(err(400, "Invalid input: x", "x"));
    expect((await fetchAlert(hot._id)).ack_state).toBe("unacknowledged");
  });
});

describe("acknowledge many: POST /_alerting/alerts/_ack", () => {
  let third: Alert;
  beforeAll(async () => {
    // A second t2 alert, active and unacknowledged.
    await evaluate([reading("vib", T0 + 10_000, 9)]);
    const all = (await t.http<Alert[]>("GET", `/_alerting/alerts/_list?function_id=${place.function_id}&is_hidden=0&state=active`)).body;
    third = all.find((a) => a.trigger_id === "t2")!;
    expect(third).toBeDefined();
  });

  it("counts only the alerts that became acknowledged: out of scope, unknown, malformed and already acknowledged are not", async () => {
    const ids = [hot._id, third._id, rough._id, randomUUID(), "junk", hot._id];
    expect(pick(await t.http("POST", "/_alerting/alerts/_ack", { body: { alert_ids: ids }, auth: stranger }))).toEqual(ok({ acknowledged: 0 }));
    expect(pick(await t.http("POST", "/_alerting/alerts/_ack", { body: { alert_ids: ids }, auth: operator }))).toEqual(ok({ acknowledged: 2 }));
    for (const id of [hot._id, third._id]) {
      const a = await fetchAlert(id);
      expect(a).toMatchObject({ ack_state: "acknowledged", acked_by: operator.username });
      expect(a.history!.filter((h) => h.action === "acknowledged" && h.by === operator.username)).toHaveLength(1);
    }
    expect(pick(await t.http("POST", "/_alerting/alerts/_ack", { body: { alert_ids: ids } }))).toEqual(ok({ acknowledged: 0 }));
  });

  it("answers Insufficient inputs without ids and Invalid input for none or more than 500", async () => {
    expect(pick(await t.http("POST", "/_alerting/alerts/_ack", { body: {} }))).toEqual(err(400, "Insufficient inputs", "alert_ids"));
    expect(pick(await t.http("POST", "/_alerting/alerts/_ack", { body: { alert_ids: [] } }))).toEqual(err(400, "Invalid input: alert_ids", "alert_ids"));
    const many = Array.from({ length: 501 }, () => randomUUID());
    expect(pick(await t.http("POST", "/_alerting/alerts/_ack", { body: { alert_ids: many } }))).toEqual(err(400, "Invalid input: alert_ids", "alert_ids"));
    expect(pick(await t.http("POST", "/_alerting/alerts/_ack", { body: { alert_ids: "x" } }))).toEqual(err(400, "Invalid input: alert_ids", "alert_ids"));
  });
});

describe("shelve and unshelve", () => {
  it("a plant-admin shelves for the minutes given, the reason in the history", async () => {
    const before = Date.now();
    expect(pick(await t.http("POST", `/_alerting/alerts/${hot._id}/_shelve`, { body: { minutes: 90, reason: "Sensor fault, WO 4711" }, auth: plantAdmin }))).toEqual(
      ok("Alert shelved"),
    );
    const a = await fetchAlert(hot._id);
    expect(a.shelved_until).toMatch(ISO_OFFSET);
    const until = Date.parse(a.shelved_until!);
    expect(until).toBeGreaterThanOrEqual(Math.floor((before + 90 * 60_000) / 1000) * 1000);
    expect(until).toBeLessThanOrEqual(Date.now() + 90 * 60_000);
    expect(a.history!.at(-1)).toMatchObject({ by: plantAdmin.username, action: "shelved", detail: "Sensor fault, WO 4711" });
  });

  it("refuses users below plant-admin with 403 Unauthorized operation", async () => {
    const res = await t.http("POST", `/_alerting/alerts/${hot._id}/_shelve`, { body: { minutes: 5, reason: "r" }, auth: operator });
    expect(pick(res)).toEqual(err(403, "Unauthorized operation"));
    expect(pick(await t.http("POST", `/_alerting/alerts/${hot._id}/_unshelve`, { auth: operator }))).toEqual(err(403, "Unauthorized operation"));
    expect((await fetchAlert(hot._id)).shelved_until).not.toBeNull();
  });

  it("answers the input errors and Invalid Alert ID", async () => {
    const url = `/_alerting/alerts/${hot._id}/_shelve`;
    expect(pick(await t.http("POST", url, { body: { minutes: 0, reason: "r" } }))).toEqual(err(400, "Invalid input: minutes", "minutes"));
    expect(pick(await t.http("POST", url, { body: { minutes: 10_081, reason: "r" } }))).toEqual(err(400, "Invalid input: minutes", "minutes"));
    expect(pick(await t.http("POST", url, { body: { minutes: 1.5, reason: "r" } }))).toEqual(err(400, "Invalid input: minutes", "minutes"));
    expect(pick(await t.http("POST", url, { body: { minutes: 5 } }))).toEqual(err(400, "Insufficient inputs", "reason"));
    expect(pick(await t.http("POST", url, { body: { minutes: 5, reason: "" } }))).toEqual(err(400, "Invalid input: reason", "reason"));
    expect(pick(await t.http("POST", url, { body: { minutes: 5, reason: "x".repeat(501) } }))).toEqual(err(400, "Invalid input: reason", "reason"));
    const unknown = randomUUID();
    expect(pick(await t.http("POST", `/_alerting/alerts/${unknown}/_shelve`, { body: { minutes: 5, reason: "r" } }))).toEqual(err(400, `Invalid Alert ID: ${unknown}`));
    expect(pick(await t.http("POST", url, { body: { minutes: 5, reason: "r" }, auth: stranger }))).toEqual(err(400, `Invalid Alert ID: ${hot._id}`));
    expect(pick(await t.http("POST", `/_alerting/alerts/${unknown}/_unshelve`))).toEqual(err(400, `Invalid Alert ID: ${unknown}`));
  });

  it("unshelve ends the shelf; unshelving again answers the same and changes nothing", async () => {
    expect(pick(await t.http("POST", `/_alerting/alerts/${hot._id}/_unshelve`, { auth: plantAdmin }))).toEqual(ok("Alert unshelved"));
    const a = await fetchAlert(hot._id);
    expect(a.shelved_until).toBeNull();
    expect(a.history!.at(-1)).toMatchObject({ by: plantAdmin.username, action: "unshelved", detail: null });
    expect(pick(await t.http("POST", `/_alerting/alerts/${hot._id}/_unshelve`))).toEqual(ok("Alert unshelved"));
    expect(stateOf(await fetchAlert(hot._id))).toEqual(stateOf(a));
  });

  it("a shelf expires by itself: once shelved_until has passed the alert reads as not shelved", async () => {
    await t.http("POST", `/_alerting/alerts/${hot._id}/_shelve`, { body: { minutes: 1, reason: "brief" } });
    expect((await fetchAlert(hot._id)).shelved_until).not.toBeNull();
    await sql(`UPDATE alerts SET shelved_until = $2 WHERE alert_id = $1`, [hot._id, Date.now() - 1000]);
    const a = await fetchAlert(hot._id);
    expect(a.shelved_until).toBeNull();
    // Nothing to unshelve any more.
    expect(pick(await t.http("POST", `/_alerting/alerts/${hot._id}/_unshelve`))).toEqual(ok("Alert unshelved"));
    expect((await fetchAlert(hot._id)).history).toEqual(a.history);
  });
});

describe("assign", () => {
  it("assigns to a user who can see the alert; any user of the module in scope may assign", async () => {
    expect(pick(await t.http("POST", `/_alerting/alerts/${hot._id}/_assign`, { body: { username: plantAdmin.username }, auth: operator }))).toEqual(
      ok("Alert assigned"),
    );
    const a = await fetchAlert(hot._id);
    expect(a.assignee).toBe(plantAdmin.username);
    expect(a.history!.at(-1)).toMatchObject({ by: operator.username, action: "assigned", detail: plantAdmin.username });
    // A site-wide user sees it too; the username in another case is the same user.
    await makeUser(t.http, { username: "sadmin-l1@example.com", user_type: "site-admin", site_id: place.site_id });
    expect(pick(await t.http("POST", `/_alerting/alerts/${hot._id}/_assign`, { body: { username: "SADMIN-L1@example.com" } }))).toEqual(ok("Alert assigned"));
    expect((await fetchAlert(hot._id)).assignee).toBe("sadmin-l1@example.com");
  });

  it("answers 400 Invalid user for a user who cannot see the alert or does not exist", async () => {
    const url = `/_alerting/alerts/${hot._id}/_assign`;
    expect(pick(await t.http("POST", url, { body: { username: stranger.username } }))).toEqual(err(400, `Invalid user: ${stranger.username}`));
    expect(pick(await t.http("POST", url, { body: { username: "nobody@example.com" } }))).toEqual(err(400, "Invalid user: nobody@example.com"));
    expect((await fetchAlert(hot._id)).assignee).toBe("sadmin-l1@example.com");
  });

  it("answers Insufficient inputs, Invalid input and Invalid Alert ID", async () => {
    expect(pick(await t.http("POST", `/_alerting/alerts/${hot._id}/_assign`, { body: {} }))).toEqual(err(400, "Insufficient inputs", "username"));
    expect(pick(await t.http("POST", `/_alerting/alerts/${hot._id}/_assign`, { body: { username: 7 } }))).toEqual(err(400, "Invalid input: username", "username"));
    const unknown = randomUUID();
    expect(pick(await t.http("POST", `/_alerting/alerts/${unknown}/_assign`, { body: { username: operator.username } }))).toEqual(
      err(400, `Invalid Alert ID: ${unknown}`),
    );
    expect(pick(await t.http("POST", `/_alerting/alerts/${hot._id}/_assign`, { body: { username: stranger.username }, auth: stranger }))).toEqual(
      err(400, `Invalid Alert ID: ${hot._id}`),
    );
  });
});

describe("a note (op 10) in the history", () => {
  it("records `noted` with who and the note", async () => {
    await t.http("PUT", `/_alerting/alerts/${hot._id}`, { body: { note: "Greased" }, auth: operator });
    expect((await fetchAlert(hot._id)).history!.at(-1)).toMatchObject({ by: operator.username, action: "noted", detail: "Greased" });
    const all = (await fetchAlert(hot._id)).history!;
    expect(all.map((h) => h.at)).toEqual([...all.map((h) => h.at)].sort());
    expect(all[0].action).toBe("opened");
  });
});

describe("list and count filters (ops 7, 8)", () => {
  const list = async (query: string, auth?: Who) => {
    const res = await t.http<Alert[]>("GET", `/_alerting/alerts/_list?is_hidden=0&${query}`, auth ? { auth } : {});
    expect(res.status).toBe(200);
    return res.body.map((a) => a._id).sort();
  };
  const count = (query: string) => t.http("GET", `/_alerting/alerts/_count?${query}`).then(pick);

  it("by plant or site instead of function", async () => {
    const all = await list(`function_id=${place.function_id}`);
    expect(all).toHaveLength(3);
    expect(await list(`plant_id=${place.plant_id}`)).toEqual(all);
    expect(await list(`site_id=${place.site_id}`)).toEqual(all);
    expect(await list(`site_id=${place.site_id}`, operator)).toEqual(all);
    expect(await list(`plant_id=${other.plant_id}`)).toEqual([]);
    expect(await count(`plant_id=${place.plant_id}`)).toEqual(ok({ high: 1, medium: 2, low: 0 }));
    expect(await count(`site_id=${place.site_id}`)).toEqual(ok({ high: 1, medium: 2, low: 0 }));
  });

  it("by state, ack_state and severity; limit and offset", async () => {
    const f = `function_id=${place.function_id}`;
    expect(await list(`${f}&state=closed`)).toEqual([rough._id]);
    expect(await list(`${f}&severity=high`)).toEqual([hot._id]);
    expect(await list(`${f}&severity=low`)).toEqual([]);
    expect(await list(`${f}&ack_state=unacknowledged`)).toEqual([]);
    await sql(`UPDATE alerts SET ack_state = 'unacknowledged', acked_by = NULL, acked_at = NULL WHERE alert_id = $1`, [rough._id]);
    expect(await list(`${f}&ack_state=unacknowledged&state=closed&severity=medium`)).toEqual([rough._id]);
    expect(await count(`${f}&ack_state=unacknowledged`)).toEqual(ok({ high: 0, medium: 1, low: 0 }));
    expect(await count(`${f}&state=active&severity=medium`)).toEqual(ok({ high: 0, medium: 1, low: 0 }));
    expect(await count(`${f}&limit=1&offset=0`)).toEqual(ok({ high: 1, medium: 2, low: 0 }));
    const page = await t.http<Alert[]>("GET", `/_alerting/alerts/_list?is_hidden=0&${f}&limit=1&offset=1`);
    expect(page.body).toHaveLength(1);
    expect(page.headers.get("x-total-count")).toBe("3");
  });

  it("answers Excess inputs for more than one place, Insufficient inputs for none, and the place's own text when unknown or out of scope", async () => {
    for (const op of ["_list?is_hidden=0&", "_count?"]) {
      const url = (q: string) => `/_alerting/alerts/${op}${q}`;
      expect(pick(await t.http("GET", url(`function_id=${place.function_id}&plant_id=${place.plant_id}`)))).toEqual(err(400, "Excess inputs", "plant_id"));
      expect(pick(await t.http("GET", url(`plant_id=${place.plant_id}&site_id=${place.site_id}`)))).toEqual(err(400, "Excess inputs", "site_id"));
      expect(pick(await t.http("GET", url("")))).toEqual(err(400, "Insufficient inputs", "function_id"));
      expect(pick(await t.http("GET", url(`plant_id=${randomUUID()}`)))).toEqual(err(400, "Plant does not exist"));
      expect(pick(await t.http("GET", url(`site_id=nope`)))).toEqual(err(400, "Site does not exist"));
      expect(pick(await t.http("GET", url(`plant_id=${place.plant_id}`), { auth: stranger }))).toEqual(err(400, "Plant does not exist"));
      expect(pick(await t.http("GET", url(`site_id=${place.site_id}`), { auth: stranger }))).toEqual(err(400, "Site does not exist"));
      expect(pick(await t.http("GET", url(`function_id=${place.function_id}&state=open`)))).toEqual(err(400, "Invalid input: state", "state"));
      expect(pick(await t.http("GET", url(`function_id=${place.function_id}&ack_state=yes`)))).toEqual(err(400, "Invalid input: ack_state", "ack_state"));
    }
  });

  it("without a place, answers Insufficient inputs before any other fault, as the required function_id always did", async () => {
    expect(pick(await t.http("GET", "/_alerting/alerts/_list?x=1"))).toEqual(err(400, "Insufficient inputs", "function_id"));
    expect(pick(await t.http("GET", "/_alerting/alerts/_count?from=never"))).toEqual(err(400, "Insufficient inputs", "function_id"));
  });
});
