/**
 * A database outage as the code tells it from a fault: which errors mean "PostgreSQL is away for
 * now" (answered 503, retried by stream consumers without end), and which stay what they are.
 * The errors are the shapes node-postgres and TypeORM really produce (test/integration/pg-restart.test.ts
 * meets them against a PostgreSQL killed and stopped under load).
 */
import { ServiceBroker, type Context } from "moleculer";
import { DatabaseOutageMiddleware, DomainError, isDatabaseUnavailable, isTransient, serviceUnavailable } from "../../../lib/errors";
import { givesUp, redeliveryDelayMs, retryDelayMs, TRANSIENT_RETRY_MAX_MS } from "../../../lib/streams/jetstream";

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });
/** TypeORM's QueryFailedError: the driver's error inside. */
const queryFailed = (driverError: Error) => Object.assign(new Error(driverError.message), { name: "QueryFailedError", driverError });
const named = (name: string) => Object.assign(new Error("released"), { name });

describe("isDatabaseUnavailable", () => {
  it.each([
    ["nothing listens (stopped, killed)", withCode("connect ECONNREFUSED 127.0.0.1:5432", "ECONNREFUSED")],
    ["the connection reset", withCode("read ECONNRESET", "ECONNRESET")],
    ["fast shutdown ends the session (57P01)", queryFailed(withCode("terminating connection due to administrator command", "57P01"))],
    ["the postmaster died under the session (57P01)", queryFailed(withCode("terminating connection due to unexpected postmaster exit", "57P01"))],
    ["starting up or shutting down (57P03)", withCode("the database system is starting up", "57P03")],
    ["a connection exception (class 08)", withCode("connection failure", "08006")],
    ["too many connections (53300)", withCode("sorry, too many clients already", "53300")],
    ["the socket closed mid-query", queryFailed(new Error("Connection terminated unexpectedly"))],
    ["a client broken earlier", new Error("Client has encountered a connection error and is not queryable")],
    ["no connection in time", new Error("timeout exceeded when trying to connect")],
    ["TypeORM's transaction after its connection broke", named("QueryRunnerAlreadyReleasedError")],
    ["TypeORM's query after its connection broke", named("QueryRunnerProviderAlreadyReleasedError")],
    ["every address of the host refused", new AggregateError([withCode("connect ECONNREFUSED ::1:5432", "ECONNREFUSED"), withCode("connect ECONNREFUSED 127.0.0.1:5432", "ECONNREFUSED")])],
  ])("is true when %s", (_what, err) => {
    expect(isDatabaseUnavailable(err)).toBe(true);
  });

  it.each([
    ["a unique violation", queryFailed(withCode("duplicate key value violates unique constraint", "23505"))],
    ["a syntax error", queryFailed(withCode("syntax error at or near", "42601"))],
    ["a statement cancelled by its timeout", queryFailed(withCode("canceling statement due to statement timeout", "57014"))],
    ["a domain answer", new DomainError(400, "Invalid input: site_id")],
    ["a plain fault", new Error("undefined is not a function")],
    ["no error at all", undefined],
    ["a string", "ECONNREFUSED"],
  ])("is false for %s", (_what, err) => {
    expect(isDatabaseUnavailable(err)).toBe(false);
  });
});

describe("isTransient", () => {
  it("takes the database away and a service's 503 that crossed the bus, nothing else", () => {
    expect(isTransient(withCode("connect ECONNREFUSED", "ECONNREFUSED"))).toBe(true);
    // What a remote caller holds: the domain error's fields, rebuilt from the bus.
    expect(isTransient({ name: "DomainError", type: "DOMAIN_ERROR", code: 503, message: "Service unavailable" })).toBe(true);
    expect(isTransient(serviceUnavailable())).toBe(true);
    expect(isTransient(new DomainError(500, "Internal error"))).toBe(false);
    expect(isTransient(new DomainError(400, "Invalid input: readings"))).toBe(false);
    expect(isTransient(new Error("bad message"))).toBe(false);
  });
});

describe("a stream message that fails while the database is away", () => {
  const away = withCode("connect ECONNREFUSED", "ECONNREFUSED");
  const poison = new Error("Cannot read properties of undefined");

  it("is never dead-lettered for it, however many deliveries failed", () => {
    expect(givesUp(away, 5, 5)).toBe(false);
    expect(givesUp(away, 500, 5)).toBe(false);
    expect(givesUp(poison, 4, 5)).toBe(false);
    expect(givesUp(poison, 5, 5)).toBe(true);
  });

  it("is offered again at most TRANSIENT_RETRY_MAX_MS apart, so it goes through soon after the database is back", () => {
    expect(retryDelayMs(away, 1)).toBe(1000);
    expect(retryDelayMs(away, 10)).toBe(TRANSIENT_RETRY_MAX_MS);
    expect(retryDelayMs(poison, 10)).toBe(redeliveryDelayMs(10));
    expect(redeliveryDelayMs(10)).toBeGreaterThan(TRANSIENT_RETRY_MAX_MS);
  });
});

describe("DatabaseOutageMiddleware", () => {
  const broker = new ServiceBroker({ logger: false, middlewares: [DatabaseOutageMiddleware] });
  broker.createService({
    name: "store",
    actions: {
      away() {
        throw queryFailed(withCode("terminating connection due to administrator command", "57P01"));
      },
      refused() {
        throw new DomainError(400, "Invalid Site");
      },
      broken() {
        throw new Error("a fault of the code");
      },
      fine(ctx: Context<{ n: number }>) {
        return ctx.params.n + 1;
      },
    },
  });
  beforeAll(() => broker.start());
  afterAll(() => broker.stop());

  it("answers an action whose database is away with 503 Service unavailable", async () => {
    await expect(broker.call("store.away")).rejects.toMatchObject({ type: "DOMAIN_ERROR", code: 503, message: "Service unavailable" });
  });

  it("leaves domain answers, faults and results as they are", async () => {
    await expect(broker.call("store.refused")).rejects.toMatchObject({ code: 400, message: "Invalid Site" });
    await expect(broker.call("store.broken")).rejects.toMatchObject({ message: "a fault of the code" });
    await expect(broker.call("store.fine", { n: 1 })).resolves.toBe(2);
  });
});
