/**
 * The console in a real browser (Debian's chromium, driven by playwright-core) against a real
 * single-process node: sign in as a person does, by labels and button names, and save a
 * screenshot of each view under test/artifacts/ (git-ignored) for a person to look at.
 */
import fs from "node:fs";
import path from "node:path";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { SERVICE_SCHEMAS } from "../../services";
import { REPO_ROOT } from "./cluster";
import { ADMIN, startTestNode, type TestNode } from "./node";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
export const ARTIFACTS = path.join(REPO_ROOT, "test", "artifacts");

export interface ConsoleHarness {
  t: TestNode;
  browser: Browser;
  /** A new browser context (its own cookies) with a page at 1280×800; script errors collected in `errors`. */
  open(viewport?: { width: number; height: number }): Promise<{ context: BrowserContext; page: Page; errors: string[] }>;
  stop(): Promise<void>;
}

export async function startConsole(env: Record<string, string> = {}): Promise<ConsoleHarness> {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (.ci/run does)`);
  const t = await startTestNode({ services: Object.keys(SERVICE_SCHEMAS), env: { LOG_LEVEL: "fatal", NOTEBOOK_PYTHON: "/nonexistent/python3", ...env } });
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
  });
  return {
    t,
    browser,
    async open(viewport = { width: 1280, height: 800 }) {
      const context = await browser.newContext({ viewport });
      const page = await context.newPage();
      const errors: string[] = [];
      page.on("pageerror", (e) => errors.push(e.message));
      return { context, page, errors };
    },
    async stop() {
      await browser.close();
      await t.stop();
    },
  };
}

/** Signs in through the page's form and waits for the navigation to show. */
export async function signIn(page: Page, baseUrl: string, who: { username: string; password: string } = ADMIN, hash = ""): Promise<void> {
  await page.goto(`${baseUrl}/${hash}`);
  await page.getByLabel("Username").fill(who.username);
  await page.getByLabel("Password").fill(who.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("navigation", { name: "Main" }).waitFor();
}

/** Saves a screenshot as test/artifacts/<name>.png. */
export async function shot(page: Page, name: string): Promise<void> {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
}
