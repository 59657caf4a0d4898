/** Smoke runs of the per-service load tests: a second or so each, through HTTP and the broker. */
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { formatReport, runLoad, SCENARIOS, type Figures, type LoadReport } from "../../scripts/load";
import { ADMIN, startTestNode, type TestNode } from "../helpers/node";

const isFigures = (f: unknown): f is Figures => typeof f === "object" && f !== null && "rps" in f;

function expectClean(report: LoadReport, service: string): void {
  expect(report.service).toBe(service);
  expect(report.scenarios.map((s) => s.action)).toEqual(SCENARIOS[service]!.map((s) => s.action));
  for (const s of report.scenarios) {
    for (const via of ["http", "broker"] as const) {
      const f = s[via];
      if (!isFigures(f)) throw new Error(`${s.name} ${via} skipped: ${JSON.stringify(f)}`);
      expect(f.requests).toBeGreaterThan(0);
      expect(f.errors).toBe(0);
      expect(f.p99).toBeGreaterThanOrEqual(f.p50);
    }
  }
}

describe("npm run load", () => {
  it.each(Object.keys(SCENARIOS))("drives %s on a node started for the run, over HTTP and the broker", async (service) => {
    const report = await runLoad({ service, durationS: 1, connections: 2, username: ADMIN.username, password: ADMIN.password });
    expectClean(report, service);
    const text = formatReport(report);
    expect(text.split("\n")[1]).toMatch(/^scenario\s+via\s+req\/s\s+p50\s+p99\s+errors$/);
    expect(text).toMatch(new RegExp(`^${SCENARIOS[service]![0]!.name}\\s+http\\s+[\\d.]+\\s+[\\d.]+ ms\\s+[\\d.]+ ms\\s+0$`, "m"));
  }, 90000);

  describe("against a running installation (--url)", () => {
    let t: TestNode;
    beforeAll(async () => {
      t = await startTestNode({ services: ["api", "auth", "config"], env: { LOG_LEVEL: "fatal" } });
    });
    afterAll(async () => {
      await t?.stop();
    });

    it("reports the scenarios of a service that is not deployed as skipped", async () => {
      const report = await runLoad({ service: "alerting", url: t.baseUrl, durationS: 1, connections: 1, username: ADMIN.username, password: ADMIN.password });
      expect(report.scenarios).toHaveLength(SCENARIOS.alerting!.length);
      // Never deployed here: the gateway knows its routes, and answers them 503 while no node serves them.
      for (const s of report.scenarios) expect(s.http).toEqual({ skipped: `${s.action}: Service unavailable` });
    });

    it("runs from the command line and writes the JSON report", async () => {
      const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "load-")), "report.json");
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ["--import", "tsx", "scripts/load.ts", "config", "--url", t.baseUrl, "--duration", "1", "--connections", "2", "--out", out],
        {
          cwd: path.resolve(__dirname, "../.."),
          env: { PATH: process.env.PATH ?? "", ADMIN_USERNAME: ADMIN.username, ADMIN_PASSWORD: ADMIN.password },
          timeout: 60000,
        },
      );
      const report = JSON.parse(fs.readFileSync(out, "utf8")) as LoadReport;
      expect(report.target).toBe(t.baseUrl);
      expect(stdout).toContain(`load: config against ${t.baseUrl}, 1 s x 2 connections per scenario`);
      for (const s of report.scenarios) {
        expect(isFigures(s.http) && s.http.errors).toBe(0);
        expect(s.broker).toEqual({ skipped: "set TRANSPORTER (and NAMESPACE) to call the actions directly" });
      }
    }, 60000);
  });
});
