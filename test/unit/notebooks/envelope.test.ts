import { DomainError, httpStatusOf } from "../../../lib/errors";
import { toEnvelope } from "../../../services/api/http";

describe("the envelope-200 of notebook delete", () => {
  it("keeps status 200 on the status line and in the envelope", () => {
    expect(httpStatusOf(200)).toBe(200);
    expect(toEnvelope(new DomainError(200, "No notebooks deleted"))).toEqual({ error: { status: 200, message: "No notebooks deleted" } });
  });

  it("still turns any other status outside 400..599 into a 500", () => {
    for (const code of [201, 204, 302, 399, 600, 200.5, "200"]) expect(httpStatusOf(code)).toBe(500);
  });
});
