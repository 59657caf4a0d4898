/**
 * The export's CSV (RFC 4180): a header `timestamp,<tag_name>…` and one row per timestamp, the
 * monitor's tags as columns in their order, ISO 8601 UTC times. Rows come from the cursor in
 * chunks ordered by time; a timestamp split across two chunks is held until its row is complete,
 * so memory holds one chunk whatever the range.
 */
import type { ExportRow } from "./history.repo";

export interface CsvTag {
  tag_id: string;
  tag_name: string;
}

/** A field quoted when it holds a comma, a quote or a line break (a tag name may). */
export const csvField = (s: string): string => (/[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);

/**
 * A text cell a spreadsheet would not run as a formula (docs/security.md): one that starts with `=`,
 * `+`, `-`, `@`, a tab or a carriage return is prefixed with `'`. Only text goes through here:
 * readings are written as numbers, a negative one too.
 */
export const csvText = (s: string): string => csvField(/^[=+\-@\t\r]/.test(s) ? `'${s}` : s);

export const csvHeader = (tags: CsvTag[]): string => `${["timestamp", ...tags.map((t) => t.tag_name)].map(csvText).join(",")}\n`;

/** The CSV text of the rows, chunk by chunk; readings of tags the monitor no longer has are left out. */
export async function* csvRows(chunks: AsyncIterable<ExportRow[]>, tags: CsvTag[]): AsyncGenerator<Buffer> {
  const column = new Map(tags.map((t, i) => [t.tag_id, i]));
  let ts: number | null = null;
  let values: (number | undefined)[] = [];
  const line = () => `${new Date(ts as number).toISOString()},${values.map((v) => (v === undefined ? "" : String(v))).join(",")}\n`;
  for await (const rows of chunks) {
    let out = "";
    for (const r of rows) {
      const i = column.get(r.tag_id);
      if (i === undefined) continue;
      if (r.ts !== ts) {
        if (ts !== null) out += line();
        ts = r.ts;
        values = new Array<number | undefined>(tags.length).fill(undefined);
      }
      values[i] = r.value; // the same tag twice at one time (a batch sent again): the later one
    }
    if (out) yield Buffer.from(out);
  }
  if (ts !== null) yield Buffer.from(line());
}
