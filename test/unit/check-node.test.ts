/**
 * The first thing `npm start`, `npm test` and `npm run repl` run (bin/check-node.cjs): on a Node
 * older than 22.15 one line saying which Node is needed and how to get it, exit 1, before anything
 * loads argon2's native module; on the Node of package.json's engines, nothing at all. `npm ci`
 * meets package.json's engines through engine-strict in .npmrc.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const ROOT = path.resolve(__dirname, "../..");
const SCRIPT = path.join(ROOT, "bin/check-node.cjs");
const ONE_LINE = /^This service needs Node\.js 22\.15 or newer \(found v\d+\.\d+\.\d+\)\. Get Node 24: mkdir -p ~\/\.cache\/ims-node24 && .*npm pack --silent node-[a-z]+-[a-z0-9]+@24 .*export PATH=~\/\.cache\/ims-node24\/package\/bin:\$PATH\n$/;

/** Whether a Node binary is older than 22.15 (undefined when it does not run). */
const isOld = (nodeBinary: string): boolean | undefined => {
  const said = spawnSync(nodeBinary, ["-p", "const [a, b] = process.versions.node.split('.').map(Number); a < 22 || (a === 22 && b < 15)"], { encoding: "utf8" });
  return said.status === 0 ? said.stdout.trim() === "true" : undefined;
};

/** A Node older than 22.15 on this machine (a distribution's own, such as Debian's 20), if there is one. */
const oldNode = ["/usr/bin/node", "/usr/local/bin/node", "/bin/node"].find((p) => fs.existsSync(p) && isOld(p) === true);

/** An old Node's environment: its own folder first on PATH, so that `npm` and `node` are the old ones. */
const oldEnv = (nodeBinary: string): NodeJS.ProcessEnv => ({ HOME: process.env.HOME, PATH: `${path.dirname(nodeBinary)}:/usr/bin:/bin`, npm_config_update_notifier: "false" });

it("passes silently on this Node (the engines' own)", () => {
  const run = spawnSync(process.execPath, [SCRIPT], { encoding: "utf8" });
  expect(run).toMatchObject({ status: 0, stdout: "", stderr: "" });
});

it("keeps package.json's engines and npm's engine-strict together", () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")) as { engines: { node: string }; scripts: Record<string, string> };
  expect(pkg.engines.node).toBe(">=22.15");
  expect(fs.readFileSync(path.join(ROOT, ".npmrc"), "utf8")).toMatch(/^engine-strict=true$/m);
  for (const script of ["start", "start:service", "test", "repl"]) expect(pkg.scripts[script]).toMatch(/^node bin\/check-node\.cjs && /);
});

(oldNode ? describe : describe.skip)(`on an old Node (${oldNode ?? "none on this machine"})`, () => {
  it("the check prints the one line and exits 1", () => {
    const run = spawnSync(oldNode!, [SCRIPT], { encoding: "utf8", env: oldEnv(oldNode!) });
    expect(run.status).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(ONE_LINE);
  });

  it("npm start and npm test stop with that line before anything else runs", () => {
    for (const script of ["start", "test"]) {
      const run = spawnSync("npm", ["run", "--silent", script], { cwd: ROOT, encoding: "utf8", env: oldEnv(oldNode!), timeout: 30_000 });
      expect(run.status).toBe(1);
      expect(run.stderr).toMatch(ONE_LINE);
    }
  }, 60_000);

  it("npm ci refuses, naming the engines", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ims-engines-"));
    try {
      for (const file of ["package.json", "package-lock.json", ".npmrc"]) fs.copyFileSync(path.join(ROOT, file), path.join(dir, file));
      const run = spawnSync("npm", ["ci", "--no-audit", "--no-fund", "--offline"], { cwd: dir, encoding: "utf8", env: oldEnv(oldNode!), timeout: 60_000 });
      expect(run.status).not.toBe(0);
      expect(run.stderr).toContain("EBADENGINE");
      expect(run.stderr).toContain('Required: {"node":">=22.15"}');
      expect(fs.existsSync(path.join(dir, "node_modules"))).toBe(false);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);
});

/** The real script, run by this Node made to report `version`. */
function checkAs(version: string) {
  const preload = path.join(os.tmpdir(), `ims-fake-node-${version}-${process.pid}.cjs`);
  fs.writeFileSync(preload, `Object.defineProperty(process, "versions", { value: { ...process.versions, node: "${version}" } });\n`);
  try {
    return spawnSync(process.execPath, ["--require", preload, SCRIPT], { encoding: "utf8" });
  } finally {
    fs.rmSync(preload, { force: true });
  }
}

it("on a Node that only claims to be old (no old Node needed), the check still refuses", () => {
  // Where the machine has no old Node: v20, and v22.14, the last Node 22 without zlib's zstd.
  for (const version of ["20.20.2", "22.14.0"]) {
    const run = checkAs(version);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(ONE_LINE);
    expect(run.stderr).toContain(`(found v${version})`);
  }
});

it("passes a Node of 22.15 or newer, whatever its minor", () => {
  for (const version of ["22.15.0", "23.0.0", "24.21.0"]) expect(checkAs(version)).toMatchObject({ status: 0, stderr: "" });
});
