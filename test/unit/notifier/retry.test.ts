/** Which notifications an operator may queue again (services/notifier/delivery.ts), without a broker. */
import { retryRefusal } from "../../../services/notifier/delivery";

describe("retryRefusal", () => {
  it("lets a failed, skipped or queued notification be queued again", () => {
    for (const status of ["failed", "skipped", "queued"] as const) expect(retryRefusal({ status, redacted: false })).toBeNull();
  });

  it("refuses an unknown, a sent and a redacted notification", () => {
    expect(retryRefusal(undefined)).toBe("unknown");
    expect(retryRefusal({ status: "sent", redacted: false })).toBe("sent");
    expect(retryRefusal({ status: "sent", redacted: true })).toBe("sent");
    expect(retryRefusal({ status: "failed", redacted: true })).toBe("redacted");
  });
});
