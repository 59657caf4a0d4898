/**
 * The import graph of the code base (docs/architecture.md#the-shape-of-a-service): no module
 * reaches itself through its imports, and a service's `contract.ts` (what other services import)
 * stands on `lib/` and Node's built-ins alone.
 *
 * Every relative import of every .ts file under lib/, mixins/, services/ and bin/ counts, `import
 * type` and `export … from` included: a type-only circle costs nothing at run time, but it still
 * makes two modules one unit that cannot be read, moved or tested apart.
 *
 * Services talk one way: a service that calls another (through its contract's typed client, or a
 * contract helper that takes a `Caller`) is not called back by it; facts go the other way as
 * events and streams, which the emitter's contract declares.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { builtinModules } from "node:module";
import { dirname, join, relative, resolve, sep } from "node:path";
import * as ts from "typescript";

const ROOT = resolve(__dirname, "../..");
const FOLDERS = ["lib", "mixins", "services", "bin"];

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return tsFiles(path);
    return name.endsWith(".ts") && !name.endsWith(".d.ts") ? [path] : [];
  });
}

/** Every specifier a file imports or re-exports (static, `import type`, `import()` and `require` alike). */
function specifiers(file: string): string[] {
  return ts.preProcessFile(readFileSync(file, "utf8"), true, true).importedFiles.map((f) => f.fileName);
}

/** The .ts file a relative specifier names, or null for one outside the code base's sources. */
function resolveRelative(from: string, spec: string): string | null {
  const base = resolve(dirname(from), spec);
  for (const candidate of [base, `${base}.ts`, join(base, "index.ts")]) {
    if (candidate.endsWith(".ts") && existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return null;
}

const rel = (file: string) => relative(ROOT, file).split(sep).join("/");

const files = FOLDERS.flatMap((folder) => tsFiles(join(ROOT, folder)));
const graph = new Map<string, string[]>(
  files.map((file) => [
    rel(file),
    specifiers(file)
      .filter((spec) => spec.startsWith("."))
      .map((spec) => resolveRelative(file, spec))
      .filter((target): target is string => target !== null)
      .map(rel),
  ]),
);

/** The strongly connected components of more than one module (or a module importing itself): Tarjan's. */
function circles(edges: Map<string, string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, counter);
    low.set(v, counter);
    counter++;
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (edges.get(v) ?? []).includes(v)) found.push(component.sort());
    }
  };
  for (const v of [...edges.keys()].sort()) if (!index.has(v)) visit(v);
  return found;
}

/** One circle through a component, written as the import chain `a → b → … → a`. */
function chainThrough(component: string[], edges: Map<string, string[]>): string {
  const members = new Set(component);
  const start = component[0];
  // Breadth-first from start's successors back to start, within the component.
  const previous = new Map<string, string>();
  const queue = (edges.get(start) ?? []).filter((w) => members.has(w));
  for (const w of queue) previous.set(w, start);
  while (queue.length > 0) {
    const v = queue.shift()!;
    if (v === start) break;
    for (const w of edges.get(v) ?? []) {
      if (members.has(w) && !previous.has(w)) {
        previous.set(w, v);
        queue.push(w);
      }
    }
  }
  const chain = [start];
  for (let v = previous.get(start); v !== undefined && v !== start; v = previous.get(v)) chain.unshift(v);
  chain.unshift(start);
  return chain.join(" → ");
}

