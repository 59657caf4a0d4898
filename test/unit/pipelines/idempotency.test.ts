/** The Idempotency-Key header as the pipelines service reads it (docs/api-tour.md, "Retries"): which keys it takes, and the fingerprint. */
import { DomainError } from "../../../lib/errors";
import type { Ctx } from "../../../services/pipelines/pipelines.types";
import { keyedRequest } from "../../../services/pipelines/idempotency";

const PIPELINE = "6e2d3c4b-5f60-4b7c-9d8e-0f1a2b3c4d5e";

function ctx(idempotency: { key: string; fingerprint: string } | undefined, params: Record<string, unknown> = { readings: [] }) {
  return { meta: idempotency ? { idempotency } : {}, params: { pipeline_id: PIPELINE, ...params } } as unknown as Ctx<{ pipeline_id: string }>;
}

describe("keyedRequest", () => {
  it("is undefined without the header", () => {
    expect(keyedRequest(ctx(undefined), "readings")).toBeUndefined();
  });

  it("takes 1 to 255 printable ASCII characters, and refuses anything else with 400 Invalid input: Idempotency-Key", () => {
    for (const key of ["a", "k".repeat(255), "batch 42 / gw {A}~", "550e8400-e29b-41d4-a716-446655440000"]) {
      expect(keyedRequest(ctx({ key, fingerprint: "ab" }), "readings")?.key).toBe(key);
    }
    for (const key of ["", "k".repeat(256), "clé", "tab\there", "line\nbreak", "\u007f"]) {
      let thrown: unknown;
      try {
        keyedRequest(ctx({ key, fingerprint: "ab" }), "readings");
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeInstanceOf(DomainError);
      expect(thrown).toMatchObject({ code: 400, message: "Invalid input: Idempotency-Key", data: { field: "Idempotency-Key" } });
    }
  });

  it("fingerprints the body with its route: the same body on the other route is another request", () => {
    const readings = keyedRequest(ctx({ key: "k", fingerprint: "ab" }), "readings")!;
    expect(keyedRequest(ctx({ key: "k", fingerprint: "ab" }), "readings")!.fingerprint.equals(readings.fingerprint)).toBe(true);
    expect(keyedRequest(ctx({ key: "k", fingerprint: "cd" }), "readings")!.fingerprint.equals(readings.fingerprint)).toBe(false);
    expect(keyedRequest(ctx({ key: "k", fingerprint: "ab" }), "waveforms")!.fingerprint.equals(readings.fingerprint)).toBe(false);
  });

  it("fingerprints the params without the path's id when the caller gives no raw body's", () => {
    const one = keyedRequest(ctx({ key: "k", fingerprint: "" }, { readings: [{ value: 1 }] }), "readings")!;
    const same = { meta: { idempotency: { key: "k", fingerprint: "" } }, params: { pipeline_id: PIPELINE.toUpperCase(), readings: [{ value: 1 }] } };
    expect(keyedRequest(same as unknown as Ctx<{ pipeline_id: string }>, "readings")!.fingerprint.equals(one.fingerprint)).toBe(true);
    expect(keyedRequest(ctx({ key: "k", fingerprint: "" }, { readings: [{ value: 2 }] }), "readings")!.fingerprint.equals(one.fingerprint)).toBe(false);
  });
});
