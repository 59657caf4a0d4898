/** Watchers over HTTP (spec ops 1-6): success texts, every named error, scope. */
import { randomUUID } from "node:crypto";
import { startTestNode, type TestNode } from "../helpers/node";
import { idFrom, makePlace, makeUser, watcherBody, type Place } from "./alerting-fixtures";
import { envelope } from "../helpers/envelope";

let t: TestNode;
let place: Place;
let other: Place;

beforeAll(async () => {
  t = await startTestNode({ services: ["api", "auth", "config", "alerting"] });
  place = await makePlace(t.http, "w1");
  other = await makePlace(t.http, "w2");
});
afterAll(async () => {
  await t?.stop();
});

const err = (status: number, message: string, field?: string) => ({ status, body: envelope(status, message, field) });
const pick = (res: { status: number; body: unknown }) => ({ status: res.status, body: res.body });

async function create(body: unknown) {
  return t.http<string>("POST", "/_alerting/watchers", { body });
}

describe("create watcher (op 1)", () => {
  it("creates a watcher and answers the spec's text with its id", async () => {
    const res = await create(watcherBody(place, randomUUID()));
    expect(res.status).toBe(200);
    expect(res.body).toMatch(/^Successfully created watcher with ID [0-9a-f-]{36}\.$/);
    const got = await t.http<Record<string, unknown>>("GET", `/_alerting/watchers/${idFrom(res.body)}`);
    expect(got.status).toBe(200);
    expect(got.body.watcher_name).toBe("Bearing watch");
  });

  it("allows one watcher per gateway", async () => {
    const gateway = randomUUID();
    expect((await create(watcherBody(place, gateway))).status).toBe(200);
    expect(pick(await create(watcherBody(place, gateway, { watcher_name: "Second" })))).toEqual(
      err(400, "Watcher already exists for a given Gateway"),
    );
  });

  it("needs at least one user and one medium", async () => {
    const users = await create(watcherBody(place, randomUUID(), {}, { notifyTo: { email: true, sms: true, whatsapp: true, users: [] } }));
    expect(pick(users)).toEqual(err(400, "Select at least one user to notify"));
    const media = await create(watcherBody(place, randomUUID(), {}, { notifyTo: { email: false, sms: false, whatsapp: false, users: ["a@b.c"] } }));
    expect(pick(media)).toEqual(err(400, "Please provide at least one notification medium (SMS, Email, or WhatsApp) for the selected user(s)."));
  });

  it("answers Insufficient inputs for a missing field, at any depth", async () => {
    const body = watcherBody(place, randomUUID()) as Record<string, unknown>;
    delete body.watcher_name;
    expect(pick(await create(body))).toEqual(err(400, "Insufficient inputs"));
    expect(pick(await create(watcherBody(place, randomUUID(), {}, { severity: undefined })))).toEqual(err(400, "Insufficient inputs"));
    expect(pick(await create({}))).toEqual(err(400, "Insufficient inputs"));
  });

  it("refuses values of the wrong kind by field", async () => {
    const cases: [Record<string, unknown>, Record<string, unknown>, string][] = [
      [{ is_enabled: 2 }, {}, "is_enabled"],
      [{ triggers: "t1" }, {}, "triggers"],
      [{}, { trigger_relation: "XOR" }, "triggers[0].trigger_relation"],
      [{}, { severity: 0 }, "triggers[0].severity"],
      [{}, { minimum_duration: "2 days" }, "triggers[0].minimum_duration"],
      [{}, { condition: [{ comparison: "=>", monitor_id: place.monitor_id, tag_id: "temp", threshold: "80" }] }, "triggers[0].condition[0].comparison"],
      [{}, { condition: [{ comparison: ">", monitor_id: place.monitor_id, tag_id: "temp", threshold: "hot" }] }, "triggers[0].condition[0].threshold"],
      [{}, { condition: [{ comparison: ">", monitor_id: place.monitor_id, tag_id: "nope", threshold: "1" }] }, "triggers[0].condition[0].tag_id"],
      [{}, { condition: [{ comparison: ">", monitor_id: other.monitor_id, tag_id: "temp", threshold: "1" }] }, "triggers[0].condition[0].monitor_id"],
      [{ colour: "red" }, {}, "colour"],
      [{ plant_id: other.plant_id }, {}, "plant_id"],
    ];
    for (const [over, trigger, field] of cases) {
      const res = await create(watcherBody(place, randomUUID(), over, trigger));
      expect({ field, ...pick(res) }).toEqual({ field, ...err(400, `Invalid input: ${field}`) });
    }
  });

  it("refuses text holding U+0000, which PostgreSQL cannot store, as invalid input (not a 500)", async () => {
    const res = await create(watcherBody(place, randomUUID(), { watcher_name: "Bearing\u0000watch" }));
    expect(pick(res)).toEqual(err(400, "Invalid input: watcher_name"));
    const nested = await create(watcherBody(place, randomUUID(), {}, { name: "Too\u0000hot" }));
    expect(pick(nested)).toEqual(err(400, "Invalid input: triggers[0].name"));
  });

  it("refuses two triggers with the same id", async () => {
    const body = watcherBody(place, randomUUID());
    body.triggers.push({ ...body.triggers[0] });
    expect(pick(await create(body))).toEqual(err(400, "Invalid input: triggers[1].id"));
  });

  it("answers Invalid function_id for a function that does not exist or is not an id", async () => {
    expect(pick(await create(watcherBody(place, randomUUID(), { function_id: randomUUID() })))).toEqual(err(400, "Invalid function_id"));
    expect(pick(await create(watcherBody(place, randomUUID(), { function_id: "pumps" })))).toEqual(err(400, "Invalid function_id"));
  });

  it("takes a trigger without conditions, and a number as threshold", async () => {
    const res = await create(watcherBody(place, randomUUID(), {}, { condition: undefined }));
    expect(res.status).toBe(200);
    const num = await create(
      watcherBody(place, randomUUID(), {}, { condition: [{ comparison: "<", monitor_id: place.monitor_id, tag_id: "vib", threshold: 1.5 }] }),
    );
    expect(num.status).toBe(200);
    const got = await t.http<{ triggers: { condition: { threshold: string }[] }[] }>("GET", `/_alerting/watchers/${idFrom(num.body)}`);
    expect(got.body.triggers[0].condition[0].threshold).toBe("1.5");
  });

  it("refuses a body that is not JSON", async () => {
    const res = await t.http("POST", "/_alerting/watchers", { rawBody: "watcher_name=x", headers: { "content-type": "text/plain" } });
    expect(pick(res)).toEqual(err(400, "Invalid content type"));
  });
});

