/**
 * Comments and docs name the project's own docs (docs/*.md), never documents a person who clones
 * the repository does not have: the extensions document, the contract and the interface spec.
 * A source file that cites one fails here, with each offending file:line.
 */
import fs from "node:fs";
import path from "node:path";

const root = path.resolve(__dirname, "../../..");

/** Written in pieces, so that this file does not cite them itself. */
const OUTSIDE_DOCS = ["EXTENSIONS", "CONTRACT", "interface-spec"].map((name) => `${name}.md`);
/**
 * Any of the three by file name, the extensions document's short form (its name, then a section
 * sign), and a section of the contract named in parentheses: "(contract", a colon, a capitalised name.
 */
const CITATION = new RegExp(`${OUTSIDE_DOCS.map((d) => d.replace(/[.-]/g, "\\$&")).join("|")}|\\b${"EXTENSIONS"}\\s*§|\\(${"contract"}: [A-Z]`);

/** Not the project's own source: dependencies, build output, data and test artifacts (.gitignore). */
const IGNORED_DIRS = new Set([".git", "node_modules", "dist", "data", "coverage", "test/artifacts"]);
/** Records which issue's target each run checked: history, kept as written. */
const IGNORED_FILES = new Set(["docs/benchmarks.md"]);

const SOURCE = /\.(ts|js|mjs|cjs|py|ya?ml|json|md|sh|html|css)$/;
const isSource = (rel: string) => SOURCE.test(rel) || path.basename(rel) === "Dockerfile" || rel.startsWith(".ci/");

function sourceFiles(dir = ""): string[] {
  return fs.readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = dir ? `${dir}/${entry.name}` : entry.name;
    if (entry.isDirectory()) return IGNORED_DIRS.has(rel) ? [] : sourceFiles(rel);
    return entry.isFile() && isSource(rel) && !IGNORED_FILES.has(rel) ? [rel] : [];
  });
}

/** `file:line: text` of every line that cites a document outside the repository. */
function citations(rel: string): string[] {
  const lines = fs.readFileSync(path.join(root, rel), "utf8").split("\n");
  return lines.flatMap((line, i) => (CITATION.test(line) ? [`${rel}:${i + 1}: ${line.trim()}`] : []));
}

describe("citations in comments and docs", () => {
  const files = sourceFiles();

  it("scans the code base (the walk itself works)", () => {
    expect(files).toEqual(expect.arrayContaining(["lib/audit.ts", "console/app.js", "docs/console.md", "Dockerfile"]));
    expect(files.some((f) => f.startsWith("node_modules/"))).toBe(false);
    expect(files).toEqual(expect.arrayContaining(["services/pipelines/ingest.ts", "services/auth/users.repo.ts"]));
  });

  it("knows a citation when it sees one", () => {
    for (const line of [`// (${OUTSIDE_DOCS[0]} §1)`, `(${"EXTENSIONS"} §8)`, `see ${OUTSIDE_DOCS[1]}`, `(${OUTSIDE_DOCS[2]}: Errors)`, `(${"contract"}: Alerting)`]) {
      expect(CITATION.test(line)).toBe(true);
    }
    expect(CITATION.test("the interface's contract (contract.ts), docs/security.md")).toBe(false);
  });

  it("finds no source file that cites the extensions document, the contract or the interface spec", () => {
    const found = files.flatMap(citations);
    if (found.length > 0) {
      throw new Error(
        `${found.length} citation(s) of documents outside the repository; name a doc under docs/ or say the rule:\n` + found.join("\n"),
      );
    }
  });
});
