/**
 * The envelope for the errors Moleculer 0.15 and moleculer-web 0.11 really raise (their own
 * classes, not look-alikes), so a framework upgrade that renames one shows up here.
 */
import { Errors } from "moleculer";
import ApiGateway from "moleculer-web";
import { DomainError } from "../../../lib/errors";
import { toEnvelope } from "../../../services/api/http";

const web = ApiGateway.Errors;
/** moleculer-web raises these with no type at all (index.js: `new ServiceUnavailableError()`); its typings ask for one. */
const NO_TYPE = undefined as unknown as string;
/** Its constructor takes no argument; moleculer's typings inherit the parent's. */
const BrokerDisconnected = Errors.BrokerDisconnectedError as unknown as new () => Error;

describe("toEnvelope", () => {
  it("keeps a domain error's status and message", () => {
    expect(toEnvelope(new DomainError(409, "User already exists"))).toEqual({ error: { status: 409, message: "User already exists" } });
  });

  it("keeps a domain error that crossed the bus (plain object with its type)", () => {
    const remote = { name: "DomainError", type: "DOMAIN_ERROR", code: 404, message: "Invalid Site ID: x" };
    expect(toEnvelope(remote)).toEqual({ error: { status: 404, message: "Invalid Site ID: x" } });
  });

  it("turns a domain error with a code outside 400..599 (other than the 200 of notebook delete) into a 500", () => {
    expect(toEnvelope(new DomainError(302, "odd"))).toEqual({ error: { status: 500, message: "odd" } });
  });

  it.each([
    ["no node has the action", new Errors.ServiceNotFoundError({ action: "config.sites.list" })],
    ["the action's nodes are all unavailable (circuit breaker open)", new Errors.ServiceNotAvailableError({ action: "config.sites.list" })],
    ["moleculer-web: the alias's action has no live node", new web.ServiceUnavailableError(NO_TYPE)],
    ["the target node rejected the request", new Errors.RequestRejectedError({ action: "config.sites.list", nodeID: "n1" })],
    ["this node's transporter is disconnected", new BrokerDisconnected()],
    ["the bulkhead queue is full", new Errors.QueueIsFullError({ action: "config.sites.list", nodeID: "n1", size: 1, limit: 1 })],
  ])("answers 503 Service unavailable when %s", (_what, err) => {
    expect(toEnvelope(err)).toEqual({ error: { status: 503, message: "Service unavailable" } });
  });

  it("answers 504 Service timed out for a request timeout", () => {
    const err = new Errors.RequestTimeoutError({ action: "config.sites.list", nodeID: "n1" });
    expect(toEnvelope(err)).toEqual({ error: { status: 504, message: "Service timed out" } });
  });

  it("answers 429 for moleculer-web's rate limiter", () => {
    expect(toEnvelope(new web.RateLimitExceeded(NO_TYPE))).toEqual({ error: { status: 429, message: "Too many requests" } });
  });

  it("answers 404 Not found for moleculer-web's own not-found", () => {
    expect(toEnvelope(new web.NotFoundError(NO_TYPE))).toEqual({ error: { status: 404, message: "Not found" } });
  });

  it("hides everything else behind a 500 without details", () => {
    const leaky = new Error('relation "sites" does not exist at /work/main/services/config/config.service.ts:42');
    expect(toEnvelope(leaky)).toEqual({ error: { status: 500, message: "Internal error" } });
    expect(toEnvelope(new Errors.ValidationError("bad", "VALIDATION_ERROR"))).toEqual({ error: { status: 500, message: "Internal error" } });
    expect(toEnvelope(undefined)).toEqual({ error: { status: 500, message: "Internal error" } });
    expect(toEnvelope(leaky, "Error occurred during Site creation")).toEqual({
      error: { status: 500, message: "Error occurred during Site creation" },
    });
  });
});
