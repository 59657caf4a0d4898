import { settledWithin } from "../../../lib/wait";

const after = <T>(ms: number, value: T, fail = false) =>
  new Promise<T>((resolve, reject) => setTimeout(() => (fail ? reject(new Error("no")) : resolve(value)), ms));

describe("settledWithin", () => {
  it("is true for a promise that resolves or rejects in time, false for one that does not", async () => {
    await expect(settledWithin(after(5, "x"), 1000)).resolves.toBe(true);
    await expect(settledWithin(after(5, "x", true), 1000)).resolves.toBe(true);
    const slow = after(300, "late");
    await expect(settledWithin(slow, 20)).resolves.toBe(false);
    await slow;
  });

  it("answers as soon as the promise settles, not when the limit runs out", async () => {
    const started = Date.now();
    await settledWithin(after(5, "x"), 60_000);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