describe("fetch, list and count (ops 4-6)", () => {
  let id: string;
  let gateway: string;
  beforeAll(async () => {
    gateway = randomUUID();
    id = idFrom((await create(watcherBody(other, gateway, { watcher_name: "Other watch" }))).body);
  });

  it("fetches every watcher field", async () => {
    const res = await t.http<Record<string, unknown>>("GET", `/_alerting/watchers/${id}`);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(
      [
        "watcher_id",
        "watcher_name",
        "function_id",
        "plant_id",
        "site_id",
        "gateway_id",
        "gateway_name",
        "is_enabled",
        "is_hidden",
        "created_at_time",
        "last_update_time",
        "latest_alert_date",
        "total_alerts",
        "triggers",
        // Alarm management: the fetch (only) gains the watcher's maintenance windows.
        "suppressions",
      ].sort(),
    );
    expect(res.body).toMatchObject({
      watcher_id: id,
      watcher_name: "Other watch",
      function_id: other.function_id,
      plant_id: other.plant_id,
      site_id: other.site_id,
      gateway_id: gateway,
      is_enabled: 1,
      is_hidden: 0,
      total_alerts: 0,
      latest_alert_date: null,
    });
    expect(res.body.triggers).toEqual(watcherBody(other, gateway).triggers);
    expect(typeof res.body.created_at_time).toBe("number");
    expect(Math.abs((res.body.created_at_time as number) - Date.now())).toBeLessThan(60_000);
  });

  it("answers Invalid Watcher ID for an unknown or malformed id", async () => {
    expect(pick(await t.http("GET", `/_alerting/watchers/${randomUUID()}`))).toEqual(err(400, "Invalid Watcher ID"));
    expect(pick(await t.http("GET", `/_alerting/watchers/not-an-id`))).toEqual(err(400, "Invalid Watcher ID"));
  });

  it("lists the function's watchers with the total in X-Total-Count", async () => {
    const res = await t.http<{ watcher_id: string }[]>("GET", `/_alerting/watchers/_list?function_id=${other.function_id}`);
    expect(res.status).toBe(200);
    expect(res.body.map((w) => w.watcher_id)).toEqual([id]);
    expect(res.headers.get("x-total-count")).toBe("1");
    const mine = await t.http<unknown[]>("GET", `/_alerting/watchers/_list?function_id=${place.function_id}`);
    expect(mine.body.length).toBeGreaterThan(2);
    const page = await t.http<unknown[]>("GET", `/_alerting/watchers/_list?function_id=${place.function_id}&limit=1&offset=1`);
    expect(page.body).toHaveLength(1);
    expect(page.headers.get("x-total-count")).toBe(String(mine.body.length));
  });

  it("counts them", async () => {
    const res = await t.http("GET", `/_alerting/watchers/_count?function_id=${other.function_id}`);
    expect(pick(res)).toEqual({ status: 200, body: 1 });
  });

  it("answers Invalid function_id, Insufficient inputs and Excess inputs on list and count", async () => {
    for (const op of ["_list", "_count"]) {
      expect(pick(await t.http("GET", `/_alerting/watchers/${op}?function_id=${randomUUID()}`))).toEqual(err(400, "Invalid function_id"));
      expect(pick(await t.http("GET", `/_alerting/watchers/${op}`))).toEqual(err(400, "Insufficient inputs"));
      expect(pick(await t.http("GET", `/_alerting/watchers/${op}?function_id=${other.function_id}&color=red`))).toEqual(err(400, "Excess inputs"));
    }
  });

  it("reads a function id written in upper case as the same function, in lists, counts and a create", async () => {
    const upper = place.function_id.toUpperCase();
    const id = idFrom((await create(watcherBody(place, randomUUID(), { watcher_name: "Upper", function_id: upper }))).body);
    const lower = await t.http<{ watcher_id: string }[]>("GET", `/_alerting/watchers/_list?function_id=${place.function_id}`);
    expect(lower.body.map((w) => w.watcher_id)).toContain(id);
    expect((await t.http("GET", `/_alerting/watchers/_list?function_id=${upper}`)).body).toEqual(lower.body);
    expect((await t.http("GET", `/_alerting/watchers/_count?function_id=${upper}`)).body).toBe(lower.body.length);
  });
});