/** The names a contract exports that make a call: its typed client and the helpers that take a `Caller`. */
function callingExports(contract: string): Set<string> {
  const text = readFileSync(contract, "utf8");
  const names = new Set<string>();
  for (const m of text.matchAll(/export const (\w+) = serviceClient\b/g)) names.add(m[1]!);
  for (const m of text.matchAll(/export (?:async )?function (\w+)(?:<[^>]*>)?\(\s*\w+: Caller\b/g)) names.add(m[1]!);
  for (const m of text.matchAll(/export const (\w+) = async \(\s*\w+: Caller\b/g)) names.add(m[1]!);
  return names;
}

/** service → the services it calls: an import of a calling export of the other's contract.ts. */
function serviceCalls(): Map<string, Set<string>> {
  const calls = new Map<string, Set<string>>();
  const serviceOf = (file: string) => /^services\/([^/]+)\//.exec(file)?.[1];
  const calling = new Map<string, Set<string>>();
  for (const file of graph.keys()) {
    const from = serviceOf(file);
    if (!from) continue;
    const source = ts.createSourceFile(file, readFileSync(join(ROOT, file), "utf8"), ts.ScriptTarget.Latest);
    for (const statement of source.statements) {
      if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
      const clause = statement.importClause;
      if (!clause || clause.isTypeOnly || !clause.namedBindings || !ts.isNamedImports(clause.namedBindings)) continue;
      const target = resolveRelative(join(ROOT, file), statement.moduleSpecifier.text);
      const to = target && /^services\/([^/]+)\/contract\.ts$/.exec(rel(target))?.[1];
      if (!target || !to || to === from) continue;
      if (!calling.has(to)) calling.set(to, callingExports(target));
      const names = clause.namedBindings.elements.filter((e) => !e.isTypeOnly).map((e) => (e.propertyName ?? e.name).text);
      if (names.some((name) => calling.get(to)!.has(name))) {
        if (!calls.has(from)) calls.set(from, new Set());
        calls.get(from)!.add(to);
      }
    }
  }
  return calls;
}

/**
 * Pairs that still call each other both ways, each to be cut (docs/architecture.md, "Who talks to
 * whom"): listed so that the test fails on any new pair, and on one of these once it is cut.
 */
const PAIRS_LEFT: string[] = [];

describe("the import graph", () => {
  it("reads the sources it checks", () => {
    expect(graph.size).toBeGreaterThan(100);
    expect(graph.get("services/pipelines/pipelines.service.ts")).toContain("services/pipelines/ingest.actions.ts");
  });

  it("has no circle", () => {
    const found = circles(graph).map((component) => `${chainThrough(component, graph)}\n    (${component.length} modules: ${component.join(", ")})`);
    expect(found).toEqual([]);
  });

  it("finds a circle when there is one", () => {
    const edges = new Map([
      ["a", ["b"]],
      ["b", ["c"]],
      ["c", ["a", "d"]],
      ["d", []],
    ]);
    expect(circles(edges)).toEqual([["a", "b", "c"]]);
    expect(chainThrough(["a", "b", "c"], edges)).toBe("a → b → c → a");
  });

  it("has no pair of services calling each other both ways but the ones left to cut", () => {
    const calls = serviceCalls();
    expect(calls.get("alerting")).toContain("config");
    const pairs = [...calls].flatMap(([a, targets]) => [...targets].filter((b) => a < b && calls.get(b)?.has(a)).map((b) => `${a} ↔ ${b}`));
    expect(pairs.sort()).toEqual(PAIRS_LEFT);
  });

  it("keeps every contract.ts on lib/ and Node's built-ins", () => {
    const builtins = new Set(builtinModules);
    const contracts = [...graph.keys()].filter((file) => /^services\/[^/]+\/contract\.ts$/.test(file));
    expect(contracts.length).toBeGreaterThanOrEqual(5);
    const strays = contracts.flatMap((file) =>
      specifiers(join(ROOT, file))
        .filter((spec) => {
          if (spec.startsWith(".")) return !(resolveRelative(join(ROOT, file), spec) ?? spec).startsWith(join(ROOT, "lib") + sep);
          // A package: only Node's built-ins (the framework's types come through lib/contract.ts).
          return !(spec.startsWith("node:") || builtins.has(spec));
        })
        .map((spec) => `${file} imports ${spec}`),
    );
    expect(strays).toEqual([]);
  });
});
