/**
 * The README's console walkthrough from a fresh start: `npm start -- --seed-demo --name 'Demo
 * Pune'` (one process, no bus for a REPL to join) seeds the demo itself and prints how to feed it;
 * the printed reading, sent as printed, opens the demo's alert; in the console the person sees it
 * in the Alarm summary, the pump in alarm on the Overview (its key values beside) and on its page with the alarm listed,
 * its times in Pune's zone; the alert stays while the reading cools (clear delay), so the board
 * shows it.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { promisify } from "node:util";
import { chromium, type Browser } from "playwright-core";
import { CHROMIUM, shot, signIn } from "../helpers/console";
import { REPO_ROOT, freePort } from "../helpers/cluster";
import { createTestDatabase, type TestDatabase } from "../helpers/db";
import { ADMIN } from "../helpers/node";

jest.setTimeout(240_000);

let db: TestDatabase;
let child: ChildProcess;
let output = "";
let baseUrl = "";
let browser: Browser;

beforeAll(async () => {
  db = await createTestDatabase("ims_demo");
  const port = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  child = spawn(process.execPath, ["--import", "tsx", "bin/start.ts", "--seed-demo", "--name", "Demo Pune"], {
    cwd: REPO_ROOT,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "/root",
      DATABASE_URL: db.url,
      PORT: String(port),
      NAMESPACE: `demo-${randomBytes(4).toString("hex")}`,
      LOG_LEVEL: "warn",
      MQTT_PORT: "0",
      ADMIN_USERNAME: ADMIN.username,
      ADMIN_PASSWORD: ADMIN.password,
      DATA_DIR: `/tmp/ims-demo-${randomBytes(4).toString("hex")}`,
      NOTEBOOK_PYTHON: "/nonexistent/python3",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout?.on("data", (b: Buffer) => (output += b.toString("utf8")));
  child.stderr?.on("data", (b: Buffer) => (output += b.toString("utf8")));
  const until = Date.now() + 120_000;
  while (!/demo seeded/.test(output) && Date.now() < until && child.exitCode === null) await new Promise((r) => setTimeout(r, 250));
  if (!/demo seeded\n/.test(output)) throw new Error(`no demo seeded:\n${output}`);
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--headless", "--no-sandbox", "--disable-gpu"] });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  if (child && child.exitCode === null) {
    child.kill("SIGINT");
    await new Promise((r) => child.once("exit", r));
  }
  await db?.drop();
});

describe("the README's console demo", () => {
  it("seeds from npm start alone; the printed reading opens the alarm the console shows everywhere, in Pune's zone", async () => {
    expect(output).toMatch(/^\+ site: [0-9a-f-]{36}$/m);
    expect(output).toMatch(/^\+ watcher: Successfully created watcher with ID [0-9a-f-]{36}\.$/m);
    expect(output).toMatch(/fires on a bearing temperature of 85 °C or more, the tag's warning limit/);
    // The printed curl, as printed (its time stamped to the millisecond by node).
    const curl = /^ {2}(curl .*)$/m.exec(output)?.[1] ?? "";
    expect(curl).toContain("$(node -p 'Date.now()')");
    const { stdout } = await promisify(execFile)("sh", ["-c", curl]);
    expect(JSON.parse(stdout)).toEqual({ accepted: 1, rejected: [] });

    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await signIn(page, baseUrl, ADMIN, "#/overview");
    const summary = page.getByRole("region", { name: "Alarm summary" });
    await summary.getByText("1 unacknowledged").waitFor({ timeout: 10_000 });
    const pump = page.getByRole("treeitem", { name: "Asset Demo Pune Pump P-101" });
    await pump.getByText("Alarm (High)").waitFor({ timeout: 15_000 });
    // Its key values beside its state, with units, the one past its limit marked.
    await pump.getByText("88 °C").waitFor({ timeout: 15_000 });
    await expect(pump.textContent()).resolves.toMatch(/temperature\s*▲ 88 °C/);
    await expect(page.getByRole("treeitem", { name: "Site Demo Pune" }).textContent()).resolves.toContain("Pune, India · Asia/Kolkata");
    await shot(page, "console-demo-overview");

    await pump.getByRole("link", { name: "Demo Pune Pump P-101" }).click();
    const alarms = page.getByRole("region", { name: "Alarms" });
    await alarms.getByRole("link", { name: "Bearing too hot" }).waitFor({ timeout: 10_000 });
    await expect(alarms.getByRole("table").first().textContent()).resolves.toMatch(/Bearing too hot.*\(Asia\/Kolkata\)/s);
    // The process monitor is on the pump: its temperature among the pump's values.
    await page.getByRole("rowheader", { name: /Bearing temperature|temperature/ }).first().waitFor();
    await shot(page, "console-demo-asset");
    expect(errors).toEqual([]);
    await context.close();
  });
});
