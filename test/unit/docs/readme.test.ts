/**
 * The environment table of docs/configuration.md against lib/config.ts, the one place settings
 * are read: a variable added there and not documented, or documented and no longer read, fails
 * here. And the README's two command lines.
 */
import fs from "node:fs";
import path from "node:path";
import { ALL_SERVICES } from "../../../lib/config";

const root = path.resolve(__dirname, "../../..");
const readme = fs.readFileSync(path.join(root, "README.md"), "utf8");
const configurationDoc = fs.readFileSync(path.join(root, "docs/configuration.md"), "utf8");
const configSource = fs.readFileSync(path.join(root, "lib/config.ts"), "utf8");

/** Names read from the environment: every `(env, "NAME"` call in lib/config.ts. */
const readNames = [...new Set([...configSource.matchAll(/\(env, "([A-Z0-9_]+)"/g)].map((m) => m[1]!))];

/** Names in the first column of the table under docs/configuration.md's "Configuration" heading. */
function documentedNames(): string[] {
  const section = configurationDoc.split(/^##? /m).find((s) => s.startsWith("Configuration"));
  if (!section) throw new Error("docs/configuration.md has no Configuration section");
  const rows = section.split("\n").filter((l) => l.startsWith("| `"));
  return rows.flatMap((row) => [...(row.split("|")[1] ?? "").matchAll(/`([A-Z0-9_]+)`/g)].map((m) => m[1]!));
}

describe("docs/configuration.md and README", () => {
  it("finds the settings in lib/config.ts (the scan itself works)", () => {
    expect(readNames).toEqual(expect.arrayContaining(["PORT", "DATABASE_URL", "TRANSPORTER", "REDIS_URL", "NAMESPACE"]));
  });

  it("documents every environment variable lib/config.ts reads", () => {
    const documented = new Set(documentedNames());
    expect(readNames.filter((n) => !documented.has(n))).toEqual([]);
  });

  it("documents no variable that lib/config.ts does not read", () => {
    const read = new Set(readNames);
    expect(documentedNames().filter((n) => !read.has(n))).toEqual([]);
  });

  it("names every service SERVICES accepts", () => {
    const row = configurationDoc.split("\n").find((l) => l.startsWith("| `SERVICES`")) ?? "";
    for (const s of ALL_SERVICES) expect(row).toContain(`\`${s}\``);
  });

  it("gives the run and test command lines, and both scripts exist", () => {
    expect(readme).toContain("npm ci && npm start");
    expect(readme).toContain("npm ci && npm test");
    const scripts = (JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts;
    for (const s of ["start", "start:service", "test", "bench:api"]) expect(scripts[s]).toBeDefined();
  });
});
