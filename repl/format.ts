/** Plain-text output of the REPL commands: tables, and argument checks. */
import { isId } from "../lib/ids";
import { UsageError } from "./types";

export function table(headers: string[], rows: (string | number | null | undefined)[][]): string {
  const cells = [headers, ...rows.map((r) => r.map((c) => (c === null || c === undefined ? "" : String(c))))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? "").length)));
  const line = (r: string[]) => r.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd();
  const rule = widths.map((w) => "-".repeat(w)).join("  ");
  return [line(cells[0]!), rule, ...cells.slice(1).map(line)].join("\n");
}

export function requireText(value: unknown, name: string): string {
  if (typeof value !== "string" || value.trim() === "") throw new UsageError(`${name} is required`);
  return value.trim();
}

export function optionalText(value: unknown, name: string): string | undefined {
  if (value === undefined || value === null || value === true) {
    if (value === true) throw new UsageError(`--${name} needs a value`);
    return undefined;
  }
  return requireText(String(value), `--${name}`);
}

export function requireId(value: unknown, name: string): string {
  const id = requireText(value, name);
  if (!isId(id)) throw new UsageError(`${name} must be an id (a UUID), got "${id}"`);
  return id;
}

export function idList(value: unknown, name: string): string[] {
  const items = (Array.isArray(value) ? value : [value]).flatMap((v) => String(v ?? "").split(",")).filter(Boolean);
  if (items.length === 0) throw new UsageError(`${name} is required`);
  return items.map((v) => requireId(v, name));
}
