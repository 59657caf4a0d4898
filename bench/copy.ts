/**
 * `COPY ... FROM STDIN` through `pg` without another package: pg runs any "submittable" object
 * as a query, and the COPY sub-protocol is three messages (CopyInResponse from the server, then
 * CopyData chunks and CopyDone from us). The ingest benchmark's baseline uses it.
 */
import type { Client } from "pg";

interface CopyConnection {
  query(text: string): void;
  sendCopyFromChunk(chunk: Buffer): void;
  endCopyFrom(): void;
}

class CopyFrom {
  readonly done: Promise<number>;
  private resolve!: (rows: number) => void;
  private reject!: (err: Error) => void;
  private rows = 0;
  private failed: Error | undefined;

  constructor(
    private readonly sql: string,
    private readonly chunks: Iterable<Buffer>,
  ) {
    this.done = new Promise((res, rej) => {
      this.resolve = res;
      this.reject = rej;
    });
  }

  submit(connection: CopyConnection): void {
    connection.query(this.sql);
  }

  handleCopyInResponse(connection: CopyConnection): void {
    for (const chunk of this.chunks) connection.sendCopyFromChunk(chunk);
    connection.endCopyFrom();
  }

  handleCommandComplete(msg: { text?: string }): void {
    this.rows = Number(/(\d+)$/.exec(msg.text ?? "")?.[1] ?? 0);
  }

  handleError(err: Error): void {
    this.failed = err;
  }

  handleReadyForQuery(): void {
    if (this.failed) this.reject(this.failed);
    else this.resolve(this.rows);
  }
}

/** Streams `chunks` (text-format COPY rows) into the table; resolves with the rows copied. */
export function copyFrom(client: Client, sql: string, chunks: Iterable<Buffer>): Promise<number> {
  const copy = new CopyFrom(sql, chunks);
  (client as unknown as { query(q: unknown): unknown }).query(copy);
  return copy.done;
}
