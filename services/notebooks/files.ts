/**
 * The notebook files under NOTEBOOKS_DIR: a folder per user, nbformat 4 JSON. Every path is made
 * by names.ts's `pathInFolder`, so nothing here can reach outside a user's folder.
 */
import { randomBytes } from "node:crypto";
import { constants as fsConstants } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { executedName, pathInFolder, userFolder } from "./names";

export interface NotebookFile {
  cells: Cell[];
  metadata: Record<string, unknown>;
  nbformat: 4;
  nbformat_minor: number;
}

export interface Cell {
  cell_type: "code" | "markdown" | "raw";
  id: string;
  metadata: Record<string, unknown>;
  source: string | string[];
  outputs?: unknown[];
  execution_count?: number | null;
  attachments?: Record<string, unknown>;
}

/** What a caller sends as a cell; the rest is filled in as Jupyter would. */
export interface CellInput {
  cell_type: Cell["cell_type"];
  source: string | string[];
  id?: string;
  metadata?: Record<string, unknown>;
  outputs?: unknown[];
  execution_count?: number | null;
  attachments?: Record<string, unknown>;
}

export const DEFAULT_METADATA = {
  kernelspec: { display_name: "Python 3 (ipykernel)", language: "python", name: "python3" },
  language_info: { name: "python" },
};

/** A notebook as nbformat 4.5 wants it: every cell has an id, code cells have outputs and a count. */
export function notebookOf(cells: CellInput[], metadata?: Record<string, unknown>): NotebookFile {
  return {
    cells: cells.map((c): Cell => {
      const base = {
        cell_type: c.cell_type,
        id: c.id ?? randomBytes(4).toString("hex"),
        metadata: c.metadata ?? {},
        source: c.source,
        ...(c.attachments && c.cell_type !== "code" ? { attachments: c.attachments } : {}),
      };
      return c.cell_type === "code" ? { ...base, outputs: c.outputs ?? [], execution_count: c.execution_count ?? null } : base;
    }),
    metadata: metadata ?? DEFAULT_METADATA,
    nbformat: 4,
    nbformat_minor: 5,
  };
}

export class NotebookFiles {
  constructor(readonly root: string) {}

  source(owner: string, name: string): string {
    return pathInFolder(this.root, owner, name);
  }

  executed(owner: string, name: string): string {
    return pathInFolder(this.root, owner, executedName(name));
  }

  /**
   * The user's folder, closed to every other uid (0700): a run executes as its owner's uid, which
   * alone is given the folder (sandbox.ts), and must not read another owner's. The root of the
   * folders may be passed through (0711), not listed.
   */
  async ensureFolder(owner: string): Promise<string> {
    const folder = path.join(this.root, userFolder(owner));
    await fs.mkdir(folder, { recursive: true, mode: 0o700 });
    await fs.chmod(folder, 0o700);
    await fs.chmod(this.root, 0o711);
    return folder;
  }

  /** The names present in the user's folder (Jupyter counts Untitled names against the disk). */
  async namesOnDisk(owner: string): Promise<Set<string>> {
    return new Set(await fs.readdir(await this.ensureFolder(owner)));
  }

  /** Writes a new empty notebook; fails with EEXIST rather than overwrite a file. */
  async createEmpty(owner: string, name: string): Promise<void> {
    await fs.writeFile(this.source(owner, name), JSON.stringify(notebookOf([]), null, 1) + "\n", { flag: "wx" });
  }

  async write(owner: string, name: string, nb: NotebookFile): Promise<void> {
    const target = this.source(owner, name);
    const tmp = `${target}.${randomBytes(8).toString("hex")}.tmp`;
    // Exclusive: a link a run planted under that name is never followed (the folder is the run's to write).
    await fs.writeFile(tmp, JSON.stringify(nb, null, 1) + "\n", { flag: "wx" });
    await fs.rename(tmp, target);
  }

  /**
   * A notebook file as JSON. The owner's runs write this folder, so a name may be a link a
   * notebook planted to another user's file or the service's: never followed (O_NOFOLLOW), and
   * only a regular file is read.
   */
  async read(file: string): Promise<unknown> {
    const handle = await fs.open(file, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
    try {
      if (!(await handle.stat()).isFile()) throw Object.assign(new Error("not a regular file"), { code: "ENOENT" });
      return JSON.parse(await handle.readFile("utf8")) as unknown;
    } finally {
      await handle.close();
    }
  }

  /**
   * Moves a notebook (and its executed copy) to a new name. link + unlink, not rename: rename
   * would silently replace a file that already has the new name.
   */
  async rename(owner: string, from: string, to: string): Promise<void> {
    await moveNoClobber(this.source(owner, from), this.source(owner, to), false);
    await moveNoClobber(this.executed(owner, from), this.executed(owner, to), true);
  }

  /** A removed user's whole folder: its notebooks, executed copies and whatever its runs wrote. */
  async removeFolder(owner: string): Promise<void> {
    await fs.rm(path.join(this.root, userFolder(owner)), { recursive: true, force: true });
  }

  async remove(owner: string, name: string): Promise<void> {
    await unlinkIfPresent(this.source(owner, name));
    await unlinkIfPresent(this.executed(owner, name));
  }
}

export async function unlinkIfPresent(file: string): Promise<void> {
  try {
    await fs.unlink(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
}

async function moveNoClobber(from: string, to: string, optional: boolean): Promise<void> {
  try {
    await fs.link(from, to);
  } catch (err) {
    if (optional && (err as NodeJS.ErrnoException).code === "ENOENT") return;
    throw err;
  }
  await fs.unlink(from);
}

/** A file system error as a short detail for the client: its code, never a server path. */
export function fsDetail(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  const known: Record<string, string> = {
    ENOENT: "The notebook file does not exist",
    EEXIST: "A file with that name already exists",
    EACCES: "Permission denied",
    EPERM: "Operation not permitted",
    ENOSPC: "No space left on the device",
    ENAMETOOLONG: "The name is too long",
    // A link a run planted in its folder (read refuses to follow one): as if no file were there.
    ELOOP: "The notebook file does not exist",
  };
  return (e?.code && known[e.code]) || "File system error";
}