describe("update and delete (ops 2, 3)", () => {
  it("updates a watcher, keeps its creation time and moves its update time", async () => {
    const gateway = randomUUID();
    const id = idFrom((await create(watcherBody(place, gateway))).body);
    const before = (await t.http<Record<string, number>>("GET", `/_alerting/watchers/${id}`)).body;
    // A body as read back, read-only fields included, is accepted.
    const res = await t.http("PUT", `/_alerting/watchers/${id}`, { body: { ...before, watcher_name: "Renamed", is_enabled: 0 } });
    expect(pick(res)).toEqual({ status: 200, body: `Successfully updated watcher with ID ${id}.` });
    const after = (await t.http<Record<string, number | string>>("GET", `/_alerting/watchers/${id}`)).body;
    expect(after.watcher_name).toBe("Renamed");
    expect(after.is_enabled).toBe(0);
    expect(after.created_at_time).toBe(before.created_at_time);
    expect(after.last_update_time as number).toBeGreaterThan(before.last_update_time);
  });

  it("refuses to move a watcher onto a gateway that has one, with the update text", async () => {
    const taken = randomUUID();
    await create(watcherBody(place, taken));
    const id = idFrom((await create(watcherBody(place, randomUUID()))).body);
    const res = await t.http("PUT", `/_alerting/watchers/${id}`, { body: watcherBody(place, taken) });
    expect(pick(res)).toEqual(err(400, "Watcher already exists for given IoT Gateway"));
  });

  it("uses the update texts for users and media", async () => {
    const id = idFrom((await create(watcherBody(place, randomUUID()))).body);
    const users = await t.http("PUT", `/_alerting/watchers/${id}`, {
      body: watcherBody(place, randomUUID(), {}, { notifyTo: { email: true, sms: false, whatsapp: false, users: [] } }),
    });
    expect(pick(users)).toEqual(err(400, "Please select at least one user to notify"));
    const media = await t.http("PUT", `/_alerting/watchers/${id}`, {
      body: watcherBody(place, randomUUID(), {}, { notifyTo: { email: false, sms: false, whatsapp: false, users: ["x@y.z"] } }),
    });
    expect(pick(media)).toEqual(err(400, "Please provide at least one notification medium (SMS, Email, or WhatsApp) for the selected user(s)."));
  });

  it("answers Invalid Watcher ID when updating an unknown watcher", async () => {
    const res = await t.http("PUT", `/_alerting/watchers/${randomUUID()}`, { body: watcherBody(place, randomUUID()) });
    expect(pick(res)).toEqual(err(400, "Invalid Watcher ID"));
  });

  it("deletes a watcher once, then answers Invalid Watcher ID, and frees its gateway", async () => {
    const gateway = randomUUID();
    const id = idFrom((await create(watcherBody(place, gateway))).body);
    expect(pick(await t.http("DELETE", `/_alerting/watchers/${id}`))).toEqual({ status: 200, body: `Successfully deleted watcher with ID ${id}.` });
    expect(pick(await t.http("DELETE", `/_alerting/watchers/${id}`))).toEqual(err(400, "Invalid Watcher ID"));
    expect(pick(await t.http("DELETE", `/_alerting/watchers/xyz`))).toEqual(err(400, "Invalid Watcher ID"));
    expect((await create(watcherBody(place, gateway))).status).toBe(200);
  });
});

