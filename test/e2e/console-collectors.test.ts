/**
 * The collectors (docs/collectors.md) as a plant engineer sees them on the console's Pipelines page,
 * in a real browser against a node that runs the collectors service (SOURCE_ALLOW naming the
 * loopback, where the machine's MariaDB answers): a started Cloud SQL pipeline reading a table the
 * test fills shows Running and how many readings it collected; one with a wrong password shows
 * Error and the cause in its latest action.
 */
import { randomBytes } from "node:crypto";
import mysql from "mysql2/promise";
import type { Page } from "playwright-core";
import type { Cluster } from "../helpers/cluster";
import { listed, startSqlPipeline } from "../helpers/collectors";
import { shot, signIn, startConsole, type ConsoleHarness } from "../helpers/console";
import { ADMIN } from "../helpers/node";
import { hierarchy, type Hierarchy } from "./pipelines-fixtures";

const scratch = `ims_ccoll_${randomBytes(4).toString("hex")}`;

let c: ConsoleHarness;
let h: Hierarchy;
let my: mysql.Connection;
/** The test node as the collectors' helpers take it: they only speak HTTP to it. */
let api: Cluster;

/** Whole seconds an hour ago: inside the site's retention, never in the future. */
const base = Math.floor(Date.now() / 1000) * 1000 - 3_600_000;
const wall = (ms: number) => new Date(ms).toISOString().replace("T", " ").replace("Z", "");

beforeAll(async () => {
  my = await mysql.createConnection({ host: "127.0.0.1", port: 3306, user: "root" });
  await my.query(`CREATE DATABASE ${scratch}`);
  c = await startConsole({ SOURCE_ALLOW: "127.0.0.0/8" });
  api = c.t as unknown as Cluster;
  h = await hierarchy(c.t, "Console coll");
}, 180_000);

afterAll(async () => {
  await c?.stop();
  await my?.query(`DROP DATABASE IF EXISTS ${scratch}`);
  await my?.end();
});

async function pipelineName(id: string): Promise<string> {
  const res = await c.t.http<{ pipeline_name: string }>("GET", `/_config/pipelines/edge-server/${id}`);
  if (res.status !== 200) throw new Error(`pipeline ${id}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.pipeline_name;
}

/**
 * The pipeline's row once its cell `column` reads `text`: the page refreshes itself every 10 s, and
 * a reload after each minute stands in should a refresh be lost on a loaded machine.
 */
async function rowShowing(page: Page, name: string, column: number, text: RegExp, within = 120_000) {
  const row = page.getByRole("row", { name: new RegExp(name) });
  const until = Date.now() + within;
  for (;;) {
    try {
      await row.getByRole("cell").nth(column).filter({ hasText: text }).waitFor({ timeout: Math.max(1, Math.min(60_000, until - Date.now())) });
      return row;
    } catch (err) {
      if (Date.now() >= until) throw err;
      await page.reload();
      await page.getByRole("heading", { name: "Pipelines", level: 1 }).waitFor();
    }
  }
}

describe("collectors on the Pipelines page", () => {
  it("shows a started SQL pipeline reading a MariaDB table Running, with the readings it collected and none rejected", async () => {
    const rows = 6;
    await my.query(`CREATE TABLE ${scratch}.line_ok (ts datetime(3), temp double, flow double)`);
    for (let i = 0; i < rows; i++) await my.query(`INSERT INTO ${scratch}.line_ok VALUES (?, ?, ?)`, [wall(base + i * 1000), i * 1.5, 10 + i]);
    const columns = { temp: "Pressure", flow: "Flow" };
    const id = await startSqlPipeline(api, h, { port: 3306, database: scratch, table: "line_ok", columns });
    const name = await pipelineName(id);
    const collected = rows * Object.keys(columns).length;

    const { context, page, errors } = await c.open();
    await signIn(page, c.t.baseUrl, ADMIN, `#/pipelines?plant_id=${h.plant}`);
    await page.getByRole("heading", { name: "Pipelines", level: 1 }).waitFor();
    // Running once its first page is stored: a moment after the readings show, as a person waits for it.
    await rowShowing(page, name, 3, new RegExp(`\\D${collected} collected · 0 rejected$`));
    const row = await rowShowing(page, name, 1, /^Running$/);
    await expect(row.getByRole("cell").nth(1).textContent()).resolves.toBe("Running");
    // Each reading stored is an event of the pipeline, the latest one as old as the table's newest row.
    await expect(row.getByRole("cell").nth(3).textContent()).resolves.toMatch(new RegExp(`^${collected} eventslatest .+ ago${collected} collected · 0 rejected$`));
    await expect(row.getByRole("cell").nth(4).textContent()).resolves.toMatch(/^Start\s*completed/);
    // What the page says is what the API lists.
    expect(await listed(api, h, id)).toMatchObject({ status: "running", collected, rejected: 0 });
    await shot(page, "console-collectors-running");
    expect(errors).toEqual([]);
    await context.close();
  }, 300_000);

  it("shows a SQL pipeline with a wrong password in Error, the cause in its latest action", async () => {
    await my.query(`CREATE TABLE ${scratch}.line_denied (ts datetime, temp double)`);
    const id = await startSqlPipeline(api, h, { port: 3306, password: "wrong-one", database: scratch, table: "line_denied", columns: { temp: "Pressure" } });
    const name = await pipelineName(id);

    const { context, page, errors } = await c.open();
    await signIn(page, c.t.baseUrl, ADMIN, `#/pipelines?plant_id=${h.plant}`);
    await page.getByRole("heading", { name: "Pipelines", level: 1 }).waitFor();
    // An alarm reads with its sign (▲) before the word.
    const row = await rowShowing(page, name, 1, /Error$/);
    await expect(row.getByRole("cell").nth(1).textContent()).resolves.toBe("▲ Error");
    await expect(row.getByRole("cell").nth(4).textContent()).resolves.toMatch(/^Start\s*▲ failed\s*▲ Failed to connect to DB\s*\d+ (s|min) ago$/);
    expect((await listed(api, h, id)).last_actions[0]).toMatchObject({ action: "start", status: "failed", error: "Failed to connect to DB" });
    await shot(page, "console-collectors-error");
    expect(errors).toEqual([]);
    await context.close();
  }, 300_000);
});
