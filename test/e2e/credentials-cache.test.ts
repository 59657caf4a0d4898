/**
 * The gateway's cache of verified callers (services/api/principals.ts), in one process: a
 * repeated request is answered from it, and a change of password, modules or the user's deletion
 * is refused on the very next request, through auth's `auth.credentials.changed` broadcast.
 * test/integration/cluster.test.ts checks the same across processes over NATS.
 */
import type { PrincipalCache } from "../../services/api/principals";
import { startTestNode, type TestNode } from "../helpers/node";

const OLD = "OldPass1234";
const NEW = "NewPass5678";

let t: TestNode;
let siteId: string;
let plantId: string;

const principals = () => (t.node.broker.getLocalService("api") as unknown as { principals: PrincipalCache }).principals;
/** Held for this test's own address: the gateway keys a verified caller by its client address too (sign-in throttling). */
const cachedAtGateway = (username: string, password: string) =>
  principals().get(username, principals().fingerprint(username, password, "127.0.0.1")) !== undefined;

const userBody = (username: string, extra: Record<string, unknown> = {}) => ({
  username,
  mobile_number: "5550100",
  country_code: "+1",
  user_type: "site-admin",
  site_id: siteId,
  password: OLD,
  ...extra,
});

async function createUser(username: string, extra: Record<string, unknown> = {}): Promise<void> {
  const res = await t.http("POST", "/_config/users", { body: userBody(username, extra) });
  expect(res.body).toEqual({ status: "CREATED", message: "User created successfully" });
}

const sitesAs = (username: string, password: string) => t.http("GET", "/_config/sites/_list", { auth: { username, password } });
const invalid = { status: 401, body: { error: { status: 401, message: "Invalid credentials" } } };

beforeAll(async () => {
  t = await startTestNode({ services: ["api", "auth", "config"] });
  const site = await t.http<{ id: string }>("POST", "/_config/sites", {
    body: { site_name: "Cache Site", location: "here", timezone: "UTC", latitude: "1", edge_firmware: {} },
  });
  siteId = site.body.id;
  const plant = await t.http<{ id: string }>("POST", "/_config/plants", { body: { plant_name: "Cache Plant", site_id: siteId } });
  plantId = plant.body.id;
});

afterAll(async () => {
  await t?.stop();
});

describe("the gateway's cache of verified callers", () => {
  it("answers a repeated request without asking auth again, and never caches a refusal", async () => {
    const who = "repeat@example.com";
    await createUser(who);
    expect((await sitesAs(who, OLD)).status).toBe(200);
    expect(cachedAtGateway(who, OLD)).toBe(true);
    const calls: string[] = [];
    const spy = jest.spyOn(t.node.broker, "call").mockImplementation(function (this: unknown, ...args: unknown[]) {
      // moleculer-web passes the action's endpoint, a service its name.
      const target = args[0] as string | { name?: string; action?: { name?: string } };
      calls.push(typeof target === "string" ? target : (target.action?.name ?? target.name ?? "?"));
      return (jest.requireActual("moleculer").ServiceBroker.prototype.call as (...a: unknown[]) => Promise<unknown>).apply(this, args);
    });
    try {
      expect((await sitesAs(who, OLD)).status).toBe(200);
    } finally {
      spy.mockRestore();
    }
    expect(calls).toContain("config.sites.list");
    expect(calls).not.toContain("auth.authenticate");
    expect(await sitesAs(who, "WrongPass123")).toMatchObject(invalid);
    expect(cachedAtGateway(who, "WrongPass123")).toBe(false);
  });

  it("refuses the old password on the very next request after a change", async () => {
    const who = "rotate@example.com";
    await createUser(who);
    expect((await sitesAs(who, OLD)).status).toBe(200);
    expect((await sitesAs(who, OLD)).status).toBe(200);
    const res = await t.http("PUT", `/_config/users/${who}`, { body: userBody(who, { password: NEW }) });
    expect(res.body).toEqual({ status: "OK", message: "User updated successfully" });
    expect(cachedAtGateway(who, OLD)).toBe(false);
    expect(await sitesAs(who, OLD)).toMatchObject(invalid);
    expect((await sitesAs(who, NEW)).status).toBe(200);
  });

  it("applies a change of modules on the very next request", async () => {
    const who = "modules@example.com";
    const generalUser = { user_type: "general-user", site_id: undefined, plant_id: plantId };
    await createUser(who, { ...generalUser, modules: ["Configuration"] });
    expect((await sitesAs(who, OLD)).status).toBe(200);
    const res = await t.http("PUT", `/_config/users/${who}`, { body: userBody(who, { ...generalUser, password: null, modules: ["Alerting"] }) });
    expect(res.body).toEqual({ status: "OK", message: "User updated successfully" });
    expect(await sitesAs(who, OLD)).toMatchObject({
      status: 401,
      body: { error: { status: 401, message: "You do not have access to this module" } },
    });
  });

  it("refuses a deleted user on the very next request", async () => {
    const who = "leaver@example.com";
    await createUser(who);
    expect((await sitesAs(who, OLD)).status).toBe(200);
    expect((await t.http("DELETE", `/_config/users/${who}`)).status).toBe(200);
    expect(await sitesAs(who, OLD)).toMatchObject(invalid);
  });
});