describe("scope and rights", () => {
  let otherAdmin: { username: string; password: string };
  let reader: { username: string; password: string };
  let noModule: { username: string; password: string };
  let id: string;

  beforeAll(async () => {
    id = idFrom((await create(watcherBody(place, randomUUID()))).body);
    otherAdmin = await makeUser(t.http, { username: "padmin-w2@example.com", user_type: "plant-admin", site_id: other.site_id, plant_id: other.plant_id });
    reader = await makeUser(t.http, {
      username: "reader-w1@example.com",
      user_type: "general-user",
      site_id: place.site_id,
      plant_id: place.plant_id,
      modules: ["Alerting"],
    });
    noModule = await makeUser(t.http, {
      username: "cfg-w1@example.com",
      user_type: "general-user",
      site_id: place.site_id,
      plant_id: place.plant_id,
      modules: ["Configuration"],
    });
  });

  it("hides another plant's watcher and function as if they did not exist", async () => {
    expect(pick(await t.http("GET", `/_alerting/watchers/${id}`, { auth: otherAdmin }))).toEqual(err(400, "Invalid Watcher ID"));
    expect(pick(await t.http("DELETE", `/_alerting/watchers/${id}`, { auth: otherAdmin }))).toEqual(err(400, "Invalid Watcher ID"));
    expect(pick(await t.http("GET", `/_alerting/watchers/_list?function_id=${place.function_id}`, { auth: otherAdmin }))).toEqual(
      err(400, "Invalid function_id"),
    );
    const foreign = await t.http("POST", "/_alerting/watchers", { body: watcherBody(place, randomUUID()), auth: otherAdmin });
    expect(pick(foreign)).toEqual(err(400, "Invalid function_id"));
  });

  it("lets a plant-admin write watchers in its own plant", async () => {
    const res = await t.http("POST", "/_alerting/watchers", { body: watcherBody(other, randomUUID()), auth: otherAdmin });
    expect(res.status).toBe(200);
  });

  it("lets a general-user read but not write", async () => {
    expect((await t.http("GET", `/_alerting/watchers/${id}`, { auth: reader })).status).toBe(200);
    expect(pick(await t.http("POST", "/_alerting/watchers", { body: watcherBody(place, randomUUID()), auth: reader }))).toEqual(
      err(403, "Unauthorized operation"),
    );
    expect(pick(await t.http("DELETE", `/_alerting/watchers/${id}`, { auth: reader }))).toEqual(err(403, "Unauthorized operation"));
  });

  it("refuses a user without the Alerting module", async () => {
    expect(pick(await t.http("GET", `/_alerting/watchers/${id}`, { auth: noModule }))).toEqual(
      err(401, "Unauthorized access to module by general-user"),
    );
  });
});
